import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { addIndexedLibrary, addLibrary, call } from './helpers/teams.ts';
import { asKey } from '../server/operations/index.ts';
import { addLlmsTxtOperation, parseWebsiteOperation } from '../server/contracts/sources.ts';
import { ApiError } from '../lib/errors.ts';
import { httpMcpClient, textOf } from './helpers/mcp.ts';

type PolicyBody = {
  sourceTypes: Record<string, { enabled: boolean }>;
  libraryFilters: { mode: string; quality: Record<string, unknown>; select: { allowedLibraries: string[] } };
  accessibleLibraryCount: number;
};

const DAY = 86_400_000;

/** Five public libraries, one private library of the default teamspace, one of another teamspace. */
async function seedLibraries(s: TestServer): Promise<void> {
  await addLibrary(s, {
    id: '/acme/verified',
    sourceType: 'repo',
    verified: true,
    trustScore: 9,
    stars: 5000,
    license: 'MIT',
    docsSiteUrl: 'https://docs.acme.io/start',
  });
  await addLibrary(s, { id: '/acme/unverified', sourceType: 'repo', verified: false, trustScore: 3, stars: 10, license: 'GPL-3.0' });
  await addLibrary(
    s,
    { id: '/old/lib', sourceType: 'repo', verified: true, trustScore: 8, stars: 100, license: 'Apache-2.0' },
    new Date(Date.now() - 400 * DAY).toISOString(),
  );
  await addLibrary(s, { id: '/websites/example-docs', sourceType: 'website', sourceUrl: 'https://docs.example.com/guide/', verified: false, trustScore: null });
  await addLibrary(s, { id: '/llms/pagy', sourceType: 'llmstxt', sourceUrl: 'https://ddnexus.github.io/pagy/llms.txt', verified: false, trustScore: 6 });
  const own = s.services.teams.defaultTeamspaceId();
  await addLibrary(s, { id: '/team/private', sourceType: 'repo', teamspaceId: own });
  const other = await s.services.store.accounts.createTeamspace('other team', 'pro', new Date().toISOString());
  await addLibrary(s, { id: '/other/secret', sourceType: 'repo', teamspaceId: other });
}

async function count(s: TestServer, patch: unknown): Promise<number> {
  const put = await call<PolicyBody>(s, 'PUT', '/api/v2/policies', patch);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const got = await call<PolicyBody>(s, 'GET', '/api/v2/policies');
  assert.equal(got.body.accessibleLibraryCount, put.body.accessibleLibraryCount);
  return got.body.accessibleLibraryCount;
}

test('GET /api/v2/policies has exactly the spec shape and needs a key', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    await seedLibraries(s);
    const r = await call<PolicyBody>(s, 'GET', '/api/v2/policies');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['accessibleLibraryCount', 'libraryFilters', 'sourceTypes']);
    assert.deepEqual(Object.keys(r.body.sourceTypes).sort(), ['confluence', 'llmstxt', 'private_sources', 'public_repos', 'uploaded_files', 'websites']);
    for (const v of Object.values(r.body.sourceTypes)) assert.deepEqual(v, { enabled: true });
    assert.deepEqual(r.body.libraryFilters, {
      mode: 'quality',
      quality: {
        requireVerified: false,
        minTrustScore: null,
        maxAgeDays: 0,
        blockedLibraries: [],
        exceptedLibraries: [],
        repoFilters: { minStars: 0, allowedLicenses: [] },
      },
      select: { allowedLibraries: [] },
    });
    assert.equal(r.body.accessibleLibraryCount, 5, 'five public libraries; private ones are not counted');
    const anon = await call(s, 'GET', '/api/v2/policies', undefined, null);
    assert.equal(anon.status, 401);
    assert.equal(anon.body.error, 'invalid_api_key');
  } finally {
    await s.close();
  }
});

