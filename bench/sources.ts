// `npm run bench -- sources [--pdf-pages 200] [--docx-pages 100] [--openapi-mb 2]`
// Ingest time of the OpenAPI, PDF and DOCX sources through the real HTTP endpoints and job queue
// (builtin embedder, temp data dir): a generated ~2 MB OpenAPI spec served on 127.0.0.1, a
// 200-page PDF printed by Chromium from generated HTML, and a 100-page DOCX written as OOXML.
// Times: "request" = the synchronous part (fetch/validate/stage), "job" = extraction + indexing.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { startTestServer, type TestServer } from '../test/helpers/server.ts';
import { makeZip } from '../test/helpers/zip.ts';

const { values: opts } = parseArgs({
  options: {
    'pdf-pages': { type: 'string', default: '200' },
    'docx-pages': { type: 'string', default: '100' },
    'openapi-mb': { type: 'string', default: '2' },
  },
  allowPositionals: true,
});
const PDF_PAGES = Number(opts['pdf-pages']);
const DOCX_PAGES = Number(opts['docx-pages']);
const OPENAPI_BYTES = Number(opts['openapi-mb']) * 1024 * 1024;

const words =
  'request response client server header option timeout retry stream buffer parser schema token cache session proxy cookie query body status error handler plugin config'.split(
    ' ',
  );
function sentence(i: number, n = 14): string {
  const out: string[] = [];
  for (let k = 0; k < n; k++) out.push(words[(i * 7 + k * 13) % words.length]!);
  out[0] = out[0]![0]!.toUpperCase() + out[0]!.slice(1);
  // The index keeps sentences distinct, so the writer's duplicate check does not drop them.
  return `${out.join(' ')} (${i}).`;
}

