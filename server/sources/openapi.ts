import type { CodeExample, SnippetInput } from '../../lib/model.ts';
import { METHODS, type OpenApiDocument } from './openapi-load.ts';
import { curlExample, fetchExample, requestAuth, type BaseUrl, type Operation, type RequestBody } from './openapi-requests.ts';
import { arr, collectProps, compactExample, oneLine, str, truncate, type Obj } from './openapi-schema.ts';

/**
 * OpenAPI 3.0/3.1 and Swagger 2.0 -> snippets: one CodeSnippet per operation (curl and
 * JavaScript fetch request examples, parameters, response schema summary) and InfoSnippets for
 * the API overview, tags, security schemes and schemas. The curl/fetch text is built in openapi-requests.ts.
 */

export interface OpenApiSnippetOptions {
  /** URL of the spec (or upload://...), used for codeId/pageId and to resolve relative server URLs. */
  sourceUrl: string;
  /** Title shown as pageTitle and breadcrumb root (defaults to info.title). */
  title?: string;
}

export function openApiToSnippets(api: OpenApiDocument, options: OpenApiSnippetOptions): SnippetInput[] {
  const ctx = new SpecContext(api, options);
  return [...ctx.overview(), ...ctx.operations(), ...ctx.tags(), ...ctx.securitySchemes(), ...ctx.schemas()];
}

class SpecContext {
  private readonly doc: Obj;
  private readonly names = new Map<object, string>();
  private readonly title: string;
  private readonly base: BaseUrl;
  private readonly ops: Operation[] = [];

  constructor(
    private readonly api: OpenApiDocument,
    private readonly options: OpenApiSnippetOptions,
  ) {
    this.doc = api.doc;
    this.title = options.title || api.title;
    const schemas = this.schemaMap();
    for (const [name, schema] of Object.entries(schemas)) if (schema && typeof schema === 'object') this.names.set(schema, name);
    this.base = this.baseUrl();
    for (const [path, itemRaw] of Object.entries((this.doc.paths ?? {}) as Obj)) {
      const item = (itemRaw ?? {}) as Obj;
      for (const method of METHODS) {
        const op = item[method] as Obj | undefined;
        if (!op) continue;
        // Operation parameters override path-level ones with the same name and location.
        const merged = new Map<string, Obj>();
        for (const p of [...arr(item.parameters), ...arr(op.parameters)] as Obj[]) merged.set(`${str(p.in)}:${str(p.name)}`, p);
        this.ops.push({ method, path, op, params: [...merged.values()] });
      }
    }
  }

  private schemaMap(): Obj {
    if (this.api.kind === 'swagger2') return (this.doc.definitions ?? {}) as Obj;
    return (((this.doc.components ?? {}) as Obj).schemas ?? {}) as Obj;
  }

  private baseUrl(): BaseUrl {
    if (this.api.kind === 'swagger2') {
      const basePath = str(this.doc.basePath).replace(/\/$/, '');
      const host = str(this.doc.host);
      if (!host) return { url: `$BASE_URL${basePath}`, known: false };
      const scheme = (arr(this.doc.schemes) as string[]).includes('https') || arr(this.doc.schemes).length === 0 ? 'https' : str(arr(this.doc.schemes)[0]);
      return { url: `${scheme}://${host}${basePath}`, known: true };
    }
    const server = arr(this.doc.servers)[0] as Obj | undefined;
    if (!server || !str(server.url)) return { url: '$BASE_URL', known: false };
    const vars = (server.variables ?? {}) as Obj;
    let url = str(server.url).replace(/\{([^}]+)\}/g, (m, v: string) => {
      const def = (vars[v] as Obj | undefined)?.default;
      return def !== undefined ? String(def) : m;
    });
    url = url.replace(/\/$/, '');
    if (/^https?:\/\//.test(url)) return { url, known: true };
    if (/^https?:/.test(this.options.sourceUrl)) {
      try {
        return { url: new URL(url || '/', this.options.sourceUrl).href.replace(/\/$/, ''), known: true };
      } catch {
        /* fall through */
      }
    }
    return { url: `$BASE_URL${url.startsWith('/') ? url : ''}`, known: false };
  }

  private anchor(fragment: string): string {
    return `${this.options.sourceUrl}#${fragment}`;
  }

  overview(): SnippetInput[] {
    const lines = [
      `${this.title}${this.api.version ? ` (version ${this.api.version})` : ''}`,
      `Specification: ${this.api.kind === 'swagger2' ? 'Swagger 2.0' : `OpenAPI ${this.api.specVersion}`}, ${this.ops.length} operations.`,
    ];
    if (this.api.description) lines.push('', truncate(this.api.description, 4000));
    lines.push('', `Base URL: ${this.base.known ? this.base.url : `${this.base.url} (the specification names no server)`}`);
    const servers = arr(this.doc.servers) as Obj[];
    if (servers.length > 1) lines.push('Servers:', ...servers.map((s) => `- ${str(s.url)}${s.description ? `: ${str(s.description)}` : ''}`));
    return [
      {
        kind: 'info',
        sourceId: this.anchor('overview'),
        content: lines.join('\n'),
        breadcrumb: this.title,
        pageTitle: this.title,
        title: `${this.title} overview`,
      },
    ];
  }