test('each library filter narrows accessibleLibraryCount and canSee', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    await seedLibraries(s);
    const q = (quality: Record<string, unknown>) => ({ libraryFilters: { mode: 'quality', quality } });
    assert.equal(await count(s, {}), 5);
    assert.equal(await count(s, q({ requireVerified: true })), 2, 'verified: /acme/verified, /old/lib');
    assert.equal(await count(s, q({ minTrustScore: 5 })), 3, 'trust >= 5: 9, 8, 6; null trust fails');
    assert.equal(await count(s, q({ maxAgeDays: 30 })), 4, '/old/lib is 400 days old');
    assert.equal(await count(s, q({ maxAgeDays: 500 })), 5);
    assert.equal(await count(s, q({ blockedLibraries: ['/acme/unverified'] })), 4, 'blocked by ID');
    assert.equal(await count(s, q({ blockedLibraries: ['example.com'] })), 4, 'blocked by domain, matching the subdomain docs.example.com');
    assert.equal(await count(s, q({ blockedLibraries: ['acme.io'] })), 4, 'blocked by the docs site domain');
    assert.equal(await count(s, q({ requireVerified: true, exceptedLibraries: ['/acme/unverified'] })), 3, 'an excepted library passes the quality filters');
    assert.equal(await count(s, q({ blockedLibraries: ['/acme/unverified'], exceptedLibraries: ['/acme/unverified'] })), 5, 'an exception beats a block');
    assert.equal(
      await count(s, q({ repoFilters: { minStars: 1000, allowedLicenses: [] } })),
      3,
      'repos under 1000 stars hidden; non-repo libraries unaffected',
    );
    assert.equal(
      await count(s, q({ repoFilters: { minStars: 0, allowedLicenses: ['mit', 'Apache-2.0'] } })),
      4,
      'GPL repo hidden; licenses compared case-insensitively',
    );
    assert.equal(
      await count(s, { libraryFilters: { mode: 'select', select: { allowedLibraries: ['/websites/example-docs', '/old/lib'] } } }),
      2,
      'select mode: only listed',
    );
    assert.equal(await count(s, { sourceTypes: { websites: { enabled: false } } }), 4);
    assert.equal(await count(s, { sourceTypes: { public_repos: { enabled: false } } }), 2, 'only the website and the llms.txt library remain');

    // The same decisions reach the AccessPolicy the search services consult.
    const owner = await s.services.keys.verify(s.key)!;
    const lib = (id: string) => s.services.store.libraries.get(id)!;
    await count(s, q({ requireVerified: true }));
    assert.equal(s.services.access.canSee(owner, lib('/acme/verified')), true);
    assert.equal(s.services.access.canSee(owner, lib('/acme/unverified')), false);
    assert.equal(s.services.access.canSee(null, lib('/acme/unverified')), false, 'anonymous callers get the default teamspace policy');
    assert.equal(s.services.access.canSee(owner, lib('/team/private')), true, "the teamspace's own libraries pass library filters");
    assert.equal(s.services.access.canSee(owner, lib('/other/secret')), false, "another teamspace's library is never visible");
    assert.equal(s.services.access.filtersActive(owner), true);
    await count(s, {});
    assert.equal(s.services.access.canSee(owner, lib('/acme/unverified')), true);
    assert.equal(s.services.access.filtersActive(owner), false);
    await count(s, { sourceTypes: { private_sources: { enabled: false } } });
    assert.equal(s.services.access.canSee(owner, lib('/team/private')), false, 'disabling private_sources hides the private repo');
  } finally {
    await s.close();
  }
});

test('policy changes: PATCH merges, PUT replaces, validation names the field, members are refused', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    const a = await call<PolicyBody>(s, 'PATCH', '/api/v2/policies', { libraryFilters: { quality: { minTrustScore: 7 } } });
    assert.equal(a.status, 200);
    const b = await call<PolicyBody>(s, 'PATCH', '/api/v2/policies', { libraryFilters: { quality: { requireVerified: true } } });
    assert.equal(b.body.libraryFilters.quality.minTrustScore, 7, 'PATCH keeps other fields');
    assert.equal(b.body.libraryFilters.quality.requireVerified, true);
    const c = await call<PolicyBody>(s, 'PUT', '/api/v2/policies', { libraryFilters: { quality: { requireVerified: true } } });
    assert.equal(c.body.libraryFilters.quality.minTrustScore, null, 'PUT starts from the defaults');
    for (const [bad, field] of [
      [{ libraryFilters: { mode: 'everything' } }, 'libraryFilters.mode'],
      [{ libraryFilters: { quality: { maxAgeDays: -1 } } }, 'libraryFilters.quality.maxAgeDays'],
      [{ sourceTypes: { websites: { enabled: 'yes' } } }, 'sourceTypes.websites.enabled'],
      [{ sourceTypes: { ftp: { enabled: true } } }, 'sourceTypes'],
    ] as const) {
      const r = await call(s, 'PATCH', '/api/v2/policies', bad);
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.equal(r.body.error, 'validation_error');
      assert.match(String(r.body.message), new RegExp(field.replace(/\./g, '\\.')));
    }
    const m = await call<{ key: { key: string } }>(s, 'POST', '/api/v2/members', { name: 'dev one', role: 'member' });
    const memberKey = m.body.key.key;
    const refused = await call(s, 'PATCH', '/api/v2/policies', { libraryFilters: { quality: { requireVerified: false } } }, memberKey);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error, 'forbidden');
    const read = await call<PolicyBody>(s, 'GET', '/api/v2/policies', undefined, memberKey);
    assert.equal(read.status, 200, 'members may read the policy');
    assert.equal(read.body.libraryFilters.quality.requireVerified, true);
  } finally {
    await s.close();
  }
});