/** An OpenAPI 3.0 document of about `bytes` JSON bytes: resources with CRUD operations and schemas. */
function generateOpenApi(bytes: number): { text: string; operations: number } {
  const doc: Record<string, unknown> & {
    paths: Record<string, unknown>;
    components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
  } = {
    openapi: '3.0.3',
    info: { title: 'Generated Bench API', version: '1.0.0', description: sentence(1, 40) },
    servers: [{ url: 'https://api.example.com/v1' }],
    tags: [] as unknown[],
    paths: {},
    components: { schemas: {}, securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
  };
  let operations = 0;
  for (let r = 0; r % 20 !== 0 || JSON.stringify(doc).length < bytes; r++) {
    const name = `Resource${r}`;
    (doc.tags as unknown[]).push({ name: `resource-${r}`, description: sentence(r, 20) });
    const props: Record<string, unknown> = { id: { type: 'string', format: 'uuid', readOnly: true } };
    for (let p = 0; p < 12; p++) props[`field_${p}`] = { type: p % 3 === 0 ? 'integer' : p % 3 === 1 ? 'string' : 'boolean', description: sentence(r + p, 10) };
    doc.components.schemas[name] = { type: 'object', description: sentence(r, 25), required: ['field_0', 'field_1'], properties: props };
    const ref = { $ref: `#/components/schemas/${name}` };
    const ok = (schema: unknown) => ({ description: 'OK', content: { 'application/json': { schema } } });
    doc.paths[`/resources-${r}`] = {
      get: {
        operationId: `list${name}`,
        tags: [`resource-${r}`],
        summary: `List ${name}`,
        description: sentence(r, 30),
        parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer', default: 20 } }],
        responses: { '200': ok({ type: 'array', items: ref }) },
      },
      post: {
        operationId: `create${name}`,
        tags: [`resource-${r}`],
        summary: `Create ${name}`,
        description: sentence(r + 1, 30),
        requestBody: { required: true, content: { 'application/json': { schema: ref } } },
        responses: { '201': ok(ref) },
      },
    };
    doc.paths[`/resources-${r}/{id}`] = {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { operationId: `get${name}`, tags: [`resource-${r}`], summary: `Get ${name}`, responses: { '200': ok(ref), '404': { description: 'Not found' } } },
      put: {
        operationId: `update${name}`,
        tags: [`resource-${r}`],
        summary: `Update ${name}`,
        requestBody: { content: { 'application/json': { schema: ref } } },
        responses: { '200': ok(ref) },
      },
      delete: { operationId: `delete${name}`, tags: [`resource-${r}`], summary: `Delete ${name}`, responses: { '204': { description: 'Deleted' } } },
    };
    operations += 5;
  }
  return { text: JSON.stringify(doc), operations };
}

async function generatePdf(pages: number, file: string): Promise<void> {
  const parts: string[] = [
    '<!doctype html><html><head><meta charset="utf-8"><title>Bench Manual</title><style>body{font-family:sans-serif;font-size:11pt} pre{font-family:monospace;font-size:9pt;background:#eee;padding:6px} h1{font-size:22pt} h2{font-size:16pt} section{page-break-after:always}</style></head><body>',
  ];
  for (let p = 0; p < pages; p++) {
    parts.push(`<section><h${p % 5 === 0 ? 1 : 2}>Chapter ${p}: ${words[p % words.length]} handling</h${p % 5 === 0 ? 1 : 2}>`);
    for (let k = 0; k < 5; k++) parts.push(`<p>${sentence(p * 5 + k, 60)}</p>`);
    parts.push(`<pre>const client = createClient({ timeout: ${p} });\nconst res = await client.get('/items/${p}');\nconsole.log(res.status);</pre>`);
    parts.push(`<p>${sentence(p + 3, 40)}</p></section>`);
  }
  parts.push('</body></html>');
  const browser = await chromium.launch({
    executablePath: process.env.STACKS_CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    await page.setContent(parts.join('\n'));
    await page.pdf({ path: file, format: 'A4' });
  } finally {
    await browser.close();
  }
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A minimal valid DOCX: headings, body paragraphs, SourceCode-style code paragraphs, a page break per page. */
function generateDocx(pages: number): Buffer {
  const para = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${xmlEscape(text)}</w:t></w:r></w:p>`;
  const body: string[] = [];
  for (let p = 0; p < pages; p++) {
    body.push(para(`Section ${p}: ${words[p % words.length]} configuration`, p % 4 === 0 ? 'Heading1' : 'Heading2'));
    for (let k = 0; k < 6; k++) body.push(para(sentence(p * 6 + k, 45)));
    for (const line of [
      `import { createClient } from 'bench-client';`,
      `const client = createClient({ retries: ${p % 5} });`,
      `await client.post('/items', { id: ${p} });`,
    ])
      body.push(para(line, 'SourceCode'));
    body.push(para(sentence(p + 11, 30)));
    body.push('<w:p><w:r><w:br w:type="page"/></w:r></w:p>');
  }
  const ns =
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  const style = (id: string, name: string, extra = '') => `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${name}"/>${extra}</w:style>`;
  return makeZip([
    {
      name: '[Content_Types].xml',
      data: '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>',
    },
    {
      name: '_rels/.rels',
      data: '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    },
    {
      name: 'word/_rels/document.xml.rels',
      data: '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>',
    },
    {
      name: 'word/styles.xml',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles ${ns}>${style('Heading1', 'heading 1')}${style('Heading2', 'heading 2')}${style('SourceCode', 'Source Code', '<w:rPr><w:rFonts w:ascii="Consolas" w:hAnsi="Consolas"/></w:rPr>')}</w:styles>`,
    },
    {
      name: 'word/document.xml',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ${ns}><w:body>${body.join('')}<w:sectPr/></w:body></w:document>`,
    },
  ]);
}

async function waitJob(s: TestServer, id: number): Promise<{ state: string; error: string | null; progress: Record<string, unknown> }> {
  for (;;) {
    const job = await s.services.jobs.get(id);
    if (job.state !== 'queued' && job.state !== 'running') return job;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function row(name: string, size: string, requestMs: number, jobMs: number, snippets: number, extra = ''): void {
  console.log(
    `${name.padEnd(28)} ${size.padStart(10)}  request ${requestMs.toFixed(0).padStart(6)} ms  job ${jobMs.toFixed(0).padStart(7)} ms  total ${(requestMs + jobMs).toFixed(0).padStart(7)} ms  ${String(snippets).padStart(6)} snippets ${extra}`,
  );
}

async function timed(
  s: TestServer,
  submit: () => Promise<Response>,
): Promise<{
  requestMs: number;
  jobMs: number;
  libraryName: string;
  snippets: number;
  job: { state: string; error: string | null; progress: Record<string, unknown> };
}> {
  const t0 = performance.now();
  const res = await submit();
  const body = (await res.json()) as { libraryName: string; jobId: number; message: string };
  const t1 = performance.now();
  if (res.status !== 200) throw new Error(`submit failed: ${res.status} ${JSON.stringify(body)}`);
  const job = await waitJob(s, body.jobId);
  const t2 = performance.now();
  if (job.state !== 'succeeded') throw new Error(`job failed: ${job.error}`);
  const v = s.services.store.libraries.currentVersion(body.libraryName, '')!;
  return { requestMs: t1 - t0, jobMs: t2 - t1, libraryName: body.libraryName, snippets: v.totalSnippets, job };
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-sources-'));
const s = await startTestServer();
const specServer = http.createServer();
try {
  console.log(`sources bench: ${os.cpus().length} cores, node ${process.version}, builtin embedder=${s.services.embedder?.id ?? 'none'}\n`);

  const t0 = performance.now();
  const spec = generateOpenApi(OPENAPI_BYTES);
  const genSpecMs = performance.now() - t0;
  specServer.on('request', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(spec.text);
  });
  await new Promise<void>((r) => specServer.listen(0, '127.0.0.1', r));
  const specUrl = `http://127.0.0.1:${(specServer.address() as AddressInfo).port}/openapi.json`;

  const t1 = performance.now();
  const pdfFile = path.join(work, 'bench.pdf');
  await generatePdf(PDF_PAGES, pdfFile);
  const genPdfMs = performance.now() - t1;
  const t2 = performance.now();
  const docx = generateDocx(DOCX_PAGES);
  const genDocxMs = performance.now() - t2;
  console.log(
    `generated: OpenAPI ${(spec.text.length / 1024 / 1024).toFixed(2)} MB / ${spec.operations} operations (${genSpecMs.toFixed(0)} ms), PDF ${PDF_PAGES} pages ${(fs.statSync(pdfFile).size / 1024).toFixed(0)} KB (${genPdfMs.toFixed(0)} ms, Chromium), DOCX ${DOCX_PAGES} pages ${(docx.length / 1024).toFixed(0)} KB (${genDocxMs.toFixed(0)} ms)\n`,
  );

  const oa = await timed(s, () =>
    s.api('/api/v2/add/openapi', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ openApiUrl: specUrl }) }),
  );
  row('OpenAPI URL (JSON)', `${(spec.text.length / 1024 / 1024).toFixed(2)} MB`, oa.requestMs, oa.jobMs, oa.snippets, `(${spec.operations} operations)`);

  const pdfForm = new FormData();
  pdfForm.append('documentFiles', new Blob([new Uint8Array(fs.readFileSync(pdfFile))]), 'bench.pdf');
  pdfForm.append('collectionName', 'bench pdf');
  const pdf = await timed(s, () => s.api('/api/v2/add/file-upload', { method: 'POST', body: pdfForm }));
  row(
    `PDF upload (${PDF_PAGES} pages)`,
    `${(fs.statSync(pdfFile).size / 1024).toFixed(0)} KB`,
    pdf.requestMs,
    pdf.jobMs,
    pdf.snippets,
    `(${(pdf.jobMs / PDF_PAGES).toFixed(1)} ms/page)`,
  );

  const docxForm = new FormData();
  docxForm.append('documentFiles', new Blob([new Uint8Array(docx)]), 'bench.docx');
  docxForm.append('collectionName', 'bench docx');
  const dx = await timed(s, () => s.api('/api/v2/add/file-upload', { method: 'POST', body: docxForm }));
  row(
    `DOCX upload (${DOCX_PAGES} pages)`,
    `${(docx.length / 1024).toFixed(0)} KB`,
    dx.requestMs,
    dx.jobMs,
    dx.snippets,
    `(${(dx.jobMs / DOCX_PAGES).toFixed(1)} ms/page)`,
  );
} finally {
  specServer.close();
  await s.close();
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(s.dataDir, { recursive: true, force: true });
}
