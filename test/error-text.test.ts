import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reduceErrorText } from '../server/search/error-text.ts';
import { analyzeQuery } from '../server/search/query.ts';

test('a Node stack trace keeps its message and code, drops frames, paths and positions', () => {
  const r = reduceErrorText(
    [
      'FastifyError [FST_ERR_CTP_INVALID_MEDIA_TYPE]: Unsupported Media Type: application/xml',
      '    at ContentTypeParser.run (/app/node_modules/fastify/lib/contentTypeParser.js:180:14)',
      '    at FSWatcher.<computed> [as _handle] (node:internal/fs/watchers:207:21)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5) {',
      "  code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',",
      '  statusCode: 415',
      '}',
    ].join('\n'),
  );
  assert.equal(r.pasted, true);
  assert.deepEqual(r.codes, ['FST_ERR_CTP_INVALID_MEDIA_TYPE']);
  assert.match(r.text, /^FastifyError \[FST_ERR_CTP_INVALID_MEDIA_TYPE\]: Unsupported Media Type: application\/xml/);
  assert.doesNotMatch(r.text, /contentTypeParser|node:internal|180|207|processTicks/);
});

test('a TypeScript error keeps the message and the code line, not the position, carets or summary', () => {
  const r = reduceErrorText(
    "src/index.ts:14:7 - error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.\n\n" +
      "14   app.get(123, (c) => c.text('x'))\n         ~~~\n\nFound 1 error in src/index.ts:14",
  );
  assert.equal(r.pasted, true);
  assert.deepEqual(r.codes, ['TS2345']);
  assert.match(r.text, /error TS2345: Argument of type 'string' is not assignable/);
  assert.match(r.text, /app\.get\(123/);
  assert.doesNotMatch(r.text, /14:7|~~~|Found 1 error/);
});

test('a code frame keeps its code without the gutter; import specifiers survive', () => {
  const r = reduceErrorText(
    [
      '[vite] Internal server error: Failed to resolve import "@/components/Button" from "src/App.tsx". Does the file exist?',
      '  Plugin: vite:import-analysis',
      '  File: /home/me/app/src/App.tsx:3:19',
      "  3  |  import Button from '@/components/Button'",
      '     |                      ^',
    ].join('\n'),
  );
  assert.equal(r.pasted, true);
  assert.match(r.text, /Failed to resolve import "@\/components\/Button"/);
  assert.match(r.text, /^import Button from '@\/components\/Button'$/m);
  assert.doesNotMatch(r.text, /home\/me|3:19|\^/);
});

test('system error codes are found; timestamps and ids are dropped; repeated lines count once', () => {
  const line = "2026-11-23T10:00:00.123Z Error: ENOSPC: System limit for number of file watchers reached, watch '/home/u/proj/src' 0x7ffd12345678";
  const r = reduceErrorText(`${line}\n${line}\n    at FSWatcher._handle (node:internal/fs/watchers:207:21)`);
  assert.deepEqual(r.codes, ['ENOSPC']);
  // The watched directory is the project's own: its name says nothing.
  assert.equal(r.text, "Error: ENOSPC: System limit for number of file watchers reached, watch ' '");
});

test('a plain question is left alone', () => {
  const q = 'How do I register a plugin in fastify? It says ERR_X sometimes, z.object/z.string';
  const r = reduceErrorText(q);
  assert.equal(r.pasted, false);
  assert.equal(r.text, q);
});

test('an address a plain question quotes is reduced to the page it names; the question keeps naming its product', () => {
  const asked = 'what does https://fastify.dev/docs/latest/Reference/Server/#trustproxy do?';
  const r = reduceErrorText(asked);
  assert.equal(r.pasted, false);
  assert.equal(r.text, 'what does  Server trustproxy  do?');
  assert.deepEqual(analyzeQuery(asked).terms, ['server', 'trustproxy']);
});

test('analyzeQuery ranks on the reduced text and keeps the asked text', () => {
  const asked =
    'TypeError: c.req.valid is not a function\n    at handler (/srv/app/src/routes/users.ts:41:23)\n    at dispatch (/srv/app/node_modules/hono/dist/compose.js:22:23)';
  const q = analyzeQuery(asked);
  assert.equal(q.text, asked);
  assert.equal(q.searchText, 'TypeError: c.req.valid is not a function');
  assert.ok(q.identifiers.includes('c.req.valid'));
  assert.ok(!q.terms.includes('compose') && !q.terms.includes('41'));
});

test('JSON output keeps its messages and codes: a pino log line, an error body, printed issues', () => {
  const log =
    '{"level":50,"time":1732011112000,"pid":1,"hostname":"web-1","reqId":"req-1","req":{"method":"GET","url":"/"},"err":{"type":"FastifyError","message":"Reply was already sent","code":"FST_ERR_REP_ALREADY_SENT"},"msg":"request errored"}';
  const r = reduceErrorText(log);
  assert.equal(r.pasted, true);
  assert.equal(r.text, 'FastifyError Reply was already sent FST_ERR_REP_ALREADY_SENT request errored');
  const body = reduceErrorText(
    'curl -X POST localhost:3000/import\n{"statusCode":413,"code":"FST_ERR_CTP_BODY_TOO_LARGE","error":"Payload Too Large","message":"Request body is too large"}\nwhy?',
  );
  assert.match(body.text, /FST_ERR_CTP_BODY_TOO_LARGE Payload Too Large Request body is too large/);
  assert.doesNotMatch(body.text, /413|statusCode/);
  const zod = reduceErrorText(
    'ZodError: [\n  {\n    "code": "unrecognized_keys",\n    "keys": [\n      "utm_source"\n    ],\n    "path": [],\n    "message": "Unrecognized key: \\"utm_source\\""\n  }\n]',
  );
  assert.equal(zod.text, 'ZodError: unrecognized_keys utm_source Unrecognized key: "utm_source"');
});

test('pasted output loses the words every error message has, a question keeps them', () => {
  const pasted = analyzeQuery(
    "Uncaught TypeError: Can't modify immutable headers.\n    at cors (file:///app/node_modules/hono/dist/middleware/cors/index.js:79:17)",
  );
  assert.ok(!pasted.terms.includes('uncaught') && !pasted.terms.includes('typeerror') && !pasted.terms.includes('error'), pasted.terms.join(' '));
  assert.ok(pasted.terms.includes('immutable') && pasted.terms.includes('headers'));
  const asked = analyzeQuery('custom error handler for uncaught errors');
  assert.ok(asked.terms.includes('error') && asked.terms.includes('uncaught'));
});

test("the project's own source files are dropped, configuration files kept", () => {
  const r = reduceErrorText(
    [
      'src/middleware/auth.ts:12:11 - error TS2769: No overload matches this call.',
      ' FAIL  src/api/client.test.ts [ src/api/client.test.ts ]',
      'failed to load config from /app/vite.config.ts',
      '    at loadConfig (/app/node_modules/vite/dist/node/chunks/config.js:1:2)',
    ].join('\n'),
  );
  assert.equal(r.pasted, true);
  assert.doesNotMatch(r.text, /auth|client|test\.ts/, 'auth.ts would match bearer-auth pages; client.test.ts says nothing');
  assert.match(r.text, /vite\.config\.ts/);
  assert.match(r.text, /No overload matches this call/);
});

test('a terminal session (prompt, test runner marks) is pasted output: its paths and project directory go', () => {
  const q = analyzeQuery(
    '$ npx vitest run --pool=threads\n\n RUN  v5.0.2 /home/ci/image-service\n\n ✓ src/utils/format.test.ts (12 tests) 8ms\n' +
      'Segmentation fault (core dumped)\nerror Command failed with exit code 139.',
  );
  assert.ok(q.terms.includes('segmentation') && q.terms.includes('vitest'));
  assert.ok(!q.terms.some((t) => /image|service|format|utils/.test(t)), q.terms.join(' '));
});

test('an address in an error message is reduced to the page it names (last segment and fragment)', () => {
  const r = reduceErrorText(
    'FastifyError [FST_ERR_MISSING_MIDDLEWARE]: You must register a plugin for handling middlewares, visit fastify.dev/docs/latest/Reference/Middleware/ for more info.\n' +
      '    at Object.use (/app/node_modules/fastify/fastify.js:1:1)\n' +
      'Read more: https://vitest.dev/api/vi.html#vi-mock',
  );
  assert.match(r.text, /visit Middleware for more info/);
  assert.match(r.text, /Read more: vi vi mock/);
  assert.doesNotMatch(r.text, /fastify\.dev|docs|latest|Reference|https/);
});

test('a long question is searched whole: the terms of its last sentence are looked up', () => {
  // A story of 100 distinct words, then the question (about 150 terms fit; a 2,000-character question has about that many).
  const story = Array.from({ length: 100 }, (_, i) => `story${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`).join(' ');
  const q = analyzeQuery(`${story}. How do I make the server trust the forwarded header?`);
  const looked = q.termForms.flat();
  for (const t of ['trust', 'forwarded', 'header']) assert.ok(looked.includes(t), t);
});