test('disabled source types refuse adding such sources', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    const owner = await s.services.keys.verify(s.key)!;
    const admit = s.services.operations.admit;
    assert.doesNotThrow(() => admit(parseWebsiteOperation, asKey(owner)));
    await call(s, 'PATCH', '/api/v2/policies', { sourceTypes: { websites: { enabled: false } } });
    assert.throws(
      () => admit(parseWebsiteOperation, asKey(owner)),
      (e: unknown) => e instanceof ApiError && e.code === 'source_disabled' && e.status === 403,
    );
    assert.throws(
      () => admit(parseWebsiteOperation, asKey(null)),
      (e: unknown) => e instanceof ApiError && e.code === 'invalid_api_key',
      'no key: refused before the policy',
    );
    assert.doesNotThrow(() => admit(addLlmsTxtOperation, asKey(owner)));
  } finally {
    await s.close();
  }
});

test('filters and rules reach /api/v2/context', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    await addIndexedLibrary(s, { id: '/acme/widgets', verified: true, trustScore: 9 }, 'widget');
    await addIndexedLibrary(s, { id: '/shady/gadgets', verified: false, trustScore: 1 }, 'gadget');
    const ctx = (id: string, auth?: string | null) =>
      call(s, 'GET', `/api/v2/context?libraryId=${encodeURIComponent(id)}&query=configure+client&type=json`, undefined, auth);
    assert.equal((await ctx('/shady/gadgets')).status, 200);

    assert.equal((await call(s, 'POST', '/api/v2/rules', { kind: 'global', text: 'Use TypeScript strict mode.' })).status, 201);
    assert.equal((await call(s, 'POST', '/api/v2/rules', { kind: 'libraryTeam', libraryId: '/acme/widgets', text: 'Pin widgets to 2.x.' })).status, 201);
    assert.equal(
      (await call(s, 'POST', '/api/v2/rules', { kind: 'libraryOwn', libraryId: '/acme/widgets', text: 'Always close the widget client.' })).status,
      201,
    );
    assert.equal((await call(s, 'POST', '/api/v2/rules', { kind: 'libraryTeam', libraryId: '/shady/gadgets', text: 'Not for widgets.' })).status, 201);
    const bad = await call(s, 'POST', '/api/v2/rules', { kind: 'libraryTeam', libraryId: 'nope', text: 'x' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'invalid_library_id');
    assert.equal((await call(s, 'POST', '/api/v2/rules', { kind: 'libraryTeam', text: 'x' })).status, 400);

    const ok = await ctx('/acme/widgets');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.rules, {
      global: ['Use TypeScript strict mode.'],
      libraryOwn: ['Always close the widget client.'],
      libraryTeam: ['Pin widgets to 2.x.'],
    });
    const versioned = s.services.access.rules(null, ['/acme/widgets@2.0.0']);
    assert.deepEqual(versioned.libraries[0], {
      libraryId: '/acme/widgets@2.0.0',
      libraryOwn: ['Always close the widget client.'],
      libraryTeam: ['Pin widgets to 2.x.'],
    });

    const list = await call<{ rules: { id: number; kind: string }[] }>(s, 'GET', '/api/v2/rules');
    assert.equal(list.body.rules.length, 4);
    const globalRule = list.body.rules.find((r) => r.kind === 'global')!;
    assert.equal((await call(s, 'DELETE', `/api/v2/rules/${globalRule.id}`)).status, 204);
    assert.deepEqual((await ctx('/acme/widgets')).body.rules, {
      global: [],
      libraryOwn: ['Always close the widget client.'],
      libraryTeam: ['Pin widgets to 2.x.'],
    });
    assert.equal((await call(s, 'DELETE', `/api/v2/rules/${globalRule.id}`)).status, 404);

    await call(s, 'PATCH', '/api/v2/policies', { libraryFilters: { quality: { requireVerified: true } } });
    const hidden = await ctx('/shady/gadgets');
    assert.equal(hidden.status, 404, 'a filtered library is not served');
    assert.equal((await ctx('/shady/gadgets', null)).status, 404, 'not to anonymous callers either');
    assert.equal((await ctx('/acme/widgets')).status, 200);
  } finally {
    await s.close();
  }
});

