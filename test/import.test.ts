import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { CORPUS_BUNDLES, FIXTURES } from './helpers/fixtures.ts';
import { makeZip } from './helpers/zip.ts';

const BUNDLES = path.join(FIXTURES, 'bundles');
const read = (name: string) => fs.readFileSync(path.join(BUNDLES, name));

interface ImportBody {
  message: string;
  queued: string[];
  skipped: { project: string; reason: string }[];
  jobs: { project: string; jobId: number }[];
}

function postJson(s: TestServer, body: Buffer | string, query = ''): Promise<Response> {
  return s.api(`/api/import-libraries${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
}

function postFile(s: TestServer, field: string, name: string, data: Buffer, type = 'application/json', extra: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(extra)) form.set(k, v);
  form.set(field, new Blob([new Uint8Array(data)], { type }), name);
  return s.api('/api/import-libraries', { method: 'POST', body: form });
}

/** Served snippets per "libraryId@tag" (tag '' is the current documentation). */
function served(s: TestServer): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of s.services.store.libraries.allCurrentVersions()) out[`${v.libraryId}@${v.tag}`] = v.totalSnippets;
  return out;
}

function stagedFiles(s: TestServer): string[] {
  const dir = path.join(s.dataDir, 'uploads');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

test('JSON body import queues every library; jobs index them; force re-imports, otherwise skipped', async () => {
  const s = await startTestServer();
  try {
    const r = await postJson(s, read('valid.json'));
    assert.equal(r.status, 200);
    const body = (await r.json()) as ImportBody;
    assert.deepEqual(body.queued, ['/sindresorhus/got', '/dk26/strict-path-rs']);
    assert.deepEqual(body.skipped, []);
    assert.equal(typeof body.message, 'string');
    // The job is visible over HTTP and finishes.
    await s.services.jobs.idle();
    const job = (await (await s.api(`/api/jobs/${body.jobs[0]!.jobId}`)).json()) as {
      state: string;
      kind: string;
      progress: { snippets: number; total: number };
    };
    assert.equal(job.state, 'succeeded');
    assert.equal(job.kind, 'import');
    assert.deepEqual([job.progress.snippets, job.progress.total], [5, 5]);
    assert.deepEqual(served(s), { '/dk26/strict-path-rs@': 4, '/sindresorhus/got@': 5 });
    const got = s.services.store.libraries.get('/sindresorhus/got')!;
    assert.equal(got.title, 'Got');
    assert.equal(got.docsRepoUrl, 'https://github.com/sindresorhus/got');
    const v = s.services.store.libraries.currentVersion('/sindresorhus/got', '')!;
    assert.equal(v.totalTokens, 404, 'bundle token counts are kept');
    const snippets = await s.services.store.snippets.list(v.id, 100);
    const code = snippets.find((x) => x.kind === 'code')!;
    assert.equal(code.title, 'Getting and posting data with promises');
    assert.equal(code.codeList[0]!.language, 'js');

    // Again without force: both skipped with a reason, nothing queued.
    const again = (await (await postJson(s, read('valid.json'))).json()) as ImportBody;
    assert.deepEqual(again.queued, []);
    assert.deepEqual(
      again.skipped.map((k) => k.project),
      ['/sindresorhus/got', '/dk26/strict-path-rs'],
    );
    assert.match(again.skipped[0]!.reason, /already exists/);

    // force in the query or in the body replaces them.
    const forced = (await (await postJson(s, read('valid.json'), '?force=true')).json()) as ImportBody;
    assert.equal(forced.queued.length, 2);
    const bodyForce = JSON.parse(read('valid.json').toString('utf8')) as { libraries: unknown[]; force?: boolean };
    bodyForce.force = true;
    const forced2 = (await (await postJson(s, JSON.stringify(bodyForce))).json()) as ImportBody;
    assert.equal(forced2.queued.length, 2);
    // force=0 in the query wins over the body's force.
    const notForced = (await (await postJson(s, JSON.stringify(bodyForce), '?force=0')).json()) as ImportBody;
    assert.equal(notForced.queued.length, 0);
    await s.services.jobs.idle();
    assert.deepEqual(served(s), { '/dk26/strict-path-rs@': 4, '/sindresorhus/got@': 5 }, 'no duplicates after forced re-imports');
    assert.equal(s.services.store.libraries.versions('/sindresorhus/got').length, 1, 'replaced versions are purged');
    assert.deepEqual(stagedFiles(s), [], 'temp and staged files are removed');

    const bad = await postJson(s, '', '?force=maybe');
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { message: string }).message, /force/);
  } finally {
    await s.close();
  }
});

test('multipart upload: export file in field bundleFile or file, JSON or zip; a single library object', async () => {
  const s = await startTestServer();
  try {
    const r1 = await postFile(s, 'bundleFile', 'export.json', read('export.json'));
    assert.equal(r1.status, 200);
    assert.deepEqual(((await r1.json()) as ImportBody).queued, ['/sindresorhus/got', '/dk26/strict-path-rs']);
    await s.services.jobs.idle();

    // `file` works too; a form field force=true re-imports.
    const r2 = await postFile(s, 'file', 'export.json', read('export.json'), 'application/json', { force: 'true' });
    assert.equal(r2.status, 200);
    assert.equal(((await r2.json()) as ImportBody).queued.length, 2);
    await s.services.jobs.idle();

    // A zip of two bundles (detected by magic bytes, whatever the name and type).
    const lib = JSON.parse(read('valid.json').toString('utf8')) as { libraries: Record<string, unknown>[] };
    const one = { libraries: [{ ...lib.libraries[0], project: '/zip/one' }] };
    const two = { ...lib.libraries[1], project: '/zip/two@v2.0.0' };
    const zip = makeZip([
      { name: 'export/one.json', data: JSON.stringify(one) },
      { name: 'export/two.json', data: JSON.stringify(two) },
      { name: 'export/README.txt', data: 'not a bundle' },
    ]);
    const r3 = await postFile(s, 'bundleFile', 'export.bin', zip, 'application/octet-stream');
    assert.equal(r3.status, 200);
    assert.deepEqual(((await r3.json()) as ImportBody).queued, ['/zip/one', '/zip/two@v2.0.0']);
    // A zip as the raw body works as well.
    const r4 = await s.api('/api/import-libraries?force=1', { method: 'POST', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(zip) });
    assert.equal(r4.status, 200);
    await s.services.jobs.idle();
    const all = served(s);
    assert.equal(all['/zip/one@'], 5);
    assert.equal(all['/zip/two@v2.0.0'], 4);

    // A zip whose bundle is invalid names the entry.
    const badZip = makeZip([{ name: 'bad.json', data: JSON.stringify({ libraries: [{ ...lib.libraries[0], title: undefined }] }) }]);
    const r5 = await postFile(s, 'bundleFile', 'export.zip', badZip, 'application/zip');
    assert.equal(r5.status, 400);
    assert.match(((await r5.json()) as { message: string }).message, /^bad\.json: libraries\[0\] \(\/sindresorhus\/got\): missing required field "title"/);

    const r6 = await postFile(s, 'other', 'export.json', read('export.json'));
    assert.equal(r6.status, 400);
    assert.equal(((await r6.json()) as { error: string }).error, 'validation_error');
    assert.deepEqual(stagedFiles(s), []);
  } finally {
    await s.close();
  }
});

test('invalid bundles: 400 naming the library and field, nothing imported; duplicates skipped; bad media types', async () => {
  const s = await startTestServer();
  try {
    const r = await postJson(s, read('missing-field.json'));
    assert.equal(r.status, 400);
    assert.deepEqual(await r.json(), { error: 'validation_error', message: 'libraries[1]: missing required field "project"' });
    assert.deepEqual(s.services.store.libraries.list(), [], 'the valid library of the bundle was not imported either');
    assert.deepEqual(await s.services.jobs.list(), [], 'nothing queued');
    assert.deepEqual(stagedFiles(s), [], 'temp and staged files removed');

    const valid = JSON.parse(read('valid.json').toString('utf8')) as { libraries: Record<string, unknown>[] & { codeSnippets?: unknown }[] };
    const cases: [unknown, RegExp][] = [
      [
        { libraries: [{ ...valid.libraries[0], codeSnippets: [{ id: 'x', title: 't', description: 'd', language: 'js' }] }] },
        /^libraries\[0\] \(\/sindresorhus\/got\): codeSnippets\[0\]: missing required field "codeList"$/,
      ],
      [
        { libraries: [valid.libraries[0], { ...valid.libraries[1], infoSnippets: undefined }] },
        /^libraries\[1\] \(\/dk26\/strict-path-rs\): missing required field "infoSnippets"$/,
      ],
      [{ libraries: [{ ...valid.libraries[0], project: 'got' }] }, /^libraries\[0\] \(got\): field "project" must be a library ID/],
      [
        { libraries: [{ ...valid.libraries[0], codeSnippets: [{ id: 'x', title: 't', description: 'd', language: 'js', codeList: [], tokens: 1 }] }] },
        /codeSnippets\[0\]: field "codeList"/,
      ],
      [{ libraries: [{ ...valid.libraries[0], infoSnippets: [{ id: 'x', content: 'c', tokens: -1 }] }] }, /infoSnippets\[0\]: field "tokens"/],
      [{ libraries: [] }, /holds no library/],
      [{ libraries: 'nope' }, /"libraries" must be an array/],
      [[1], /libraries\[0\]: must be an object/],
      ['{"libraries": [', /ends early|not valid JSON/],
      ['{"libraries": [}', /not valid JSON/],
      ['', /empty/],
    ];
    for (const [body, expected] of cases) {
      const res = await postJson(s, typeof body === 'string' ? body : JSON.stringify(body));
      const b = (await res.json()) as { error: string; message: string };
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} -> ${b.message}`);
      assert.equal(b.error, 'validation_error');
      assert.match(b.message, expected);
    }
    assert.deepEqual(await s.services.jobs.list(), []);
    assert.deepEqual(stagedFiles(s), []);

    const dup = await postJson(s, read('duplicate-project.json'));
    assert.equal(dup.status, 200);
    const d = (await dup.json()) as ImportBody;
    assert.deepEqual(d.queued, ['/sindresorhus/got', '/dk26/strict-path-rs']);
    assert.equal(d.skipped.length, 1);
    assert.equal(d.skipped[0]!.project, '/sindresorhus/got');
    assert.match(d.skipped[0]!.reason, /libraries\[2\]: duplicate of libraries\[0\]/);
    await s.services.jobs.idle();
    assert.equal(s.services.store.libraries.get('/sindresorhus/got')!.title, 'Got', 'the first copy is the one imported');
    assert.equal(served(s)['/sindresorhus/got@'], 5);

    const text = await s.api('/api/import-libraries', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    assert.equal(text.status, 415);
    assert.equal(((await text.json()) as { error: string }).error, 'unsupported_media_type');
  } finally {
    await s.close();
  }
});

