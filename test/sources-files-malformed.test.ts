import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startTestServer, waitFor, type TestServer } from './helpers/server.ts';
import { makeZip } from './helpers/zip.ts';
import { filesUnder, multipartBody, postAndVanish, rawPost, type Part } from './helpers/raw-http.ts';
import { FIXTURES } from './helpers/fixtures.ts';
import { InflateMeter, ZipRefused } from '../server/ingest/zip-entries.ts';

// Malformed uploads to POST /api/v2/add/file-upload and /openapi-upload: a 400 or 413 {error,
// message} (415 for a file that is not a readable PDF or DOCX, as for any other), nothing kept in
// the sources' staging area, nothing queued.

let s: TestServer;
const BOUNDARY = '----stacks-files-boundary';
const DOCX = fs.readFileSync(path.join(FIXTURES, 'documents/pydeprecate-cli.docx'));

before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.close();
});

const staged = () => filesUnder(s.services.sources.stagingRoot);

function post(pathname: string, parts: Part[], o: { closed?: boolean; contentType?: string } = {}) {
  return rawPost(s.url, pathname, {
    headers: { authorization: `Bearer ${s.key}`, 'content-type': o.contentType ?? `multipart/form-data; boundary=${BOUNDARY}` },
    body: multipartBody(BOUNDARY, parts, o.closed ?? true),
  });
}

async function refused(status: number, answer: { status: number; body: string }, message: RegExp, what: string): Promise<void> {
  assert.equal(answer.status, status, `${what}: ${answer.body}`);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], what);
  assert.match(body.message as string, message, what);
  await waitFor(() => staged().length === 0 && fs.readdirSync(s.services.sources.stagingRoot).length === 0, 5_000).catch(() =>
    assert.deepEqual(fs.readdirSync(s.services.sources.stagingRoot, { recursive: true }), [], `${what}: staging left`),
  );
  assert.equal((await s.services.jobs.list()).length, 0, `${what}: nothing queued`);
}

const pdf = (name: string, data: Buffer | string = '%PDF-1.4\n'): Part => ({ name: 'documentFiles', filename: name, type: 'application/pdf', data });

test('a cut-off multipart body is a 400, on both upload routes', async () => {
  await refused(
    400,
    await post('/api/v2/add/file-upload', [pdf('a.pdf', Buffer.alloc(50_000, 0x41))], { closed: false }),
    /multipart\/form-data body could not be read: unexpected end of form/,
    'truncated form',
  );
  await refused(
    400,
    await post('/api/v2/add/file-upload', [pdf('a.pdf'), pdf('b.pdf', Buffer.alloc(10_000, 0x41))], { closed: false }),
    /unexpected end of form/,
    'second file cut',
  );
  const spec = { name: 'openapiFile', filename: 'spec.json', type: 'application/json', data: '{"openapi": "3.0.0", "info": {' };
  await refused(400, await post('/api/v2/add/openapi-upload', [spec], { closed: false }), /unexpected end of form/, 'openapi truncated');
});

test('malformed boundaries and part headers are a 400', async () => {
  await refused(400, await post('/api/v2/add/file-upload', [pdf('a.pdf')], { contentType: 'multipart/form-data' }), /boundary not found/, 'no boundary');
  const answer = await rawPost(s.url, '/api/v2/add/file-upload', {
    headers: { authorization: `Bearer ${s.key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body: Buffer.from(`--${BOUNDARY}\r\nnot a header\r\n\r\n%PDF-1.4\r\n--${BOUNDARY}--\r\n`),
  });
  await refused(400, answer, /could not be read/, 'malformed part header');
  await refused(
    400,
    await post('/api/v2/add/file-upload', [pdf('a.pdf')], { contentType: 'multipart/form-data; boundary=other' }),
    /could not be read|documentFiles is required/,
    'boundary of another body',
  );
});

test('a client vanishing mid-upload leaves nothing in staging', async () => {
  const start = multipartBody(BOUNDARY, [pdf('a.pdf', Buffer.alloc(200_000, 0x41))], false);
  const headers = { authorization: `Bearer ${s.key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
  await postAndVanish(s.url, '/api/v2/add/file-upload', { headers, body: start, declaredLength: start.length + 1_000_000, ready: () => staged().length > 0 });
  await waitFor(() => fs.readdirSync(s.services.sources.stagingRoot).length === 0, 10_000);
  assert.equal((await s.api('/ping')).status, 200);
});

test('a DOCX whose headers under-declare its sizes is refused by what it really inflates to', async () => {
  const lying = makeZip([
    { name: '[Content_Types].xml', data: '<Types/>' },
    { name: 'word/document.xml', data: Buffer.alloc(20 * 1024 * 1024, 0x20), declaredSize: 2000 },
  ]);
  const r = await post('/api/v2/add/file-upload', [{ name: 'documentFiles', filename: 'small.docx', data: lying }]);
  await refused(
    415,
    r,
    /small\.docx: a ZIP archive that is damaged: word\/document\.xml unpacks to more than the 2000 bytes its header declares/,
    'lying docx',
  );
  const cut = DOCX.subarray(0, Math.floor(DOCX.length / 2));
  await refused(
    415,
    await post('/api/v2/add/file-upload', [{ name: 'documentFiles', filename: 'cut.docx', data: cut }]),
    /cut\.docx: a ZIP archive that cannot be read/,
    'truncated docx',
  );
  await refused(
    415,
    await post('/api/v2/add/file-upload', [{ name: 'documentFiles', filename: 'empty.pdf', data: '' }]),
    /empty\.pdf: the file is empty/,
    'empty file',
  );
});

test('fields too large, unknown fields and wrong content types', async () => {
  await refused(
    413,
    await post('/api/v2/add/file-upload', [{ name: 'description', data: 'x'.repeat(1024 * 1024 + 10) }, pdf('a.pdf')]),
    /form field description is too long/,
    'field too large',
  );
  await refused(400, await post('/api/v2/add/file-upload', [{ ...pdf('a.pdf'), name: 'file' }]), /Unexpected file field "file"/, 'unknown file field');
  const json = await s.api('/api/v2/add/file-upload', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(json.status, 415);
  assert.deepEqual(Object.keys((await json.json()) as object).sort(), ['error', 'message']);
});

test('the inflate meter stops at the budget whatever the headers said', async () => {
  const budget = { left: 10, max: 10 };
  const meter = Readable.from([Buffer.alloc(6), Buffer.alloc(6)]).pipe(new InflateMeter(budget));
  await assert.rejects(
    async () => {
      for await (const chunk of meter) assert.ok((chunk as Buffer).length <= 10);
    },
    (err: unknown) => err instanceof ZipRefused && err.kind === 'too_large',
  );
});
