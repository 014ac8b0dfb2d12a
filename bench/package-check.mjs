// Runs inside the network namespace of bench/package.ts, with the package's own Node.js:
//   node package-check.mjs <package dir> <data dir> <bundle>
// install.sh --offline, then the server: /ping, an import, its vectors from the sentence model, a
// query answered with them. Exits non-zero on any failure.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';

const [pkg, dataDir, bundle] = process.argv.slice(2);
const t0 = Date.now();
const ms = () => `${Date.now() - t0} ms`;
const fail = (msg) => {
  console.error(`FAILED: ${msg}`);
  process.exit(1);
};

const npm = spawnSync('sh', ['-c', 'command -v npm node apt-get || true'], { encoding: 'utf8' });
console.log(`on the PATH: ${npm.stdout.trim().split('\n').filter(Boolean).join(', ') || 'no npm, no node'}`);
const online = await fetch('https://registry.npmjs.org/', { signal: AbortSignal.timeout(3000) }).then(
  () => true,
  () => false,
);
if (online) fail('the network is reachable: the check must run without it');
console.log('network: unreachable (the registry does not answer)');

const install = spawnSync(`${pkg}/install.sh`, ['--offline'], { cwd: pkg, encoding: 'utf8' });
process.stdout.write(install.stdout.replace(/\x1b\[[0-9;]*m/g, ''));
if (install.status !== 0) fail(`install.sh --offline exited ${install.status}: ${install.stderr}`);
console.log(`install.sh --offline: ok (${ms()})`);

const server = spawn(`${pkg}/stacks`, ['serve', '--port', '0', '--data-dir', dataDir, '--dev'], {
  env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let out = '';
let err = '';
server.stdout.on('data', (d) => (out += d));
server.stderr.on('data', (d) => (err += d));
try {
  const startedAt = Date.now();
  while (!/running at (http:\/\/\S+)/.test(out)) {
    if (server.exitCode !== null) fail(`the server exited: ${err}`);
    if (Date.now() - startedAt > 120_000) fail(`the server did not start: ${out} ${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = /running at (http:\/\/\S+)/.exec(out)[1].replace('localhost', '127.0.0.1');
  const key = /(stk_[A-Za-z0-9_-]+)/.exec(out)?.[1];
  console.log(`server up at ${url} in ${Date.now() - startedAt} ms`);
  const ping = await (await fetch(`${url}/ping`)).json();
  if (ping.status !== 'ok') fail(`/ping answered ${JSON.stringify(ping)}`);
  console.log(`/ping: ${JSON.stringify(ping)}`);

  const importStarted = Date.now();
  const imported = await fetch(`${url}/api/import-libraries`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: fs.readFileSync(bundle),
  });
  const body = await imported.json();
  if (imported.status !== 200) fail(`import answered ${imported.status}: ${JSON.stringify(body)}`);
  for (;;) {
    const job = await (await fetch(`${url}/api/jobs/${body.jobs[0].jobId}`, { headers: { authorization: `Bearer ${key}` } })).json();
    if (job.state === 'succeeded') break;
    if (job.state === 'failed' || job.state === 'cancelled') fail(`the import job ${job.state}: ${job.error}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`import of ${body.queued.join(', ')} (${body.jobs[0].snippets} snippets): ${Date.now() - importStarted} ms`);

  // The sentence model, not the word-vector fallback, and the version's vectors done by the embed job.
  const embedStarted = Date.now();
  let health;
  for (;;) {
    health = await (await fetch(`${url}/api/health`)).json();
    const e = health.embedder;
    if (!e?.model || e.fallback) fail(`the server does not run the sentence model: ${JSON.stringify(e)}`);
    if (e.versions?.embedded >= 1 && e.versions.pending === 0) break;
    if (Date.now() - embedStarted > 300_000) fail(`the version was not embedded in 300 s: ${JSON.stringify(e.versions)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log(`embedder ${health.embedder.id} (${health.embedder.model.name}): version embedded in ${Date.now() - embedStarted} ms`);

  const search = await fetch(`${url}/api/v3/search?query=${encodeURIComponent('How do I redact sensitive fields in logs?')}&library=pino&type=json`);
  const answer = await search.json();
  if (search.status !== 200 || !answer.codeSnippets?.length) fail(`the query answered ${search.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  if (search.headers.get('x-stacks-vectors') !== 'ready')
    fail(`the query was answered without vectors (X-Stacks-Vectors: ${search.headers.get('x-stacks-vectors')})`);
  console.log(`query: ${search.status}, first answer "${answer.codeSnippets[0].codeTitle}" (${answer.codeSnippets[0].codeId})`);
  console.log(`all checks passed (${ms()})`);
} finally {
  server.kill('SIGTERM');
}
