// `npm run bench -- crawl [--pages 2000] [--js-pages 300] [--concurrency N]`
// Crawl throughput on a generated local documentation site served by a separate process on
// 127.0.0.1: a static variant (server HTML, crawled on the plain HTTP path) and a JavaScript-
// rendered variant (an empty app shell that fetches its content, crawled through Chromium).
// The crawl runs through the real job queue, extraction, builtin embedder and SQLite writer.
// Prints pages/s and the peak RSS of this process plus its Chromium processes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { startTestServer } from '../test/helpers/server.ts';
import { operatorSubmitter } from '../lib/owner.ts';

const { values: opts } = parseArgs({
  options: {
    pages: { type: 'string', default: '2000' },
    'js-pages': { type: 'string', default: '300' },
    concurrency: { type: 'string' },
  },
  allowPositionals: true,
});
const PAGES = Number(opts.pages);
const JS_PAGES = Number(opts['js-pages']);

const words =
  'path boundary strict virtual root join marker policy request handler option stream buffer parser schema token cache session proxy query error plugin config'.split(
    ' ',
  );
const sentence = (i: number, n = 16) => {
  const out: string[] = [];
  for (let k = 0; k < n; k++) out.push(words[(i * 7 + k * 13) % words.length]!);
  return `${out.join(' ')} (${i}).`;
};

/** Writes the site: page i links to its tree children 2i+1, 2i+2, prev/next, and a nav of the first 20 pages. */
function generateSite(dir: string, pages: number): void {
  fs.mkdirSync(path.join(dir, 'static'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'js', 'data'), { recursive: true });
  const nav = Array.from({ length: Math.min(20, pages, JS_PAGES || pages) }, (_, k) => `<li><a href="p${k}.html">Chapter ${k}</a></li>`).join('');
  const mainFor = (i: number, count: number) => {
    const links = [2 * i + 1, 2 * i + 2, i + 1, i - 1]
      .filter((k) => k >= 0 && k < count)
      .map((k) => `<a href="p${k}.html">Page ${k}</a>`)
      .join(' | ');
    return (
      `<h1 id="top">Chapter ${i}: ${words[i % words.length]} guide</h1><p>${sentence(i, 40)}</p>` +
      [0, 1, 2]
        .map(
          (s) =>
            `<h2 id="s${s}">Section ${s} of chapter ${i}</h2><p>${sentence(i * 3 + s, 30)}</p><p>${sentence(i * 5 + s, 24)}</p>` +
            (s < 2
              ? `<pre><code class="language-rust">fn example_${i}_${s}() {\n    let root = PathBoundary::try_new("/srv/${i}")?;\n    root.strict_join("file_${s}.txt")?;\n}</code></pre>`
              : '') +
            `<h3 id="s${s}-notes">Notes</h3><ul><li>${sentence(i + s, 12)}</li><li>${sentence(i + s + 1, 12)}</li></ul>`,
        )
        .join('') +
      `<p>${links}</p>`
    );
  };
  for (let i = 0; i < Math.max(pages, JS_PAGES); i++) {
    const shell = (body: string, scripts = '') =>
      `<!doctype html><html><head><meta charset="utf-8"><title>Chapter ${i} - Bench Guide</title>${scripts}</head><body>` +
      `<header><a href="p0.html">Bench Guide</a></header><nav class="sidebar"><ul>${nav}</ul></nav>${body}<footer>Footer text</footer></body></html>`;
    if (i < pages) fs.writeFileSync(path.join(dir, 'static', `p${i}.html`), shell(`<main>${mainFor(i, pages)}</main>`));
    if (i < JS_PAGES) {
      fs.writeFileSync(path.join(dir, 'js', 'data', `p${i}.json`), JSON.stringify({ html: mainFor(i, JS_PAGES) }));
      fs.writeFileSync(
        path.join(dir, 'js', `p${i}.html`),
        shell('<div id="app"></div><noscript>This site needs JavaScript.</noscript>', '<script src="app.js" defer></script>'),
      );
    }
  }
  fs.writeFileSync(path.join(dir, 'static', 'index.html'), fs.readFileSync(path.join(dir, 'static', 'p0.html')));
  fs.writeFileSync(path.join(dir, 'js', 'index.html'), fs.readFileSync(path.join(dir, 'js', 'p0.html')));
  fs.writeFileSync(
    path.join(dir, 'js', 'app.js'),
    `const name = (location.pathname.split('/').pop() || 'p0.html').replace(/^index\\.html$/, 'p0.html').replace('.html', '');
fetch('data/' + name + '.json').then((r) => r.json()).then((d) => { document.getElementById('app').innerHTML = '<main>' + d.html + '</main>'; });`,
  );
}

