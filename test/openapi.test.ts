import { test } from 'node:test';
import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startTestServer } from './helpers/server.ts';
import { contextResponse, errorBody, libsSearchResponse, searchResponse } from '../server/contracts/responses.ts';
import { bundlePath, loadBundleFile } from './eval/bundles.ts';

test('GET /api/openapi.json describes the API from the contracts: valid OpenAPI 3.1, the spec version, the enforced limits, real answers match', async (t) => {
  const s = await startTestServer();
  t.after(() => s.close());
  const res = await s.api('/api/openapi.json', { auth: null });
  assert.equal(res.status, 200);
  const doc = (await res.json()) as {
    openapi: string;
    info: { version: string };
    paths: Record<string, Record<string, { parameters?: { name: string; schema: { maxLength?: number } }[] }>>;
  };
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.info.version, '2.0.0', 'the interface spec: the description declares version 2.0.0');
  await SwaggerParser.validate(structuredClone(doc) as never);
  for (const p of ['/api/v3/search', '/api/v2/context', '/api/v2/libs/search', '/api/import-libraries', '/api/parse-website', '/api/jobs/{id}', '/api/v2/keys'])
    assert.ok(doc.paths[p], p);

  // The described limit is the enforced one.
  const contextQuery = doc.paths['/api/v2/context']!.get!.parameters!.find((x) => x.name === 'query')!;
  assert.equal(contextQuery.schema.maxLength, 500);
  const tooLong = await s.api(`/api/v2/context?libraryId=/pinojs/pino&query=${'a'.repeat(501)}`, { auth: null });
  assert.equal(tooLong.status, 400);
  errorBody.parse(await tooLong.json());

  // Real answers have the described shapes.
  await loadBundleFile(s.services.writer, bundlePath('pino'));
  const ctx = await s.api('/api/v2/context?libraryId=/pinojs/pino&query=redact%20fields&type=json', { auth: null });
  assert.equal(ctx.status, 200);
  contextResponse.strict().parse(await ctx.json());
  const search = await s.api('/api/v3/search?query=redact%20fields&library=pino&type=json', { auth: null });
  searchResponse.parse(await search.json());
  const libs = await s.api('/api/v2/libs/search?libraryName=pino&query=logging', { auth: null });
  libsSearchResponse.parse(await libs.json());
});