  operations(): SnippetInput[] {
    return this.ops.map((o) => this.operation(o));
  }

  private operation(o: Operation): SnippetInput {
    const { method, path, op, params } = o;
    const M = method.toUpperCase();
    const title = `${M} ${path}`;
    const tag = str(arr(op.tags)[0]);
    const opId = str(op.operationId);
    const lines: string[] = [];
    if (op.summary) lines.push(str(op.summary));
    if (op.description && str(op.description) !== str(op.summary)) lines.push(truncate(str(op.description), 1500));
    if (op.deprecated) lines.push('Deprecated.');
    const visible = params.filter((p) => str(p.in) !== 'body');
    if (visible.length) {
      lines.push('Parameters:');
      for (const p of visible) {
        const schema = (p.schema ?? p) as Obj;
        lines.push(
          `- ${str(p.name)} (${str(p.in)}, ${this.typeName(schema, 1)}${p.required ? ', required' : ''})${p.description ? `: ${oneLine(str(p.description), 200)}` : ''}`,
        );
      }
    }
    const body = this.requestBody(o);
    if (body) lines.push(`Request body (${body.mediaType})${body.required ? ', required' : ''}: ${body.summary}`);
    const responses = Object.entries((op.responses ?? {}) as Obj).slice(0, 8);
    if (responses.length) {
      lines.push('Responses:');
      for (const [code, rRaw] of responses) {
        const r = (rRaw ?? {}) as Obj;
        const { mediaType, schema } = this.responseSchema(r);
        const shape = schema ? `: ${this.typeSummary(schema)}` : '';
        lines.push(`- ${code}${mediaType ? ` (${mediaType})` : ''}${r.description ? ` ${oneLine(str(r.description), 160)}` : ''}${shape}`);
      }
    }
    const auth = requestAuth((op.security ?? this.doc.security ?? []) as Obj[], this.securityDefinitions());
    const codeList: CodeExample[] = [
      { language: 'bash', code: curlExample(o, body, this.base, auth) },
      { language: 'javascript', code: fetchExample(o, body, this.base, auth, this.jsonSuccess(op)) },
    ];
    const success = responses.find(([code]) => /^2/.test(code));
    if (success) {
      const { mediaType, schema } = this.responseSchema((success[1] ?? {}) as Obj);
      const mediaExample = this.mediaExample((success[1] ?? {}) as Obj);
      const example = mediaExample !== undefined ? mediaExample : schema && /json/.test(mediaType) ? compactExample(schema) : undefined;
      if (example !== undefined) codeList.push({ language: 'json', code: JSON.stringify(example, null, 2) });
    }
    return {
      kind: 'code',
      sourceId: this.anchor(opId ? `operation/${opId}` : `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}`),
      title,
      description: lines.join('\n'),
      language: 'bash',
      pageTitle: this.title,
      breadcrumb: [this.title, tag, opId].filter(Boolean).join(' > '),
      codeList,
    };
  }

  private requestBody(o: Operation): RequestBody | null {
    if (this.api.kind === 'swagger2') {
      const bodyParam = o.params.find((p) => str(p.in) === 'body');
      const form = o.params.filter((p) => str(p.in) === 'formData');
      const consumes = (arr(o.op.consumes).length ? arr(o.op.consumes) : arr(this.doc.consumes)) as string[];
      if (bodyParam) {
        const schema = (bodyParam.schema ?? {}) as Obj;
        const mediaType = consumes.find((c) => /json/.test(c)) ?? consumes[0] ?? 'application/json';
        return {
          mediaType,
          schema,
          example: /json/.test(mediaType) ? compactExample(schema) : undefined,
          required: !!bodyParam.required,
          summary: this.typeSummary(schema),
        };
      }
      if (form.length) {
        const multipart = form.some((f) => str(f.type) === 'file') || consumes.includes('multipart/form-data');
        return {
          mediaType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
          schema: null,
          example: undefined,
          required: form.some((f) => !!f.required),
          summary: form.map((f) => str(f.name)).join(', '),
          formFields: form,
        };
      }
      return null;
    }
    const rb = o.op.requestBody as Obj | undefined;
    if (!rb) return null;
    const content = (rb.content ?? {}) as Obj;
    const types = Object.keys(content);
    const mediaType = types.find((t) => /json/.test(t)) ?? types[0];
    if (!mediaType) return null;
    const media = (content[mediaType] ?? {}) as Obj;
    const schema = (media.schema ?? null) as Obj | null;
    let example: unknown = media.example;
    if (example === undefined && media.examples && typeof media.examples === 'object') example = ((Object.values(media.examples as Obj)[0] ?? {}) as Obj).value;
    if (example === undefined && schema && /json/.test(mediaType)) example = compactExample(schema);
    let formFields: Obj[] | undefined;
    if (schema && /form/.test(mediaType)) {
      const props = (schema.properties ?? {}) as Obj;
      formFields = Object.entries(props).map(([name, s]) => ({ name, ...(s as Obj), required: arr(schema.required).includes(name) }));
    }
    return { mediaType, schema, example, required: !!rb.required, summary: schema ? this.typeSummary(schema) : mediaType, formFields };
  }

