import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, waitFor, type TestServer } from './helpers/server.ts';
import { makeZip } from './helpers/zip.ts';
import { filesUnder, multipartBody, postAndVanish, rawPost } from './helpers/raw-http.ts';
import { FIXTURES } from './helpers/fixtures.ts';

// Every malformed upload to POST /api/import-libraries is a 400 or 413 {error, message} (415 for a
// media type the route does not take), and leaves no file behind in the data dir's uploads/.

const MAX = 256 * 1024;
let s: TestServer;
const VALID = fs.readFileSync(path.join(FIXTURES, 'bundles/valid.json'));
const BOUNDARY = '----stacks-test-boundary';

before(async () => {
  s = await startTestServer({ config: { importMaxBytes: MAX } });
});
after(async () => {
  await s?.close();
});

const uploads = () => filesUnder(path.join(s.dataDir, 'uploads'));

/** The answer is a client error of the one shape, and nothing of the upload is left on disk. */
async function refused(status: number | number[], answer: { status: number; body: string } | Response, message: RegExp, what: string): Promise<void> {
  const got = answer instanceof Response ? { status: answer.status, body: await answer.text() } : answer;
  assert.ok([status].flat().includes(got.status), `${what}: ${got.status} ${got.body}`);
  const body = JSON.parse(got.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['error', 'message'], what);
  assert.match(body.message as string, message, what);
  // The route answers once the body is drained and the temp file removed; multer's removal of a
  // partly written file may finish a moment later.
  await waitFor(() => uploads().length === 0, 5_000).catch(() => assert.deepEqual(uploads(), [], `${what}: files left`));
}

function multipart(body: Buffer, contentType = `multipart/form-data; boundary=${BOUNDARY}`) {
  return rawPost(s.url, '/api/import-libraries', { headers: { authorization: `Bearer ${s.key}`, 'content-type': contentType }, body });
}

function zipUpload(zip: Buffer): Promise<Response> {
  return s.api('/api/import-libraries', { method: 'POST', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(zip) });
}

test('a cut-off multipart body (no closing boundary, a file part ending early) is a 400', async () => {
  const file = { name: 'bundleFile', filename: 'export.json', type: 'application/json', data: VALID.subarray(0, 500) };
  await refused(
    400,
    await multipart(multipartBody(BOUNDARY, [file], false)),
    /multipart\/form-data body could not be read: unexpected end of form/,
    'truncated form',
  );
  // Cut inside the part headers.
  const headers = multipartBody(BOUNDARY, [file]).subarray(0, 60);
  await refused(400, await multipart(headers), /could not be read/, 'cut in the part headers');
  // A form field but no file: the body is complete, the file is missing.
  await refused(400, await multipart(multipartBody(BOUNDARY, [{ name: 'force', data: 'true' }])), /Missing required field "bundleFile"/, 'no file');
});

test('malformed boundaries and part headers are a 400', async () => {
  const good = multipartBody(BOUNDARY, [{ name: 'bundleFile', filename: 'export.json', type: 'application/json', data: VALID }]);
  await refused(400, await multipart(good, 'multipart/form-data'), /boundary not found/, 'no boundary parameter');
  await refused(
    400,
    await multipart(good, 'multipart/form-data; boundary=another-boundary'),
    /could not be read|Missing required field/,
    'boundary of another body',
  );
  await refused(400, await multipart(good, 'multipart/form-data; boundary='), /could not be read|Missing required field/, 'empty boundary');
  const badHeader = Buffer.from(`--${BOUNDARY}\r\nthis is not a header line\r\n\r\n{}\r\n--${BOUNDARY}--\r\n`);
  await refused(400, await multipart(badHeader), /could not be read/, 'malformed part header');
});

