import { createRequire } from 'node:module';
import * as yaml from 'js-yaml';
import { ApiError } from '../../lib/errors.ts';
import { str, type Obj } from './openapi-schema.ts';

/** Reading an OpenAPI 3.0/3.1 or Swagger 2.0 document: YAML/JSON parsing with positions in errors, structure checks, validation, dereferencing. */

export interface OpenApiDocument {
  /** The dereferenced document (may contain circular references). */
  doc: Obj;
  kind: 'openapi3' | 'swagger2';
  specVersion: string;
  title: string;
  version: string;
  description: string;
  operations: number;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The YAML parser swagger-parser itself uses (js-yaml 4): it accepts real-world specs that the
 * stricter js-yaml 5 of this project rejects (Docker's spec has flow mappings closed at the parent's
 * indentation). Resolved through swagger-parser's own dependency chain, so it is always present.
 */
function legacyYaml(): { load(text: string, opts: { schema: unknown; filename?: string }): unknown; CORE_SCHEMA: unknown } | null {
  try {
    const req = createRequire(import.meta.url);
    const refParser = req.resolve('@apidevtools/json-schema-ref-parser');
    return createRequire(refParser)('js-yaml') as never;
  } catch {
    return null;
  }
}

/** Parses JSON or YAML text; a syntax error becomes a 400 naming the file, line and column. */
export function parseSpecText(text: string, name: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  if (!body.trim()) throw new ApiError('validation_error', `${name}: the file is empty.`);
  if (/^\s*[{[]/.test(body)) {
    try {
      return JSON.parse(body);
    } catch (err) {
      const msg = (err as Error).message;
      const pos = /position (\d+)/.exec(msg);
      const where = pos ? ` at ${lineCol(body, Number(pos[1]))}` : '';
      throw new ApiError('validation_error', `${name}: JSON parse error${where}: ${msg.replace(/ in JSON at position \d.*$/, '')}`);
    }
  }
  try {
    return yaml.load(body, { schema: yaml.CORE_SCHEMA, filename: name });
  } catch (strictErr) {
    const legacy = legacyYaml();
    if (!legacy) throw yamlError(name, strictErr);
    try {
      return legacy.load(body, { schema: legacy.CORE_SCHEMA });
    } catch (legacyErr) {
      // Both parsers refuse it: report the lenient parser's reason (it names the actual defect, e.g. an unclosed flow sequence).
      throw yamlError(name, legacyErr);
    }
  }
}

function yamlError(name: string, err: unknown): ApiError {
  const e = err as { reason?: string; mark?: { line: number; column: number }; message?: string };
  const where = e.mark ? ` at line ${e.mark.line + 1}, column ${e.mark.column + 1}` : '';
  const reason = e.reason ?? (e.message ?? String(err)).split('\n')[0];
  return new ApiError('validation_error', `${name}: YAML parse error${where}: ${reason}`);
}

function lineCol(text: string, pos: number): string {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - before.lastIndexOf('\n');
  return `line ${line}, column ${col}`;
}

/** Parses, checks the OpenAPI/Swagger structure, validates and dereferences (internal $refs only: no file or network access). */
export async function loadOpenApi(text: string, name: string, options: { validate?: boolean } = {}): Promise<OpenApiDocument> {
  const raw = parseSpecText(text, name);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new ApiError('validation_error', `${name}: not an OpenAPI document (expected an object at the top level).`);
  const top = raw as Obj;
  const openapi = typeof top.openapi === 'string' ? top.openapi : null;
  const swagger = top.swagger !== undefined ? String(top.swagger) : null;
  if (!openapi && !swagger) throw new ApiError('validation_error', `${name}: not an OpenAPI document (no "openapi" or "swagger" version field).`);
  if (openapi && !/^3\.[01]\./.test(openapi))
    throw new ApiError('validation_error', `${name}: unsupported OpenAPI version ${openapi} (3.0.x and 3.1.x are supported).`);
  if (swagger && swagger !== '2.0') throw new ApiError('validation_error', `${name}: unsupported Swagger version ${swagger} (2.0 is supported).`);
  if (!top.paths || typeof top.paths !== 'object') {
    if (!(openapi?.startsWith('3.1') && top.webhooks)) throw new ApiError('validation_error', `${name}: the document has no "paths".`);
  }
  let doc: Obj;
  const parserOptions = { resolve: { external: false }, dereference: { circular: true } } as never;
  // Loaded when a spec arrives: most processes (each CLI command) never parse one.
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  try {
    // Jobs re-load a spec that was validated when it was submitted: dereferencing is enough there.
    doc = (options.validate === false
      ? await SwaggerParser.dereference(top as never, parserOptions)
      : await SwaggerParser.validate(structuredClone(top) as never, parserOptions)) as unknown as Obj;
  } catch (err) {
    const message = ((err as Error).message ?? String(err))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(0, 4)
      .join(' ');
    throw new ApiError('validation_error', `${name}: invalid ${openapi ? `OpenAPI ${openapi}` : 'Swagger 2.0'} document: ${message.slice(0, 600)}`);
  }
  const info = (doc.info ?? {}) as Obj;
  let operations = 0;
  for (const item of Object.values((doc.paths ?? {}) as Obj)) for (const m of METHODS) if (item && typeof item === 'object' && (item as Obj)[m]) operations++;
  return {
    doc,
    kind: openapi ? 'openapi3' : 'swagger2',
    specVersion: openapi ?? '2.0',
    title: str(info.title) || name,
    version: str(info.version),
    description: str(info.description),
    operations,
  };
}
