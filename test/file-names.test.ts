import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeQuery } from '../server/search/query.ts';
import type { TestServer } from './helpers/server.ts';
import { serverWithBundles } from './eval/bundles.ts';
import { REAL_MODEL } from './helpers/server.ts';
import { textSources } from './eval/http.ts';

test("a file's name in a question keeps its parts but is neither an identifier nor one joined term", () => {
  for (const [q, parts] of [
    ['in vite.config.ts how do I change the port?', ['vite', 'config', 'ts']],
    ['nest-cli.json assets', ['nest', 'cli', 'json']],
    ['tsconfig.json for hono/jsx', ['tsconfig', 'json']],
  ] as const) {
    const a = analyzeQuery(q);
    for (const p of parts) assert.ok(a.terms.includes(p), `${q}: ${p}`);
    assert.ok(!a.terms.some((t) => /^(viteconfig|viteconfigts|configts|nestclijson|clijson|tsconfigjson)$/.test(t)), `${q}: ${a.terms.join(' ')}`);
    assert.deepEqual(
      a.identifiers.filter((i) => /\.(ts|json)$/.test(i)),
      [],
      q,
    );
    assert.equal(a.codeIntent, 1, q);
  }
  // Not files: a product (one dot), a method (`c.json`), a call.
  for (const [q, joined] of [
    ['Node.js streams', 'nodejs'],
    ['c.json response', 'cjson'],
    ['res.json()', 'resjson'],
  ] as const) {
    assert.ok(analyzeQuery(q).terms.includes(joined), q);
  }
});

let s: TestServer;

before(async () => {
  s = await serverWithBundles(['vite'], { config: REAL_MODEL });
});

after(async () => {
  await s?.close();
});

test('over HTTP: a question naming vite.config.ts is answered from the option it asks about', async () => {
  const res = await s.api(`/api/v3/search?${new URLSearchParams({ query: 'vite.config.ts base path /admin/', library: 'vite', type: 'txt' })}`, { auth: null });
  assert.equal(res.status, 200);
  const first = textSources(await res.text()).slice(0, 3);
  // Before: whatever the question, pages that merely show a vite.config.ts (config intellisense, the Oxc migration note).
  assert.ok(
    first.some((u) => /#(base|public-base-path)$/.test(u)),
    first.join(' '),
  );
});
