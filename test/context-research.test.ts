import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { listen } from './helpers/fixtures.ts';
import { bundlePath, loadBundleFile } from './eval/bundles.ts';
import type { ContextResponse } from '../server/search/answer-types.ts';
import { isoWeek } from '../lib/week.ts';

const P = '/pinojs/pino';
const QUESTION = 'How do I redact passwords from log lines, and how do child loggers add bindings?';

async function withPino(config: Record<string, unknown>): Promise<TestServer> {
  const s = await startTestServer({ config });
  try {
    await loadBundleFile(s.services.writer, bundlePath('pino'));
  } catch (err) {
    await s.close();
    throw err;
  }
  return s;
}

function research(s: TestServer, key: string | null, type = 'json', query = QUESTION): Promise<Response> {
  return s.api(`/api/v2/context?${new URLSearchParams({ libraryId: P, query, researchMode: 'true', type })}`, { auth: key });
}

async function pinoUrls(s: TestServer): Promise<Set<string>> {
  const v = s.services.store.libraries.currentVersion(P, '')!;
  return new Set((await s.services.store.snippets.list(v.id, 10_000)).map((x) => x.sourceId));
}

/** The `[n] url` lines after "Sources:" and the [n] markers used before them. */
function citations(content: string): { sources: Map<number, string>; cited: Set<number> } {
  const [body, list] = content.split('\nSources:\n');
  assert.ok(list, 'the answer ends with a Sources block');
  const sources = new Map<number, string>();
  for (const line of list!.trim().split('\n')) {
    const m = /^\[(\d+)\] (\S+)$/.exec(line);
    assert.ok(m, `source line: ${line}`);
    sources.set(Number(m[1]), m[2]!);
  }
  const cited = new Set([...body!.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])));
  return { sources, cited };
}

test('research mode without a chat model: one extractive snippet with citations, a weekly quota per member', async () => {
  const s = await withPino({ researchWeeklyQuota: 2 });
  try {
    assert.equal((await research(s, null)).status, 401);
    assert.equal(((await (await research(s, null)).json()) as { error: string }).error, 'invalid_api_key');

    const res = await research(s, s.key);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-stacks-research-used'), '1');
    assert.equal(res.headers.get('x-stacks-research-limit'), '2');
    const json = (await res.json()) as ContextResponse;
    assert.deepEqual(json.codeSnippets, []);
    assert.equal(json.infoSnippets.length, 1);
    const answer = json.infoSnippets[0]!;
    assert.match(answer.breadcrumb ?? '', /^Research: /);
    assert.ok(answer.contentTokens > 0);
    const { sources, cited } = citations(answer.content);
    assert.ok(sources.size >= 3, 'several sources');
    const known = await pinoUrls(s);
    for (const url of sources.values()) assert.ok(known.has(url), `cited URL is a real pino snippet: ${url}`);
    assert.equal(answer.pageId, sources.get(1));
    assert.ok(cited.size >= 2, 'the body cites more than one source');
    for (const n of cited) assert.ok(sources.has(n), `[${n}] has a source line`);
    // Both halves of the question are covered (multi-query retrieval).
    assert.match(answer.content, /redact/i);
    assert.match(answer.content, /child/i);

    const text = await (await research(s, s.key, 'txt')).text();
    assert.ok(text.startsWith(`### Research: ${QUESTION}\n\nSource: https://`), text.slice(0, 200));
    assert.match(text, /\nSources:\n\[1\] https:\/\//);

    const over = await research(s, s.key);
    assert.equal(over.status, 429);
    assert.equal(((await over.json()) as { error: string }).error, 'research_quota_exceeded');
    const retry = Number(over.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry > 0 && retry <= 7 * 86400, `Retry-After ${retry}`);

    // The quota is per member: another member still has theirs. Plain requests are not limited by it.
    const other = await s.services.keys.create({ name: 'other', memberName: 'other-member', role: 'member' });
    assert.equal((await research(s, other.key)).status, 200);
    assert.equal((await s.api(`/api/v2/context?${new URLSearchParams({ libraryId: P, query: 'redact' })}`)).status, 200);
    // Errors before the pipeline do not use up quota.
    const used = await s.services.store.research.used(other.memberId, isoWeek(new Date()));
    assert.equal(
      (await s.api(`/api/v2/context?${new URLSearchParams({ libraryId: '/no/such', query: 'x', researchMode: 'true' })}`, { auth: other.key })).status,
      404,
    );
    assert.equal(await s.services.store.research.used(other.memberId, isoWeek(new Date())), used);
  } finally {
    await s.close();
  }
});

test('research mode with a chat endpoint: the model answers from the retrieved snippets, with a fallback', async (t) => {
  const seen: { path: string; body: { model: string; messages: { role: string; content: string }[] }; auth: string | undefined }[] = [];
  let fail = false;
  const fake = await listen(
    http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', body: JSON.parse(body), auth: req.headers.authorization });
        if (fail) {
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            choices: [{ message: { role: 'assistant', content: 'Use the `redact` option with paths [1]; call logger.child() for bindings [2].' } }],
          }),
        );
      });
    }),
  );
  t.after(() => fake.close());
  const s = await withPino({ researchWeeklyQuota: 10, chatUrl: fake.url, chatModel: 'tiny-local', chatApiKey: 'sk-test' });
  try {
    const res = await research(s, s.key);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-stacks-search-status'), null);
    const json = (await res.json()) as ContextResponse;
    const content = json.infoSnippets[0]!.content;
    assert.ok(content.startsWith('Use the `redact` option with paths [1]; call logger.child() for bindings [2].\n\nSources:\n[1] https://'), content);
    const { sources } = citations(content);

    assert.equal(seen.length, 1);
    const call = seen[0]!;
    assert.equal(call.path, '/v1/chat/completions');
    assert.equal(call.auth, 'Bearer sk-test');
    assert.equal(call.body.model, 'tiny-local');
    const system = call.body.messages.find((m) => m.role === 'system')!.content;
    assert.match(system, /ONLY the numbered documentation snippets/);
    const user = call.body.messages.find((m) => m.role === 'user')!.content;
    assert.ok(user.includes(`Question: ${QUESTION}`));
    // The model saw exactly the cited sources, numbered the same way.
    for (const [n, url] of sources) assert.ok(user.includes(`[${n}] ### `) && user.includes(`Source: ${url}`), `source ${n} sent to the model`);

    fail = true;
    const fallback = await research(s, s.key);
    assert.equal(fallback.status, 200);
    assert.equal(fallback.headers.get('x-stacks-search-status'), 'partial');
    assert.equal(fallback.headers.get('x-stacks-search-reason'), 'partialSearchFailure');
    const fb = (await fallback.json()) as ContextResponse;
    assert.match(fb.infoSnippets[0]!.content, /^Answer composed from the documentation for: /);
    citations(fb.infoSnippets[0]!.content);
  } finally {
    await s.close();
  }
});
