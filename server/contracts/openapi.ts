import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../../lib/errors.ts';
import type { Operation } from './operation.ts';
import { OPERATIONS } from './index.ts';
import { errorBody } from './responses.ts';

/**
 * The OpenAPI 3.1 description of the HTTP API (GET /api/openapi.json), generated from the same
 * operation contracts the services validate with, so it cannot drift from what is enforced.
 */

/** The version the description of the search interface declares (the interface spec's, exactly). */
export const API_DESCRIPTION_VERSION = '2.0.0';

type JsonSchema = Record<string, unknown>;

/** Converts a schema; shared named schemas (`.meta({id})`) go to `components.schemas`. */
function convert(schema: z.ZodType, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  delete json.$defs;
  delete json.$schema;
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = k === '$ref' && typeof x === 'string' ? x.replace('#/$defs/', '#/components/schemas/') : rewrite(x);
      return out;
    }
    return v;
  };
  for (const [id, def] of Object.entries(defs)) components[id] = rewrite(def) as JsonSchema;
  return rewrite(json) as JsonSchema;
}

function parameters(op: Operation, components: Record<string, JsonSchema>): { params: JsonSchema[]; body: JsonSchema | null } {
  const schema = convert(op.input, 'input', components);
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const pathNames = [...op.http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const params: JsonSchema[] = pathNames.map((name) => ({ name, in: 'path', required: true, schema: props[name] ?? { type: 'string' } }));
  const rest = Object.entries(props).filter(([name]) => !pathNames.includes(name));
  if (op.http.from === 'query' || op.http.from === 'path+query') {
    for (const [name, p] of rest) {
      const { description, ...s } = p;
      params.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(description ? { description } : {}),
        schema: s,
        ...(s.type === 'array' ? { style: 'form', explode: true } : {}),
      });
    }
    return { params, body: null };
  }
  if (op.http.from === 'path') return { params, body: null };
  const fields = { type: 'object', properties: Object.fromEntries(rest), required: rest.map(([n]) => n).filter((n) => required.has(n)) };
  return { params, body: fields };
}

function requestBody(op: Operation, fields: JsonSchema | null): JsonSchema | undefined {
  if (!fields) return undefined;
  if (op.http.from !== 'multipart') return { required: true, content: { 'application/json': { schema: fields } } };
  const props = { ...(fields.properties as Record<string, JsonSchema>) };
  for (const f of op.http.files ?? []) {
    const file = { type: 'string', contentMediaType: 'application/octet-stream', description: f.description };
    props[f.name] = f.maxCount > 1 ? { type: 'array', items: file, maxItems: f.maxCount } : file;
  }
  return { required: true, content: { 'multipart/form-data': { schema: { ...fields, properties: props } } } };
}

function responses(op: Operation, components: Record<string, JsonSchema>): JsonSchema {
  const ok: JsonSchema = { description: op.summary };
  if (op.http.response) {
    const content: JsonSchema = { 'application/json': { schema: convert(op.http.response, 'output', components) } };
    if (op.http.text) content['text/plain'] = { schema: { type: 'string' } };
    ok.content = content;
  }
  const out: JsonSchema = { [String(op.http.status)]: ok };
  const codes = new Set<string>(['validation_error', ...(op.errors ?? [])]);
  if (op.input instanceof z.ZodObject && Object.keys(op.input.shape).length === 0 && op.http.from === 'query') codes.delete('validation_error');
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code as ErrorCode] ?? 500;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = { description: `\`error\`: ${list.join(', ')}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }
  return out;
}

function security(op: Operation): JsonSchema[] {
  if (op.access.caller === 'open') return [];
  if (op.access.caller === 'search') return [{ bearer: [] }, {}];
  return [{ bearer: [] }];
}

function accessNote(op: Operation): string {
  const a = op.access;
  if (a.caller === 'open') return 'No key needed.';
  if (a.caller === 'search') return 'A key is optional unless the instance requires one for search.';
  const parts = [a.roles ? `A key of an ${a.roles.join(' or ')}.` : 'A key.'];
  if (a.license) parts.push(`A valid license${typeof a.license === 'string' ? ` with the feature "${a.license}"` : ''}.`);
  if (a.source) parts.push(`The teamspace policy must allow ${a.source} sources.`);
  return parts.join(' ');
}

export function openApiDocument(serverVersion: string, operations: readonly Operation[] = OPERATIONS): JsonSchema {
  const components: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const { params, body } = parameters(op, components);
    (paths[op.http.path] ??= {})[op.http.method] = {
      operationId: op.id,
      summary: op.summary,
      description: accessNote(op),
      ...(params.length ? { parameters: params } : {}),
      ...(requestBody(op, body) ? { requestBody: requestBody(op, body) } : {}),
      responses: responses(op, components),
      security: security(op),
    };
  }
  // A named schema at the root comes back as a $ref to its extracted definition.
  const error = convert(errorBody, 'output', components);
  if (!error.$ref) components.Error = error;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Stacks documentation search API',
      version: API_DESCRIPTION_VERSION,
      description: `Search and indexing API of a self-hosted Stacks instance (server ${serverVersion}). Errors answer {error, message}.`,
    },
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key: Authorization: Bearer stk_... (X-API-Key and STACKS_API_KEY are accepted too)' },
      },
    },
  };
}
