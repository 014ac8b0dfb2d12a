import { indentTail, jsq, paramExample, placeholder, shq, str, type Obj } from './openapi-schema.ts';

/** Request examples for one OpenAPI operation: a curl command and a JavaScript fetch call, with auth and example values. */

export interface Operation {
  method: string;
  path: string;
  op: Obj;
  params: Obj[];
}

export interface RequestBody {
  mediaType: string;
  schema: Obj | null;
  example: unknown;
  required: boolean;
  summary: string;
  formFields?: Obj[];
}

/** Where requests go; known is false when the spec names no server and $BASE_URL stands in. */
export interface BaseUrl {
  url: string;
  known: boolean;
}

/** Auth headers ([name, shell value, JS value]), query parameters, Basic credentials and a cookie. */
export interface RequestAuth {
  headers: [string, string, string][];
  query: [string, string][];
  basic: boolean;
  cookie: string | null;
}

/** Auth for the first security requirement that applies. */
export function requestAuth(requirements: Obj[], schemes: Obj): RequestAuth {
  const out: RequestAuth = { headers: [], query: [], basic: false, cookie: null };
  const req = requirements.find((r) => r && Object.keys(r).length > 0);
  if (!req) return out;
  for (const name of Object.keys(req)) {
    const s = (schemes[name] ?? {}) as Obj;
    const type = str(s.type);
    const scheme = str(s.scheme).toLowerCase();
    if (type === 'apiKey') {
      const where = str(s.in);
      if (where === 'header') out.headers.push([str(s.name), '$API_KEY', '${process.env.API_KEY}']);
      else if (where === 'query') out.query.push([str(s.name), '$API_KEY']);
      else if (where === 'cookie') out.cookie = `${str(s.name)}=$API_KEY`;
    } else if (type === 'basic' || (type === 'http' && scheme === 'basic')) {
      out.basic = true;
    } else if (type === 'http' || type === 'oauth2' || type === 'openIdConnect') {
      out.headers.push(['Authorization', 'Bearer $TOKEN', 'Bearer ${process.env.TOKEN}']);
    }
  }
  return out;
}

function urlFor(o: Operation, base: BaseUrl, auth: RequestAuth, shellVars: boolean): string {
  let path = o.path;
  for (const p of o.params.filter((x) => str(x.in) === 'path')) {
    const value = paramExample(p);
    if (value !== undefined) path = path.replace(`{${str(p.name)}}`, encodeURIComponent(String(value)));
  }
  const query: string[] = [];
  for (const p of o.params.filter((x) => str(x.in) === 'query' && (x.required || paramExample(x) !== undefined))) {
    const v = paramExample(p) ?? placeholder((p.schema ?? p) as Obj);
    query.push(`${encodeURIComponent(str(p.name))}=${encodeURIComponent(String(v))}`);
  }
  for (const [name, v] of auth.query) query.push(`${encodeURIComponent(name)}=${shellVars ? v : '${process.env.API_KEY}'}`);
  const prefix = shellVars ? base.url : base.url.replace('$BASE_URL', '${BASE_URL}');
  return `${prefix}${path}${query.length ? `?${query.join('&')}` : ''}`;
}