/** A static file server in its own process, so serving does not compete with the crawler's event loop. */
function serveDir(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const code = `
    const http = require('node:http'), fs = require('node:fs'), path = require('node:path');
    const root = ${JSON.stringify(dir)};
    const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.json': 'application/json' };
    http.createServer((req, res) => {
      let p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (p.endsWith('/')) p += 'index.html';
      const file = path.join(root, path.normalize(p));
      if (!file.startsWith(root)) { res.writeHead(403); return res.end(); }
      fs.readFile(file, (err, body) => {
        if (err) { res.writeHead(404, { 'content-type': 'text/plain' }); return res.end('not found'); }
        res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream' });
        res.end(body);
      });
    }).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => child.stdout!.once('data', (d) => resolve({ url: String(d).trim(), child })));
}

/**
 * Memory of a process and all its descendants (Chromium's renderer, GPU and utility processes),
 * excluding `skip`: the sum of RSS (counts pages shared between Chromium's processes once per
 * process, so it overstates) and the sum of PSS (shared pages split between their users).
 */
function treeMemory(rootPid: number, skip: Set<number>): { rss: number; pss: number } {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      (children.get(ppid) ?? children.set(ppid, []).get(ppid)!).push(Number(name));
    } catch {
      /* process ended */
    }
  }
  let rss = 0;
  let pss = 0;
  const stack = [rootPid];
  while (stack.length) {
    const pid = stack.pop()!;
    if (skip.has(pid)) continue;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      rss += m ? Number(m[1]) * 1024 : 0;
      const q = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      pss += q ? Number(q[1]) * 1024 : 0;
    } catch {
      /* process ended */
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return { rss, pss };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-crawl-'));
generateSite(dir, PAGES);
const site = await serveDir(dir);
const skip = new Set([site.child.pid!]);
const server = await startTestServer({ config: { logLevel: 'warn', ...(opts.concurrency ? { crawlConcurrency: Number(opts.concurrency) } : {}) } });
console.log(
  `crawl bench: ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, crawlConcurrency ${server.services.config.crawlConcurrency}`,
);

async function run(label: string, startUrl: string, maxPages: number): Promise<void> {
  const peak = { rss: 0, pss: 0, nodeRss: 0 };
  const sample = () => {
    const m = treeMemory(process.pid, skip);
    peak.rss = Math.max(peak.rss, m.rss);
    peak.pss = Math.max(peak.pss, m.pss);
    peak.nodeRss = Math.max(peak.nodeRss, process.memoryUsage().rss);
  };
  sample();
  const sampler = setInterval(sample, 200);
  const started = performance.now();
  const sub = await server.services.crawler.submit(
    { websiteUrl: startUrl, maxPages, trigger: 'cli' },
    operatorSubmitter(server.services.teams.defaultTeamspaceId(), 'instance'),
  );
  for (;;) {
    const job = await server.services.jobs.get(sub.jobId);
    if (['succeeded', 'failed', 'cancelled'].includes(job.state)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  sample();
  const job = await server.services.jobs.get(sub.jobId);
  const p = job.progress as Record<string, number>;
  console.log(
    `${label.padEnd(7)} ${job.state}: ${p.pagesDone} pages (${p.pagesRendered} in Chromium, ${p.pagesFailed} failed) in ${seconds.toFixed(1)} s = ` +
      `${(p.pagesDone / seconds).toFixed(1)} pages/s, ${p.snippets} snippets; peak memory incl. browser: PSS ${(peak.pss / 1024 ** 2).toFixed(0)} MB (sum of RSS ${(peak.rss / 1024 ** 2).toFixed(0)} MB; Stacks process alone ${(peak.nodeRss / 1024 ** 2).toFixed(0)} MB)`,
  );
}

try {
  await run('static', `${site.url}/static/`, PAGES + 10);
  if (JS_PAGES > 0) await run('js', `${site.url}/js/`, JS_PAGES + 10);
} finally {
  await server.close();
  site.child.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
