import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { makeZip } from './helpers/zip.ts';
import { waitJob, snippetsOf, stagingEntries, postForm, fixtureBlob } from './helpers/sources.ts';
import { FIXTURES } from './helpers/fixtures.ts';

let s: TestServer;

before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.close();
});

function docs(form: FormData, entries: [string, string][]): FormData {
  for (const [fixture, name] of entries) form.append('documentFiles', fixtureBlob(`documents/${fixture}`), name);
  return form;
}

test('PDF and DOCX uploads become one library with headings, code blocks and tables', async () => {
  const form = docs(new FormData(), [
    ['pydeprecate-functions.pdf', 'pydeprecate-functions.pdf'],
    ['docker-cluster-volumes.pdf', 'docker-cluster-volumes.pdf'],
    ['pydeprecate-cli.docx', 'pydeprecate-cli.docx'],
    // Named .txt on purpose: the type is detected by content, not by extension.
    ['got-hooks.docx', 'got-hooks.txt'],
  ]);
  form.append('relativePaths', JSON.stringify(['guides/functions.pdf', 'docker/volumes.pdf', 'cli.docx', 'hooks/got-hooks.docx']));
  form.append('collectionName', 'Mixed Docs');
  form.append('projectTitle', 'Mixed documentation');
  form.append('description', 'PDF and DOCX fixtures');
  const r = await postForm(s, '/api/v2/add/file-upload', form);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.libraryName, '/files/mixed-docs');
  assert.match(r.body.message as string, /4 documents queued/);
  const job = await waitJob(s, r.body.jobId as number, 60_000);
  assert.equal(job.state, 'succeeded', job.error ?? '');
  const files = job.progress.files as { name: string; state: string; snippets: number }[];
  assert.deepEqual(
    files.map((f) => [f.name, f.state]),
    [
      ['guides/functions.pdf', 'done'],
      ['docker/volumes.pdf', 'done'],
      ['cli.docx', 'done'],
      ['hooks/got-hooks.docx', 'done'],
    ],
  );
  const lib = s.services.store.libraries.get('/files/mixed-docs')!;
  assert.equal(lib.title, 'Mixed documentation');
  assert.equal(lib.sourceType, 'files');
  assert.equal(lib.teamspaceId, s.services.keys.defaultTeamspaceId());
  const all = await snippetsOf(s, '/files/mixed-docs');
  const of = (file: string) => all.filter((x) => x.sourceId.startsWith(`upload://files/mixed-docs/${file}`));
  const text = (xs: typeof all) =>
    xs.map((x) => `${x.breadcrumb}\n${x.title}\n${x.description}\n${x.content}\n${x.codeList.map((c) => c.code).join('\n')}`).join('\n');

  const functions = of('guides/functions.pdf');
  assert.ok(functions.filter((x) => x.kind === 'code').length >= 20, 'monospace runs of the PDF become code blocks (22 in the source)');
  assert.ok(
    functions.some((x) => x.breadcrumb === 'guides > pyDeprecate — Functions > Simple function forwarding'),
    'PDF headings by font size, folder and title in the breadcrumb',
  );
  assert.ok(functions.some((x) => x.breadcrumb.endsWith('> Conditional skip')));
  assert.ok(functions.some((x) => x.kind === 'code' && x.language === 'python' && x.codeList[0]!.code.includes('@deprecated(target=')));

  const volumes = of('docker/volumes.pdf');
  assert.equal(volumes.filter((x) => x.kind === 'code').length, 11);
  assert.ok(volumes.some((x) => x.breadcrumb.endsWith('> Installing a CSI plugin')));
  assert.match(text(volumes), /docker plugin install/);

  const cli = of('cli.docx');
  assert.equal(cli.filter((x) => x.kind === 'code').length, 9, 'SourceCode paragraphs become code blocks');
  assert.ok(cli.some((x) => x.breadcrumb.endsWith('CLI Reference > Exit codes')));
  assert.ok(
    cli.some((x) => x.kind === 'code' && x.codeList[0]!.code === "pip install 'pyDeprecate[audit,cli]'"),
    'runs joined, entities decoded',
  );
  assert.ok(
    cli.some((x) => x.kind === 'info' && /^\| .* \|$/m.test(x.content) && x.content.includes(' --- |')),
    'Word tables become pipe tables',
  );

  const hooks = of('hooks/got-hooks.docx');
  assert.equal(hooks.filter((x) => x.kind === 'code').length, 18, 'one block per pandoc code paragraph');
  assert.ok(hooks.some((x) => x.breadcrumb.endsWith('Hooks API > hooks > beforeRequest')));
  assert.ok(hooks.some((x) => x.breadcrumb.endsWith('> afterResponse') && x.kind === 'code' && x.language === 'javascript'));
  assert.deepEqual(stagingEntries(s), [], 'uploads are removed after the job');
});

