/**
 * Scores the evaluation questions through the real HTTP endpoints, as a client sees them: a server
 * on an ephemeral port with a temporary data dir, the corpus bundles imported through
 * POST /api/import-libraries (and whatever background jobs follow), then every question asked of
 * GET /api/v3/search and GET /api/v2/context, in both `type=txt` (snippets in rank order) and
 * `type=json` (code snippets first, then prose, as the official SDK flattens them) order.
 */
import fs from 'node:fs';
import { REAL_MODEL, startTestServer, type TestServer } from '../helpers/server.ts';
import { bundlePath } from './bundles.ts';
import { firstHit, summarize, type EvalItem, type Kind, type Metrics } from './question-set.ts';
import { mrrInterval } from './compare.ts';
import { TEXT_SEPARATOR } from '../../server/search/render.ts';

export const ALL_BUNDLES = ['fastify', 'fastify-v4.29.1', 'fastify-v3.29.5', 'vite', 'hono', 'pino', 'zod', 'vitest', 'tanstack-query', 'nestjs', 'valibot'];

export type Endpoint = 'search' | 'context';
export type Order = 'txt' | 'json';

/** What one request answered: the source URLs in order, or the error code. */
export interface Answer {
  status: number;
  error: string | null;
  /** The URLs of each ranked place: a JSON snippet's one, or a text block's (its hit's, then its context's). */
  places: string[][];
}

export interface Asked {
  q: EvalItem;
  answers: Partial<Record<`${Endpoint}:${Order}`, Answer>>;
}

/** Starts the server and imports the bundles over HTTP; resolves when every job has finished. */
export async function startEvalServer(bundles: string[] = ALL_BUNDLES, options: { cachedVectors?: boolean } = {}): Promise<TestServer> {
  // Hundreds of anonymous questions a minute: the per-key limit would refuse most of them.
  // cachedVectors: the corpus's snippets take the model's vectors from its cache (REAL_MODEL) instead
  // of the embed job computing them (minutes of CPU that a loaded machine may not finish in time).
  const s = await startTestServer({
    config: {
      rateLimitPerMinute: 0,
      learnRanking: true,
      embedProvider: (process.env.STACKS_EMBED_PROVIDER ?? 'model') as 'model' | 'builtin',
      ...(options.cachedVectors ? { embedCache: REAL_MODEL.embedCache } : {}),
    },
  });
  try {
    for (const name of bundles) {
      const form = new FormData();
      form.append('bundleFile', new Blob([new Uint8Array(fs.readFileSync(bundlePath(name)))], { type: 'application/json' }), `${name}.json`);
      const res = await s.api('/api/import-libraries', { method: 'POST', body: form });
      if (!res.ok) throw new Error(`import of ${name}: ${res.status} ${await res.text()}`);
    }
    await waitForJobs(s);
  } catch (err) {
    await s.close();
    throw err;
  }
  return s;
}