test('upload size limit gives 413 payload_too_large, also for multipart', async () => {
  const s = await startTestServer({ config: { importMaxBytes: 4096 } });
  try {
    const r = await postJson(s, read('valid.json'));
    assert.equal(r.status, 413);
    assert.equal(((await r.json()) as { error: string }).error, 'payload_too_large');
    // Chunked body (no Content-Length): the limit is enforced while streaming.
    const big = read('valid.json');
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(big.subarray(0, 3000));
        c.enqueue(big.subarray(3000));
        c.close();
      },
    });
    const chunked = await s.api('/api/import-libraries', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 413);
    const m = await postFile(s, 'bundleFile', 'export.json', Buffer.concat([big, Buffer.alloc(60_000, 32)]));
    assert.equal(m.status, 413);
    assert.equal(((await m.json()) as { error: string }).error, 'payload_too_large');
    assert.deepEqual(stagedFiles(s), []);
  } finally {
    await s.close();
  }
});

test('a version in project or in `version` imports beside the current docs (real corpus bundle)', async () => {
  const s = await startTestServer();
  try {
    const current = await postJson(s, fs.readFileSync(path.join(CORPUS_BUNDLES, 'fastify.json')));
    assert.deepEqual(((await current.json()) as ImportBody).queued, ['/fastify/fastify']);
    const v4 = await postFile(s, 'bundleFile', 'fastify-v4.29.1.json', fs.readFileSync(path.join(CORPUS_BUNDLES, 'fastify-v4.29.1.json')));
    assert.equal(v4.status, 200);
    assert.deepEqual(((await v4.json()) as ImportBody).queued, ['/fastify/fastify/v4.29.1']);
    await s.services.jobs.idle();
    const versions = s.services.store.libraries.versions('/fastify/fastify').filter((v) => v.isCurrent);
    assert.deepEqual(versions.map((v) => v.tag).sort(), ['', 'v4.29.1']);
    const tagged = versions.find((v) => v.tag === 'v4.29.1')!;
    assert.ok(tagged.totalSnippets > 1000, `v4.29.1 has ${tagged.totalSnippets} snippets`);
    const sample = await s.services.store.snippets.list(tagged.id, 50);
    assert.ok(
      sample.some((x) => x.sourceId.includes('/blob/v4.29.1/')),
      'the tagged version holds the v4 docs',
    );

    // Same version again: skipped; the version written into project with @ means the same.
    const bundle = JSON.parse(fs.readFileSync(path.join(CORPUS_BUNDLES, 'fastify-v4.29.1.json'), 'utf8')) as { libraries: Record<string, unknown>[] };
    const lib = { ...bundle.libraries[0], project: '/fastify/fastify@v4.29.1', version: undefined };
    const again = (await (await postJson(s, JSON.stringify({ libraries: [lib] }))).json()) as ImportBody;
    assert.deepEqual(again.queued, []);
    assert.deepEqual(
      again.skipped.map((k) => k.project),
      ['/fastify/fastify@v4.29.1'],
    );
    // A snippet without token counts is counted with the tokenizer.
    const noTokens = {
      ...lib,
      project: '/fastify/fastify/v9.9.9',
      codeSnippets: [
        { id: 'https://x/y#z', title: 'Hello', description: 'Say hello', language: 'js', codeList: [{ language: 'js', code: 'console.log("hello world")' }] },
      ],
      infoSnippets: [],
    };
    const q = (await (await postJson(s, JSON.stringify(noTokens))).json()) as ImportBody;
    assert.deepEqual(q.queued, ['/fastify/fastify/v9.9.9']);
    await s.services.jobs.idle();
    const v9 = s.services.store.libraries.currentVersion('/fastify/fastify', 'v9.9.9')!;
    assert.equal(v9.totalSnippets, 1);
    assert.ok(v9.totalTokens > 5 && v9.totalTokens < 30, `tokens counted: ${v9.totalTokens}`);
  } finally {
    await s.close();
  }
});