test('broken files are refused by content with a per-file message; nothing is stored', async () => {
  const libs = s.services.store.libraries.list().length;
  const jobs = (await s.services.jobs.list()).length;
  const mixed = docs(new FormData(), [
    ['pydeprecate-cli.docx', 'cli.docx'],
    ['broken.pdf', 'broken.pdf'],
    ['broken.docx', 'broken.docx'],
  ]);
  const r = await postForm(s, '/api/v2/add/file-upload', mixed);
  assert.equal(r.status, 415);
  assert.equal(r.body.error, 'unsupported_media_type');
  assert.match(r.body.message as string, /broken\.pdf: neither a PDF \(no %PDF- header\) nor a DOCX/);
  assert.match(r.body.message as string, /broken\.docx: a ZIP archive without word\/document\.xml/);
  assert.doesNotMatch(r.body.message as string, /cli\.docx/);
  // A DOCX whose directory says it expands to ~3.7 GB is refused before any converter touches it.
  const bomb = makeZip([
    { name: '[Content_Types].xml', data: '<Types/>' },
    { name: 'word/document.xml', data: '<w:document/>' },
  ]);
  const central = bomb.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  bomb.writeUInt32LE(0xf0000000, central + 24);
  const bombForm = new FormData();
  bombForm.append('documentFiles', new Blob([new Uint8Array(bomb)]), 'bomb.docx');
  const r3 = await postForm(s, '/api/v2/add/file-upload', bombForm);
  assert.equal(r3.status, 415);
  assert.match(r3.body.message as string, /bomb\.docx: a ZIP archive that expands to \d+ MB/);
  const fake = new FormData();
  fake.append('documentFiles', new Blob(['just text']), 'notes.pdf');
  const r2 = await postForm(s, '/api/v2/add/file-upload', fake);
  assert.equal(r2.status, 415, 'a .pdf name does not make a PDF');
  assert.equal(s.services.store.libraries.list().length, libs);
  assert.equal((await s.services.jobs.list()).length, jobs);
  assert.deepEqual(stagingEntries(s), []);
});