  private responseSchema(r: Obj): { mediaType: string; schema: Obj | null } {
    if (this.api.kind === 'swagger2') {
      const produces = (arr(this.doc.produces) as string[])[0] ?? '';
      return { mediaType: r.schema ? produces || 'application/json' : '', schema: (r.schema ?? null) as Obj | null };
    }
    const content = (r.content ?? {}) as Obj;
    const types = Object.keys(content);
    const mediaType = types.find((t) => /json/.test(t)) ?? types[0] ?? '';
    return { mediaType, schema: mediaType ? ((((content[mediaType] ?? {}) as Obj).schema ?? null) as Obj | null) : null };
  }

  private mediaExample(r: Obj): unknown {
    if (this.api.kind === 'swagger2') {
      const ex = (r.examples ?? {}) as Obj;
      const json = Object.entries(ex).find(([k]) => /json/.test(k));
      return json ? json[1] : undefined;
    }
    const content = (r.content ?? {}) as Obj;
    const media = (Object.entries(content).find(([k]) => /json/.test(k))?.[1] ?? null) as Obj | null;
    if (!media) return undefined;
    if (media.example !== undefined) return media.example;
    if (media.examples && typeof media.examples === 'object') return ((Object.values(media.examples as Obj)[0] ?? {}) as Obj).value;
    return undefined;
  }

  /** Whether the first 2xx response is JSON (the fetch example then reads response.json()). */
  private jsonSuccess(op: Obj): boolean {
    const success = Object.entries((op.responses ?? {}) as Obj).find(([c]) => /^2/.test(c));
    return success ? /json/.test(this.responseSchema((success[1] ?? {}) as Obj).mediaType) : false;
  }

  private securityDefinitions(): Obj {
    if (this.api.kind === 'swagger2') return (this.doc.securityDefinitions ?? {}) as Obj;
    return (((this.doc.components ?? {}) as Obj).securitySchemes ?? {}) as Obj;
  }

  tags(): SnippetInput[] {
    const declared = new Map<string, string>();
    for (const t of arr(this.doc.tags) as Obj[]) declared.set(str(t.name), str(t.description));
    const byTag = new Map<string, Operation[]>();
    for (const o of this.ops) for (const t of arr(o.op.tags) as string[]) byTag.set(t, [...(byTag.get(t) ?? []), o]);
    const names = [...new Set([...declared.keys(), ...byTag.keys()])].filter(Boolean);
    return names.map((name) => {
      const ops = byTag.get(name) ?? [];
      const lines = [`Tag: ${name}`];
      if (declared.get(name)) lines.push('', truncate(declared.get(name)!, 3000));
      if (ops.length)
        lines.push(
          '',
          `Operations (${ops.length}):`,
          ...ops.map((o) => `- ${o.method.toUpperCase()} ${o.path}${o.op.summary ? `: ${oneLine(str(o.op.summary), 160)}` : ''}`),
        );
      return {
        kind: 'info' as const,
        sourceId: this.anchor(`tag/${encodeURIComponent(name)}`),
        content: lines.join('\n'),
        breadcrumb: `${this.title} > ${name}`,
        pageTitle: this.title,
        title: name,
      };
    });
  }