/** Waits until no job is queued or running (imports and whatever they start). */
export async function waitForJobs(s: TestServer, timeoutMs = 600_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await s.api('/api/jobs?limit=1000');
    const { jobs } = (await res.json()) as { jobs: { id: number; kind: string; state: string; error: string | null }[] };
    const failed = jobs.filter((j) => j.state === 'failed');
    if (failed.length) throw new Error(`jobs failed: ${failed.map((j) => `${j.kind} #${j.id}: ${j.error}`).join('; ')}`);
    if (!jobs.some((j) => j.state === 'queued' || j.state === 'running')) return;
    if (Date.now() > end) throw new Error('jobs did not finish in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The URLs of each block of a text answer, in order: its `Source:` line, then its `Context:` lines. */
export function textBlocks(body: string): string[][] {
  return body
    .split(TEXT_SEPARATOR)
    .map((block) => [...block.matchAll(/^(?:Source|Context): (\S+)$/gm)].map((m) => m[1]!))
    .filter((urls) => urls.length > 0);
}

/** Source URLs of a text answer, in order (the `Source:` line of each block). */
export function textSources(body: string): string[] {
  return textBlocks(body).map((urls) => urls[0]!);
}

/** Source URLs of a JSON answer in the order the official SDK lists them: code snippets, then prose. */
export function jsonSources(body: { codeSnippets?: { codeId: string }[]; infoSnippets?: { pageId: string }[] }): string[] {
  return [...(body.codeSnippets ?? []).map((c) => c.codeId), ...(body.infoSnippets ?? []).map((i) => i.pageId)];
}

/** The request that asks a question of an endpoint, as a client would; null when it cannot be asked there (context without a library). */
export function requestPath(endpoint: Endpoint, order: Order, q: EvalItem): string | null {
  const params = new URLSearchParams({ query: q.query, type: order });
  if (endpoint === 'search') {
    for (const l of q.library) params.append('library', l);
    if (q.version) params.set('version', q.version);
  } else {
    if (!q.libraryId) return null;
    params.set('libraryId', q.libraryId);
    // /api/v2/context takes up to 500 characters: a client cuts a long paste there.
    params.set('query', q.query.slice(0, 500));
  }
  return `/api/${endpoint === 'search' ? 'v3/search' : 'v2/context'}?${params}`;
}

async function ask(s: Pick<TestServer, 'api'>, endpoint: Endpoint, order: Order, q: EvalItem): Promise<Answer | null> {
  const request = requestPath(endpoint, order, q);
  if (request === null) return null;
  const res = await s.api(request, { auth: null });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { error?: string };
    return { status: res.status, error: body.error ?? 'unknown', places: [] };
  }
  const places = order === 'txt' ? textBlocks(await res.text()) : jsonSources((await res.json()) as never).map((u) => [u]);
  return { status: res.status, error: null, places };
}

/** Asks every question of both endpoints in both orders, a few at a time. */
export async function askAll(s: Pick<TestServer, 'api'>, questions: EvalItem[], concurrency = 4): Promise<Asked[]> {
  const out: Asked[] = questions.map((q) => ({ q, answers: {} }));
  let next = 0;
  const work = async () => {
    while (next < out.length) {
      const a = out[next++]!;
      for (const endpoint of ['search', 'context'] as const) {
        for (const order of ['txt', 'json'] as const) {
          const r = await ask(s, endpoint, order, a.q);
          if (r) a.answers[`${endpoint}:${order}`] = r;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, work));
  return out;
}

/** Rank of the first relevant snippet of one answer (null: none in the first 10, or an error). */
export function rankOf(a: Asked, key: `${Endpoint}:${Order}`): number | null {
  const ans = a.answers[key];
  if (!ans || ans.error) return null;
  return firstHit(ans.places.slice(0, 10), a.q.expect);
}

export interface Report {
  /** Per endpoint and order: metrics by kind, on-topic overall (dev / blind / all). */
  tables: Record<`${Endpoint}:${Order}`, Record<string, Metrics>>;
  /** Library-less off-topic questions answered 404 no_documentation_found by /api/v3/search (also per split). */
  offtopic: { n: number; refused: number; snippets: number[]; dev: [number, number]; blind: [number, number]; holdouts: Record<string, [number, number]> };
  /** On-topic /api/v3/search questions wrongly answered "nothing found" (ids of the dev split only; blind ones are counted). */
  falseRefusals: { n: number; refused: number; ids: string[]; blind: number };
  /** Version questions whose first /api/v3/search snippet comes from the expected version. */
  versions: { n: number; right: number };
  /** MRR@10 of /api/v3/search in text order with its 95% bootstrap interval: dev, blind and each held-out set. */
  intervals: Record<string, { n: number; mrr: number; low: number; high: number }>;
}

const KEYS = ['search:txt', 'search:json', 'context:txt', 'context:json'] as const;

/** The held-out questions by the set they come from (`fresh`, `nov26`), in file order. */
function holdouts(asked: Asked[]): Map<string, Asked[]> {
  const out = new Map<string, Asked[]>();
  for (const a of asked) if (a.q.holdout) out.set(a.q.holdout, [...(out.get(a.q.holdout) ?? []), a]);
  return out;
}

export function report(asked: Asked[]): Report {
  const onTopic = asked.filter((a) => a.q.kind !== 'offtopic');
  const tables = {} as Report['tables'];
  for (const key of KEYS) {
    const rows: Record<string, Metrics> = {};
    const answered = onTopic.filter((a) => a.answers[key] !== undefined);
    // Each held-out set has rows of its own, so the older rows keep meaning what they meant.
    const usable = answered.filter((a) => a.q.set !== 'holdout');
    const groups: [string, Asked[]][] = [
      ['all', usable],
      ['dev', usable.filter((a) => a.q.split === 'dev')],
      ['blind', usable.filter((a) => a.q.split === 'blind')],
      ['written (dev+blind)', usable.filter((a) => a.q.set === 'written')],
      ['legacy', usable.filter((a) => a.q.set === 'legacy')],
    ];
    for (const kind of new Set(usable.map((a) => a.q.kind))) groups.push([`kind ${kind}`, usable.filter((a) => a.q.kind === kind)]);
    for (const kind of new Set(usable.map((a) => a.q.kind))) groups.push([`blind ${kind}`, usable.filter((a) => a.q.kind === kind && a.q.split === 'blind')]);
    for (const [name, held] of holdouts(answered)) {
      groups.push([`${name} (blind)`, held]);
      for (const kind of new Set(held.map((a) => a.q.kind))) groups.push([`${name} ${kind}`, held.filter((a) => a.q.kind === kind)]);
    }
    for (const [name, group] of groups) rows[name] = summarize(group.map((a) => rankOf(a, key)));
    tables[key] = rows;
  }
  const off = asked.filter((a) => a.q.kind === 'offtopic' && a.q.set !== 'holdout');
  const refusedCount = (group: Asked[]) => group.filter((a) => a.answers['search:json']!.error === 'no_documentation_found').length;
  const offAnswers = off.map((a) => a.answers['search:json']!);
  const refusedOn = onTopic.filter((a) => a.answers['search:json']?.error === 'no_documentation_found');
  // (on-topic refusals count the fresh set too: a wrong refusal is never acceptable.)
  const versionQs = onTopic.filter((a) => a.q.kind === 'version');
  const versionPrefix = (url: string) => url.replace(/^(https:\/\/github\.com\/[^/]+\/[^/]+\/blob\/[^/]+\/).*$/, '$1').replace(/^(https:\/\/[^/]+\/).*$/, '$1');
  return {
    tables,
    offtopic: {
      n: off.length,
      refused: offAnswers.filter((a) => a.error === 'no_documentation_found').length,
      snippets: offAnswers.map((a) => a.places.length),
      ...(Object.fromEntries(
        (['dev', 'blind'] as const).map((split) => {
          const group = off.filter((a) => a.q.split === split);
          return [split, [group.filter((a) => a.answers['search:json']!.error === 'no_documentation_found').length, group.length]];
        }),
      ) as { dev: [number, number]; blind: [number, number] }),
      holdouts: Object.fromEntries(
        [...holdouts(asked.filter((a) => a.q.kind === 'offtopic'))].map(([name, group]): [string, [number, number]] => [
          name,
          [refusedCount(group), group.length],
        ]),
      ),
    },
    falseRefusals: {
      n: onTopic.length,
      refused: refusedOn.length,
      ids: refusedOn.filter((a) => a.q.split === 'dev').map((a) => a.q.id),
      blind: refusedOn.filter((a) => a.q.split === 'blind').length,
    },
    intervals: Object.fromEntries(
      [
        ['dev', onTopic.filter((a) => a.q.set !== 'holdout' && a.q.split === 'dev')] as const,
        ['blind', onTopic.filter((a) => a.q.set !== 'holdout' && a.q.split === 'blind')] as const,
        ...holdouts(onTopic),
      ].map(([name, group]) => [name, mrrInterval(group.map((a) => rankOf(a, 'search:txt')))]),
    ),
    versions: {
      n: versionQs.length,
      right: versionQs.filter((a) => {
        const first = a.answers['search:json']?.places[0]?.[0];
        return first !== undefined && a.q.expect.some((e) => versionPrefix(e) === versionPrefix(first));
      }).length,
    },
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);

export function formatReport(r: Report, opts: { kinds?: boolean } = {}): string {
  const lines: string[] = [];
  const names = Object.keys(r.tables['search:txt']).filter((n) => opts.kinds !== false || (!n.startsWith('kind') && !n.startsWith('blind ')));
  lines.push(`${'set'.padEnd(24)} ${KEYS.map((k) => k.padEnd(24)).join(' ')}`);
  lines.push(`${''.padEnd(24)} ${KEYS.map(() => 'hit@1   hit@5  MRR@10'.padEnd(24)).join(' ')}`);
  for (const name of names) {
    const cells = KEYS.map((k) => {
      const m = r.tables[k][name];
      return m && m.n ? `${pct(m.hit1)}${pct(m.hit5)} ${m.mrr10.toFixed(3)}`.padEnd(24) : ''.padEnd(24);
    });
    const n = r.tables['search:txt'][name]?.n ?? 0;
    lines.push(`${`${name} (${n})`.padEnd(24)} ${cells.join(' ')}`);
  }
  lines.push('');
  lines.push(
    `off-topic, library-less /api/v3/search: ${r.offtopic.refused} of ${r.offtopic.n} answered 404 no_documentation_found ` +
      `(dev ${r.offtopic.dev[0]} of ${r.offtopic.dev[1]}, blind ${r.offtopic.blind[0]} of ${r.offtopic.blind[1]}` +
      Object.entries(r.offtopic.holdouts)
        .map(([name, [refused, n]]) => `, ${name} ${refused} of ${n}`)
        .join('') +
      `; snippets returned otherwise: ${r.offtopic.snippets.filter((n) => n > 0).join(', ') || 'none'})`,
  );
  const refusedIds = [...r.falseRefusals.ids, ...(r.falseRefusals.blind ? [`${r.falseRefusals.blind} blind`] : [])];
  lines.push(
    `on-topic /api/v3/search answered "nothing found": ${r.falseRefusals.refused} of ${r.falseRefusals.n}${refusedIds.length ? ` (${refusedIds.join(', ')})` : ''}`,
  );
  lines.push(`version questions served from the expected version: ${r.versions.right} of ${r.versions.n}`);
  lines.push(
    `/api/v3/search MRR@10 (text order) with 95% bootstrap intervals over the questions: ` +
      Object.entries(r.intervals)
        .map(([name, i]) => `${name} ${i.mrr.toFixed(3)} [${i.low.toFixed(3)}, ${i.high.toFixed(3)}] (${i.n})`)
        .join(', '),
  );
  return lines.join('\n');
}

/** Off-topic questions of the dev split that were answered anyway (the blind split's are never listed). */
export function devOfftopicAnswered(asked: Asked[]): string[] {
  return asked
    .filter((a) => a.q.split === 'dev' && a.q.kind === 'offtopic' && a.answers['search:json']?.error !== 'no_documentation_found')
    .map(
      (a) =>
        `answered off-topic ${a.q.id}: ${a.q.query.slice(0, 160).replace(/\n/g, ' | ')}\n    got ${a.answers['search:txt']?.places
          .slice(0, 3)
          .map((p) => p[0])
          .join('\n        ')}`,
    );
}

/** Per-question misses of the dev split (the blind split's questions are never listed). */
export function devMisses(asked: Asked[], key: `${Endpoint}:${Order}` = 'search:txt', kind?: Kind): string[] {
  const out: string[] = [];
  for (const a of asked) {
    if (a.q.split !== 'dev' || a.q.kind === 'offtopic' || (kind && a.q.kind !== kind)) continue;
    const r = rankOf(a, key);
    if (r !== null && r <= 5) continue;
    const ans = a.answers[key];
    out.push(
      `miss ${a.q.id} [${a.q.kind}] ${a.q.library.join(',') || '-'}: ${a.q.query.slice(0, 160).replace(/\n/g, ' | ')}\n    rank ${r ?? '-'}; got ${
        ans?.error ??
        ans?.places
          .slice(0, 5)
          .map((p) => p[0])
          .join('\n        ')
      }`,
    );
  }
  return out;
}