export function curlExample(o: Operation, body: RequestBody | null, base: BaseUrl, auth: RequestAuth): string {
  const M = o.method.toUpperCase();
  const parts = [`curl${M === 'GET' ? '' : ` -X ${M}`} "${urlFor(o, base, auth, true)}"`];
  for (const [name, shell] of auth.headers) parts.push(`-H "${name}: ${shell}"`);
  if (auth.basic) parts.push('-u "$USERNAME:$PASSWORD"');
  if (auth.cookie) parts.push(`-b "${auth.cookie}"`);
  for (const p of o.params.filter((x) => str(x.in) === 'header' && x.required))
    parts.push(`-H "${str(p.name)}: ${String(paramExample(p) ?? placeholder((p.schema ?? p) as Obj))}"`);
  if (body) {
    if (body.formFields) {
      const multipart = /multipart/.test(body.mediaType);
      for (const f of body.formFields.slice(0, 12)) {
        if (!f.required && paramExample(f) === undefined && body.formFields.length > 3) continue;
        const isFile = str(f.type) === 'file' || str(f.format) === 'binary';
        const value = isFile ? `@./${str(f.name)}` : String(paramExample(f) ?? placeholder(f));
        parts.push(multipart ? `-F '${shq(`${str(f.name)}=${value}`)}'` : `--data-urlencode '${shq(`${str(f.name)}=${value}`)}'`);
      }
    } else if (/json/.test(body.mediaType)) {
      parts.push(`-H "Content-Type: ${body.mediaType}"`);
      if (body.example !== undefined) parts.push(`-d '${shq(JSON.stringify(body.example, null, 2))}'`);
    } else {
      parts.push(`-H "Content-Type: ${body.mediaType}"`, '--data-binary @./body');
    }
  }
  return parts.join(' \\\n  ');
}

/** jsonResponse: the success response is JSON, so the example reads response.json(). */
export function fetchExample(o: Operation, body: RequestBody | null, base: BaseUrl, auth: RequestAuth, jsonResponse: boolean): string {
  const M = o.method.toUpperCase();
  const url = urlFor(o, base, auth, false);
  const headers: string[] = [];
  for (const [name, , js] of auth.headers) headers.push(`    '${name}': \`${js}\`,`);
  if (auth.basic) headers.push("    'Authorization': `Basic ${btoa(`${process.env.USERNAME}:${process.env.PASSWORD}`)}`,");
  if (auth.cookie) headers.push(`    'Cookie': \`${auth.cookie.replace('$API_KEY', '${process.env.API_KEY}')}\`,`);
  for (const p of o.params.filter((x) => str(x.in) === 'header' && x.required))
    headers.push(`    '${str(p.name)}': '${jsq(String(paramExample(p) ?? placeholder((p.schema ?? p) as Obj)))}',`);
  const lines: string[] = [];
  if (!base.known) lines.push("const BASE_URL = 'https://api.example.com'; // the specification names no server");
  let bodyLine: string | null = null;
  if (body) {
    if (body.formFields) {
      if (/multipart/.test(body.mediaType)) {
        lines.push('const form = new FormData();');
        for (const f of body.formFields.slice(0, 12)) {
          const isFile = str(f.type) === 'file' || str(f.format) === 'binary';
          lines.push(
            isFile
              ? `form.append('${jsq(str(f.name))}', new Blob([fileBytes]));`
              : `form.append('${jsq(str(f.name))}', '${jsq(String(paramExample(f) ?? placeholder(f)))}');`,
          );
        }
        bodyLine = '  body: form,';
      } else {
        const entries = body.formFields.slice(0, 12).map((f) => `${JSON.stringify(str(f.name))}: ${JSON.stringify(String(paramExample(f) ?? placeholder(f)))}`);
        bodyLine = `  body: new URLSearchParams({ ${entries.join(', ')} }),`;
      }
    } else if (/json/.test(body.mediaType)) {
      headers.push(`    'Content-Type': '${body.mediaType}',`);
      if (body.example !== undefined) bodyLine = `  body: JSON.stringify(${indentTail(JSON.stringify(body.example, null, 2), '  ')}),`;
    } else {
      headers.push(`    'Content-Type': '${body.mediaType}',`);
      bodyLine = '  body: bodyBytes,';
    }
  }
  lines.push(`const response = await fetch(\`${url.replace(/`/g, '\\`')}\`, {`);
  lines.push(`  method: '${M}',`);
  if (headers.length) lines.push('  headers: {', ...headers, '  },');
  if (bodyLine) lines.push(bodyLine);
  lines.push('});');
  lines.push(`if (!response.ok) throw new Error(\`${M} ${o.path} failed: \${response.status}\`);`);
  lines.push(jsonResponse ? 'const data = await response.json();' : 'const data = await response.text();');
  return lines.join('\n');
}