test('a client vanishing mid-upload leaves nothing behind (multipart and raw bodies)', async () => {
  const start = multipartBody(BOUNDARY, [{ name: 'bundleFile', filename: 'export.json', type: 'application/json', data: VALID }], false);
  const headers = { authorization: `Bearer ${s.key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
  await postAndVanish(s.url, '/api/import-libraries', { headers, body: start, declaredLength: start.length + 100_000, ready: () => uploads().length > 0 });
  await waitFor(() => uploads().length === 0, 10_000);
  const raw = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' };
  await postAndVanish(s.url, '/api/import-libraries', { headers: raw, body: VALID, declaredLength: VALID.length + 100_000, ready: () => uploads().length > 0 });
  await waitFor(() => uploads().length === 0, 10_000);
  // The server goes on answering.
  assert.equal((await s.api('/ping')).status, 200);
});

test('a zip whose header under-declares an entry (2,000 bytes said, 150 MB inside) is a 400; nothing is inflated past it', async () => {
  const inside = Buffer.alloc(150 * 1024 * 1024, 0x20);
  inside.write('{"libraries": [', 0);
  const lying = makeZip([{ name: 'export.json', data: inside, declaredSize: 2000 }]);
  assert.ok(lying.length < MAX, `the archive itself (${lying.length} bytes) is under the upload limit`);
  await refused(400, await zipUpload(lying), /is damaged: export\.json unpacks to more than the 2000 bytes its header declares/, 'lying size');
  // Over-declared (the header says more than is there) is as damaged.
  const over = makeZip([{ name: 'export.json', data: VALID, declaredSize: VALID.length + 10 }]);
  await refused(400, await zipUpload(over), /unpacks to fewer than/, 'over-declared size');
});

test('a zip bomb is a 413 by its headers, before anything is inflated', async () => {
  const bomb = makeZip([
    { name: 'a.json', data: Buffer.alloc(2 * 1024 * 1024, 0x20) },
    { name: 'b.json', data: Buffer.alloc(2 * 1024 * 1024, 0x20) },
  ]);
  await refused(413, await zipUpload(bomb), /The zip file expands to 4 MB \(limit 3 MB\)/, 'bomb');
});

test('corrupt, truncated and empty zips, and empty bodies, are 400s', async () => {
  const good = makeZip([{ name: 'export.json', data: VALID }]);
  await refused(400, await zipUpload(good.subarray(0, Math.floor(good.length / 2))), /cannot be read/, 'truncated zip');
  await refused(400, await zipUpload(Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(200, 7)])), /cannot be read/, 'garbage after the signature');
  const scrambled = Buffer.from(good);
  scrambled.fill(0xff, 40, 80);
  await refused(400, await zipUpload(scrambled), /is damaged/, 'corrupt deflate data');
  await refused(400, await zipUpload(makeZip([])), /holds no \.json bundle/, 'empty archive');
  await refused(400, await zipUpload(makeZip([{ name: 'readme.txt', data: 'hello' }])), /holds no \.json bundle/, 'no bundle inside');
  await refused(
    400,
    await zipUpload(makeZip([{ name: 'export.json', data: '{"libraries": [' }])),
    /export\.json: .*(ends early|not valid JSON)/,
    'a bad bundle inside',
  );
  await refused(400, await zipUpload(Buffer.alloc(0)), /empty/, 'empty raw body');
  const empty = multipartBody(BOUNDARY, [{ name: 'bundleFile', filename: 'export.json', type: 'application/json', data: '' }]);
  await refused(400, await multipart(empty), /empty/, 'empty file');
});

test('wrong content types, fields too large, too many files or fields', async () => {
  const plain = await s.api('/api/import-libraries', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
  await refused(415, plain, /Content-Type "text\/plain" is not accepted/, 'text/plain');
  const none = await rawPost(s.url, '/api/import-libraries', { headers: { authorization: `Bearer ${s.key}` }, body: VALID });
  await refused(415, none, /is not accepted/, 'no content type');
  const file = { name: 'bundleFile', filename: 'export.json', type: 'application/json', data: VALID };
  await refused(
    413,
    await multipart(multipartBody(BOUNDARY, [{ name: 'force', data: 'x'.repeat(70 * 1024) }, file])),
    /form field force is too long/,
    'field too large',
  );
  await refused(413, await multipart(multipartBody(BOUNDARY, [file, { ...file, name: 'file' }])), /Too many files/, 'two files');
  const fields = Array.from({ length: 25 }, (_, i) => ({ name: `f${i}`, data: 'x' }));
  await refused(413, await multipart(multipartBody(BOUNDARY, [...fields, file])), /Too many form fields/, 'too many fields');
  await refused(400, await multipart(multipartBody(BOUNDARY, [{ ...file, name: 'upload' }])), /Unexpected file field "upload"/, 'unknown file field');
  await refused(
    413,
    await multipart(multipartBody(BOUNDARY, [{ ...file, data: Buffer.alloc(MAX + 1, 0x20) }])),
    /larger than the import limit/,
    'file too large',
  );
});

test('after all of it, a good upload still imports', async () => {
  const form = new FormData();
  form.set('bundleFile', new Blob([new Uint8Array(makeZip([{ name: 'export.json', data: VALID }]))]), 'export.zip');
  const r = await s.api('/api/import-libraries', { method: 'POST', body: form });
  assert.equal(r.status, 200, await r.clone().text());
  assert.ok(((await r.json()) as { queued: string[] }).queued.length > 0);
});