  securitySchemes(): SnippetInput[] {
    return Object.entries(this.securityDefinitions()).map(([name, raw]) => {
      const s = (raw ?? {}) as Obj;
      const lines = [
        `Authentication scheme: ${name} (${str(s.type)}${s.scheme ? `, ${str(s.scheme)}` : ''}${s.bearerFormat ? `, ${str(s.bearerFormat)}` : ''})`,
      ];
      if (s.description) lines.push(truncate(str(s.description), 2000));
      if (str(s.type) === 'apiKey') lines.push(`Send the key in the ${str(s.in)} named "${str(s.name)}".`);
      if (str(s.type) === 'http' && str(s.scheme).toLowerCase() === 'bearer') lines.push('Send "Authorization: Bearer <token>".');
      if (str(s.type) === 'http' && str(s.scheme).toLowerCase() === 'basic') lines.push('Send HTTP Basic credentials.');
      if (s.openIdConnectUrl) lines.push(`OpenID Connect discovery: ${str(s.openIdConnectUrl)}`);
      const flows = (s.flows ?? (s.flow ? { [str(s.flow)]: s } : {})) as Obj;
      for (const [flow, fRaw] of Object.entries(flows)) {
        const f = (fRaw ?? {}) as Obj;
        lines.push(
          `OAuth2 flow ${flow}${f.authorizationUrl ? `, authorization URL ${str(f.authorizationUrl)}` : ''}${f.tokenUrl ? `, token URL ${str(f.tokenUrl)}` : ''}`,
        );
        const scopes = Object.entries((f.scopes ?? {}) as Obj);
        if (scopes.length) lines.push('Scopes:', ...scopes.slice(0, 50).map(([k, v]) => `- ${k}: ${str(v)}`));
      }
      const users = this.ops.filter((o) => ((o.op.security ?? this.doc.security ?? []) as Obj[]).some((r) => r && name in r));
      if (users.length) lines.push(`Used by ${users.length} operation(s).`);
      return {
        kind: 'info' as const,
        sourceId: this.anchor(`security/${encodeURIComponent(name)}`),
        content: lines.join('\n'),
        breadcrumb: `${this.title} > Authentication > ${name}`,
        pageTitle: this.title,
        title: `${name} authentication`,
      };
    });
  }

  schemas(): SnippetInput[] {
    return Object.entries(this.schemaMap()).map(([name, raw]) => {
      const s = (raw ?? {}) as Obj;
      const lines = [`Schema ${name} (${this.typeName(s, 0, true)})`];
      if (s.description) lines.push('', truncate(str(s.description), 2000));
      const { props, required } = collectProps(s);
      if (props.length) {
        lines.push('', 'Properties:');
        for (const [prop, ps] of props.slice(0, 80)) {
          const p = (ps ?? {}) as Obj;
          lines.push(
            `- ${prop} (${this.typeName(p, 1)}${required.has(prop) ? ', required' : ''})${p.description ? `: ${oneLine(str(p.description), 240)}` : ''}`,
          );
        }
        if (props.length > 80) lines.push(`- ... ${props.length - 80} more`);
      }
      if (arr(s.enum).length)
        lines.push(
          `Values: ${arr(s.enum)
            .slice(0, 40)
            .map((v) => JSON.stringify(v))
            .join(', ')}`,
        );
      return {
        kind: 'info' as const,
        sourceId: this.anchor(`schema/${encodeURIComponent(name)}`),
        content: truncate(lines.join('\n'), 6000),
        breadcrumb: `${this.title} > Schemas > ${name}`,
        pageTitle: this.title,
        title: name,
      };
    });
  }

  /** Short type name: a named schema's name, else the JSON type (arrays as T[]). */
  private typeName(schema: Obj, depth: number, noSelfName = false): string {
    if (!noSelfName && depth > 0) {
      const n = this.names.get(schema);
      if (n) return n;
    }
    if (arr(schema.enum).length && depth > 0)
      return arr(schema.enum)
        .slice(0, 6)
        .map((v) => JSON.stringify(v))
        .join(' | ');
    const type = Array.isArray(schema.type) ? (schema.type as string[]).join(' | ') : str(schema.type);
    if (type === 'array' || schema.items) {
      const items = (schema.items ?? {}) as Obj;
      return `${depth > 3 ? 'unknown' : this.typeName(items, depth + 1)}[]`;
    }
    const alt = (schema.oneOf ?? schema.anyOf) as Obj[] | undefined;
    if (alt && depth < 4)
      return alt
        .slice(0, 4)
        .map((a) => this.typeName(a ?? {}, depth + 1))
        .join(' | ');
    if (schema.allOf && !type) return 'object';
    const fmt = str(schema.format);
    return (type || (schema.properties ? 'object' : 'any')) + (fmt && depth > 0 ? ` (${fmt})` : '');
  }

  /** Compact structural summary, e.g. `Identity {id: string, traits: object, ...}`. */
  typeSummary(schema: Obj): string {
    const name = this.names.get(schema);
    const target = str(schema.type) === 'array' && schema.items ? (schema.items as Obj) : schema;
    const { props, required } = collectProps(target);
    const itemName = target !== schema ? this.names.get(target) : undefined;
    const head = name ?? (target !== schema ? `${itemName ?? this.typeName(target, 1)}[]` : this.typeName(schema, 1));
    if (!props.length) return head;
    const shown = props.slice(0, 12).map(([p, s]) => `${p}${required.has(p) ? '' : '?'}: ${this.typeName((s ?? {}) as Obj, 1)}`);
    return `${head} {${shown.join(', ')}${props.length > 12 ? ', ...' : ''}}`;
  }
}
