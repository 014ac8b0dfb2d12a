import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers/server.ts';

// Issue 40: both endpoints and library selection serve one default version. A library with tagged
// versions only, imported out of order: the newest release by semver is the default (not the last
// row written, nor a prerelease).
test('without a version, /api/v2/context and /api/v3/search serve the newest release by semver, whatever the import order', async () => {
  const s = await startTestServer();
  try {
    for (const [tag, word] of [
      ['9.1.0', 'ninth'],
      ['10.0.0-rc.1', 'candidate'],
      ['8.4.2', 'eighth'],
    ] as const) {
      const build = await s.services.writer.begin(
        { id: '/acme/fluxlog', title: 'Fluxlog', description: 'flux capacitor logging', sourceType: 'repo' },
        { tag },
      );
      await build.add([
        {
          kind: 'info',
          sourceId: `https://example.test/acme/fluxlog/${tag}/guide#flux`,
          content: `The flux capacitor option of the ${word} release sets the logging level of fluxlog.`,
          breadcrumb: 'Flux capacitor',
        },
      ]);
      await build.commit();
    }
    const context = await s.api(`/api/v2/context?${new URLSearchParams({ libraryId: '/acme/fluxlog', query: 'flux capacitor option' })}`);
    assert.equal(context.status, 200);
    const text = await context.text();
    assert.match(text, /ninth release/);
    assert.doesNotMatch(text, /candidate release|eighth release/);
    const search = await s.api(`/api/v3/search?${new URLSearchParams({ query: 'flux capacitor option', library: 'fluxlog', type: 'json' })}`);
    assert.equal(search.status, 200);
    const body = (await search.json()) as { infoSnippets: { libraryId: string }[] };
    assert.deepEqual([...new Set(body.infoSnippets.map((x) => x.libraryId))], ['/acme/fluxlog/9.1.0']);
  } finally {
    await s.close();
  }
});