test('a file that passes the type check but cannot be read fails alone; alone it fails the job and leaves no library', async () => {
  const corrupt = new Blob([Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\ngarbage without xref\n')]);
  const both = new FormData();
  both.append('documentFiles', corrupt, 'corrupt.pdf');
  both.append('documentFiles', fixtureBlob('documents/pydeprecate-cli.docx'), 'cli.docx');
  both.append('collectionName', 'Partly broken');
  const r = await postForm(s, '/api/v2/add/file-upload', both);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const job = await waitJob(s, r.body.jobId as number);
  assert.equal(job.state, 'succeeded');
  const files = job.progress.files as { name: string; state: string; error?: string }[];
  assert.equal(files[0]!.state, 'failed');
  assert.ok(files[0]!.error && files[0]!.error.length > 5, 'the failure names a reason');
  assert.equal(files[1]!.state, 'done');
  assert.ok((await snippetsOf(s, '/files/partly-broken')).length > 0);

  const only = new FormData();
  only.append('documentFiles', corrupt, 'corrupt.pdf');
  only.append('collectionName', 'Only broken');
  const r2 = await postForm(s, '/api/v2/add/file-upload', only);
  assert.equal(r2.status, 200);
  const job2 = await waitJob(s, r2.body.jobId as number);
  assert.equal(job2.state, 'failed');
  assert.match(job2.error ?? '', /No document could be read: corrupt\.pdf: /);
  assert.equal(s.services.store.libraries.get('/files/only-broken'), null, 'no empty library is left');
  assert.deepEqual(stagingEntries(s), []);
});

test('relativePaths must stay inside the collection and match the files', async () => {
  for (const [paths, pattern] of [
    [['../evil.docx'], /"\.\." segments/],
    [['guides/../../evil.docx'], /"\.\." segments/],
    [['/etc/evil.docx'], /absolute path/],
    [['C:\\Windows\\evil.docx'], /absolute path/],
    [['a.docx', 'b.docx'], /2 entries for 1 documentFiles/],
  ] as [string[], RegExp][]) {
    const form = docs(new FormData(), [['pydeprecate-cli.docx', 'cli.docx']]);
    form.append('relativePaths', JSON.stringify(paths));
    const r = await postForm(s, '/api/v2/add/file-upload', form);
    assert.equal(r.status, 400, JSON.stringify(paths));
    assert.match(r.body.message as string, pattern);
  }
  const form = docs(new FormData(), [['pydeprecate-cli.docx', 'cli.docx']]);
  form.append('relativePaths', 'not json');
  assert.equal((await postForm(s, '/api/v2/add/file-upload', form)).status, 400);
  assert.equal((await postForm(s, '/api/v2/add/file-upload', new FormData())).status, 400, 'no files');
  assert.deepEqual(stagingEntries(s), []);
});

test('same collection twice is a 409 unless force', async () => {
  const make = (force: boolean) => {
    const f = docs(new FormData(), [['pydeprecate-cli.docx', 'cli.docx']]);
    f.append('collectionName', 'CLI docs');
    if (force) f.append('force', 'true');
    return f;
  };
  const first = await postForm(s, '/api/v2/add/file-upload', make(false));
  assert.equal(first.status, 200);
  assert.equal((await waitJob(s, first.body.jobId as number)).state, 'succeeded');
  const count = (await snippetsOf(s, '/files/cli-docs')).length;
  const second = await postForm(s, '/api/v2/add/file-upload', make(false));
  assert.equal(second.status, 409);
  assert.match(second.body.message as string, /\/files\/cli-docs already exists/);
  const forced = await postForm(s, '/api/v2/add/file-upload', make(true));
  assert.equal(forced.status, 200);
  assert.equal((await waitJob(s, forced.body.jobId as number)).state, 'succeeded');
  assert.equal((await snippetsOf(s, '/files/cli-docs')).length, count, 'replaced, not duplicated');
});

/** Streams a multipart upload of generated files (no big buffers in the test), optionally without Content-Length. */
function streamUpload(sizes: number[], options: { declaredLength?: number } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const boundary = '----stacks-test-boundary';
  const url = new URL('/api/v2/add/file-upload', s.url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${s.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` };
    if (options.declaredLength) headers['content-length'] = options.declaredLength;
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', (err) => reject(err));
    const chunk = Buffer.alloc(1024 * 1024, 0x25);
    chunk.write('%PDF-1.7\n');
    let i = 0;
    let sent = 0;
    let inFile = false;
    const pump = () => {
      while (i < sizes.length) {
        if (!inFile) {
          req.write(`--${boundary}\r\nContent-Disposition: form-data; name="documentFiles"; filename="f${i}.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
          inFile = true;
          sent = 0;
        }
        while (sent < sizes[i]!) {
          const n = Math.min(chunk.length, sizes[i]! - sent);
          sent += n;
          if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return req.once('drain', pump);
          if (req.destroyed) return;
        }
        req.write('\r\n');
        inFile = false;
        i++;
      }
      req.end(`--${boundary}--\r\n`);
    };
    if (options.declaredLength) req.end();
    else pump();
  });
}

test('limits: 413 for a file over 50 MB, more than 50 files, more than 200 MB in total; no temp files left', async () => {
  const MB = 1024 * 1024;
  const big = await streamUpload([51 * MB]);
  assert.equal(big.status, 413);
  assert.match(big.body.message as string, /50 MB per file/);
  assert.deepEqual(stagingEntries(s), []);

  const many = new FormData();
  for (let i = 0; i < 51; i++) many.append('documentFiles', new Blob(['%PDF-1.4\n']), `f${i}.pdf`);
  const tooMany = await postForm(s, '/api/v2/add/file-upload', many);
  assert.equal(tooMany.status, 413);
  assert.match(tooMany.body.message as string, /at most 50 documentFiles/);
  assert.deepEqual(stagingEntries(s), []);

  // Chunked (no Content-Length): the total is counted while streaming.
  const total = await streamUpload([45 * MB, 45 * MB, 45 * MB, 45 * MB, 45 * MB]);
  assert.equal(total.status, 413);
  assert.match(total.body.message as string, /200 MB in total/);
  assert.deepEqual(stagingEntries(s), []);

  // A declared Content-Length over the limit is refused before the body is read.
  const declared = await streamUpload([], { declaredLength: 300 * MB });
  assert.equal(declared.status, 413);
  assert.deepEqual(stagingEntries(s), []);
  assert.equal(s.services.store.libraries.list().filter((l) => l.id.startsWith('/files/f0')).length, 0);
});

test('fixtures are the real files', () => {
  assert.equal(fs.readFileSync(path.join(FIXTURES, 'documents/broken.pdf'), 'utf8'), 'oops\n');
});
