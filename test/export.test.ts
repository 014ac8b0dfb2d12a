import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runStacks, startTestServer, tempDir, type TestServer } from './helpers/server.ts';
import { CORPUS_BUNDLES } from './helpers/fixtures.ts';
import { addIndexedLibrary, call } from './helpers/teams.ts';
import { QUESTIONS } from './eval/questions.ts';

const BUNDLES = ['fastify', 'fastify-v4.29.1', 'pino'];

async function importFile(s: TestServer, file: string): Promise<void> {
  const r = await s.api('/api/import-libraries', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new Uint8Array(fs.readFileSync(file)),
  });
  assert.equal(r.status, 200, await r.clone().text());
  await s.services.jobs.idle();
}

/** The snippets an answer is made of, in order (their source URLs). */
async function topAnswers(s: TestServer, q: { libraryId: string; question: string }): Promise<string[]> {
  const ids = (body: { codeSnippets: { codeId: string }[]; infoSnippets: { pageId?: string }[] }) => [
    ...body.codeSnippets.map((c) => c.codeId),
    ...body.infoSnippets.map((i) => i.pageId ?? ''),
  ];
  const context = await s.api(`/api/v2/context?libraryId=${encodeURIComponent(q.libraryId)}&query=${encodeURIComponent(q.question)}&type=json`);
  const search = await s.api(`/api/v3/search?library=${encodeURIComponent(q.libraryId)}&query=${encodeURIComponent(q.question)}&type=json`);
  assert.equal(context.status, 200);
  assert.equal(search.status, 200);
  return [...ids(await context.json()).slice(0, 8), '|', ...ids(await search.json()).slice(0, 8)];
}

test('export -> import on another instance gives the same answers; what the caller may not read is not found; exports are audited', async () => {
  const a = await startTestServer();
  const b = await startTestServer();
  try {
    for (const name of BUNDLES) await importFile(a, path.join(CORPUS_BUNDLES, `${name}.json`));
    const questions = [
      ...QUESTIONS.filter((q) => q.libraryId === '/fastify/fastify').slice(0, 4),
      ...QUESTIONS.filter((q) => q.libraryId === '/pinojs/pino').slice(0, 4),
      { libraryId: '/fastify/fastify/v4.29.1', question: 'How do I register a plugin?' },
    ];

    const res = await a.api('/api/export?library=/fastify/fastify&library=/pinojs/pino');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="?stacks-export.json"?$/);
    const bundle = (await res.json()) as { libraries: { project: string; version?: string; codeSnippets: unknown[]; infoSnippets: unknown[] }[] };
    assert.deepEqual(
      bundle.libraries.map((l) => `${l.project}@${l.version ?? ''}`),
      ['/fastify/fastify@', '/fastify/fastify@v4.29.1', '/pinojs/pino@'],
      'every served version of each library',
    );
    const served = a.services.store.libraries.allCurrentVersions();
    for (const l of bundle.libraries) {
      const v = served.find((x) => x.libraryId === l.project && x.tag === (l.version ?? ''))!;
      assert.equal(l.codeSnippets.length + l.infoSnippets.length, v.totalSnippets, `${l.project} ${l.version ?? ''}: every snippet`);
    }

    const file = path.join(tempDir('stacks-export-'), 'export.json');
    fs.writeFileSync(file, JSON.stringify(bundle));
    await importFile(b, file);
    for (const q of questions) assert.deepEqual(await topAnswers(b, q), await topAnswers(a, q), `same answers to "${q.question}" (${q.libraryId})`);

    // One version by its tag; the second export of the same bytes is identical.
    const one = (await (await a.api('/api/export?library=/fastify/fastify/v4.29.1')).json()) as { libraries: { version?: string }[] };
    assert.deepEqual(
      one.libraries.map((l) => l.version),
      ['v4.29.1'],
    );
    const again = (await (await b.api('/api/export?library=/pinojs/pino')).json()) as { libraries: unknown[] };
    assert.deepEqual(again.libraries, bundle.libraries.slice(2), 'the imported copy exports the same bundle');

    // The CLI writes the same bundle (as the operator, beside the running server).
    const cliFile = path.join(path.dirname(file), 'cli.json');
    const cli = await runStacks(['export', '/pinojs/pino', '--data-dir', a.dataDir, '--out', cliFile]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stderr, /^Exported 1 library version\(s\), \d+ snippets, to /);
    assert.deepEqual(JSON.parse(fs.readFileSync(cliFile, 'utf8')).libraries, bundle.libraries.slice(2));

    // Visibility: another teamspace's private library answers exactly like a missing one.
    await addIndexedLibrary(a, { id: '/acme/private', teamspaceId: a.services.teams.defaultTeamspaceId(), visibility: 'teamspace' }, 'secret');
    const blue = (await a.services.teams.teamspaces.create({ name: 'blue', owner: 'bea' })).key.key;
    const hidden = await call(a, 'GET', '/api/export?library=/acme/private', undefined, blue);
    const missing = await call(a, 'GET', '/api/export?library=/acme/nothing', undefined, blue);
    assert.equal(hidden.status, 404);
    assert.deepEqual(hidden.body, { error: 'library_not_found', message: 'No library /acme/private.' });
    assert.deepEqual(missing.body, { error: 'library_not_found', message: 'No library /acme/nothing.' });
    assert.equal((await call(a, 'GET', '/api/export?library=/acme/private')).status, 200, 'its own teamspace exports it');
    assert.equal((await call(a, 'GET', '/api/export?library=/pinojs/pino', undefined, null)).status, 401, 'a key is required');
    assert.equal((await call(a, 'GET', '/api/export?library=not-an-id')).status, 400);

    const audit = await call<{ entries: { action: string; target: string; outcome: string }[] }>(a, 'GET', '/api/audit?action=exportLibraries');
    assert.ok(
      audit.body.entries.some((e) => e.target === '/fastify/fastify, /pinojs/pino' && e.outcome === 'ok'),
      JSON.stringify(audit.body),
    );
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