test('rules and filters reach /api/v3/search', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    await addIndexedLibrary(s, { id: '/acme/widgets', verified: true, trustScore: 9 }, 'widget');
    await addIndexedLibrary(s, { id: '/shady/gadgets', verified: false, trustScore: 1 }, 'gadget');
    await call(s, 'POST', '/api/v2/rules', { kind: 'global', text: 'Use TypeScript strict mode.' });
    await call(s, 'POST', '/api/v2/rules', { kind: 'libraryOwn', libraryId: '/acme/widgets', text: 'Always close the widget client.' });
    await call(s, 'POST', '/api/v2/rules', { kind: 'libraryTeam', libraryId: '/acme/widgets', text: 'Pin widgets to 2.x.' });
    type Search = {
      codeSnippets: { libraryId: string }[];
      infoSnippets: { libraryId: string }[];
      rules?: { global: string[]; libraries: { libraryId: string; libraryOwn: string[]; libraryTeam: string[] }[] };
    };
    const search = (lib: string) => call<Search>(s, 'GET', `/api/v3/search?query=configure+client&library=${encodeURIComponent(lib)}&type=json`);
    const r = await search('/acme/widgets');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.rules, {
      global: ['Use TypeScript strict mode.'],
      libraries: [{ libraryId: '/acme/widgets', libraryOwn: ['Always close the widget client.'], libraryTeam: ['Pin widgets to 2.x.'] }],
    });

    const before = await search('/shady/gadgets');
    assert.ok([...before.body.codeSnippets, ...before.body.infoSnippets].some((x) => x.libraryId === '/shady/gadgets'));
    await call(s, 'PATCH', '/api/v2/policies', { libraryFilters: { quality: { blockedLibraries: ['/shady/gadgets'] } } });
    const after = await search('/shady/gadgets');
    const served = after.status === 200 ? [...after.body.codeSnippets, ...after.body.infoSnippets].map((x) => x.libraryId) : [];
    assert.ok(!served.includes('/shady/gadgets'), `a blocked library is never served (status ${after.status})`);
  } finally {
    await s.close();
  }
});

test('filters reach /api/v2/libs/search and the MCP tools; MCP tool calls are metered', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    await addIndexedLibrary(s, { id: '/acme/widgets', verified: true }, 'widget');
    await addIndexedLibrary(s, { id: '/acme/widgetkit', verified: false }, 'widget');
    type Libs = { results: { id: string }[]; searchFilterApplied: boolean };
    const libs = async () => (await call<Libs>(s, 'GET', '/api/v2/libs/search?libraryName=widget&query=configure+widget+client')).body;
    let r = await libs();
    assert.deepEqual(r.results.map((x) => x.id).sort(), ['/acme/widgetkit', '/acme/widgets']);
    assert.equal(r.searchFilterApplied, false);
    await call(s, 'PATCH', '/api/v2/policies', { libraryFilters: { quality: { requireVerified: true } } });
    r = await libs();
    assert.deepEqual(
      r.results.map((x) => x.id),
      ['/acme/widgets'],
    );
    assert.equal(r.searchFilterApplied, true);

    const client = await httpMcpClient(s.url, { STACKS_API_KEY: s.key });
    try {
      const before = (await call<{ member: { requests: number } }>(s, 'GET', '/api/v2/usage')).body.member.requests;
      const hidden = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/acme/widgetkit', query: 'configure widget client' } });
      assert.doesNotMatch(textOf(hidden), /widgetClient/, 'a filtered library is not served over MCP');
      const shown = await client.callTool({ name: 'query-docs', arguments: { libraryId: '/acme/widgets', query: 'configure widget client' } });
      assert.match(textOf(shown), /widget/i);
      await client.listTools();
      const after = (await call<{ member: { requests: number } }>(s, 'GET', '/api/v2/usage')).body.member.requests;
      assert.equal(after - before, 2, 'two tool calls counted, initialize and tools/list not');
    } finally {
      await client.close();
    }
  } finally {
    await s.close();
  }
});

test('the import endpoint skips libraries whose source type the policy disables', async () => {
  const s = await startTestServer({ overrides: { embedder: null } });
  try {
    await call(s, 'PATCH', '/api/v2/policies', { sourceTypes: { websites: { enabled: false } } });
    const lib = (project: string, type: string) => ({
      project,
      title: project,
      description: '',
      type,
      language: 'en',
      branch: 'main',
      docsRepoUrl: '',
      docsSiteUrl: '',
      totalTokens: 5,
      codeSnippets: [],
      infoSnippets: [{ id: `https://example.test${project}`, content: 'Hello from the docs.', breadcrumb: 'Intro', tokens: 5 }],
    });
    const r = await call<{ queued: string[]; skipped: { project: string; reason: string }[] }>(s, 'POST', '/api/import-libraries', {
      libraries: [lib('/acme/site', 'website'), lib('/acme/repo', 'repo')],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.queued, ['/acme/repo']);
    assert.equal(r.body.skipped.length, 1);
    assert.equal(r.body.skipped[0]!.project, '/acme/site');
    assert.match(r.body.skipped[0]!.reason, /websites sources are disabled/);
  } finally {
    await s.close();
  }
});