test('sweep removes staged files of jobs cancelled while queued and old uploads, keeps active ones', async () => {
  const s = await startTestServer();
  try {
    await s.services.jobs.stop();
    const body = (await (await postJson(s, read('valid.json'))).json()) as ImportBody;
    const [a, b] = body.jobs.map((j) => j.jobId) as [number, number];
    const file = async (id: number) => path.resolve(s.dataDir, String((await s.services.jobs.get(id)).payload.file));
    const res = await s.api(`/api/jobs/${a}/cancel`, { method: 'POST' });
    assert.equal(((await res.json()) as { state: string }).state, 'cancelled');
    const upload = s.services.importer.tempUploadPath();
    fs.writeFileSync(upload, '{}');
    assert.equal(await s.services.importer.sweep(), 0, 'young files are kept');
    const later = Date.now() + 7 * 3600_000;
    assert.equal(await s.services.importer.sweep(later), 2, 'the cancelled job’s staged file and the stale upload');
    assert.ok(!fs.existsSync(await file(a)) && !fs.existsSync(upload));
    assert.ok(fs.existsSync(await file(b)), 'the queued job keeps its staged file');
    s.services.jobs.start();
    await s.services.jobs.idle();
    assert.equal((await s.services.jobs.get(b)).state, 'succeeded');
  } finally {
    await s.close();
  }
});
