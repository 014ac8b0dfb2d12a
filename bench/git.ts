// `npm run bench -- git [--files 2000] [--changed 20] [--runs 3]`
// Git source: the time to index a generated repository of `files` files (80% markdown pages with
// prose and code blocks, 20% TypeScript modules for the dynamic source index) through the real
// POST /api/parse and job, and to refresh it after `changed` files changed (only those are parsed
// again; the rest is copied from the previous build). The repository is served by
// `git http-backend` on 127.0.0.1; builtin embedder, temp data dir. Prints each run and the medians.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { startTestServer, tempDir } from '../test/helpers/server.ts';
import { startGitHttpServer, TestRepo } from '../test/helpers/git-repos.ts';
import { call } from '../test/helpers/teams.ts';
import { waitJob } from '../test/helpers/sources.ts';

const { values: opts } = parseArgs({
  options: { files: { type: 'string', default: '2000' }, changed: { type: 'string', default: '20' }, runs: { type: 'string', default: '3' } },
  allowPositionals: true,
});
const FILES = Number(opts.files);
const CHANGED = Number(opts.changed);
const RUNS = Number(opts.runs);

const words =
  'widget sprocket gizmo telemetry dashboard render mount config option plugin hook stream buffer cache retry timeout schema token session handler'.split(' ');
const sentence = (i: number, n = 16) => `${Array.from({ length: n }, (_, k) => words[(i * 7 + k * 13 + k * k) % words.length]).join(' ')} (${i}).`;

function page(i: number, rev = 0): string {
  const sections = [1, 2, 3].map(
    (k) =>
      `## Topic ${i}.${k}\n\n${sentence(i * 3 + k + rev * 100_000)} ${sentence(i * 5 + k)}\n\n\`\`\`ts\nconst value${i}_${k} = configure${k}({ retries: ${k + rev} });\n\`\`\`\n`,
  );
  return `---\ntitle: Page ${i}\n---\n\n# Page ${i}\n\n${sentence(i)}\n\n${sections.join('\n')}`;
}

function module(i: number): string {
  return `/** Module ${i}: ${sentence(i, 8)} */\n\n/** Configures part ${i}. ${sentence(i + 7, 10)} */\nexport function configurePart${i}(options: { retries: number }) {\n  return { ...options, part: ${i} };\n}\n\n/** Part ${i} as a class. */\nexport class Part${i} {\n  size = ${i};\n}\n`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const root = tempDir('stacks-bench-git-');
const repo = new TestRepo(root, 'bench/big');
const files: Record<string, string> = {};
for (let i = 0; i < FILES; i++) files[i % 5 === 4 ? `src/part-${i}.ts` : `docs/section-${i % 40}/page-${i}.md`] = i % 5 === 4 ? module(i) : page(i);
repo.write(files).commit('generated').publish();
const gitServer = await startGitHttpServer(root);
const s = await startTestServer({ config: { gitMaxBytes: 1024 ** 3 } });
const repoUrl = `${gitServer.url}/bench/big.git`;
const index: number[] = [];
const refresh: number[] = [];
try {
  for (let run = 0; run < RUNS; run++) {
    // Every run indexes the repository as a new library (a fresh clone, nothing to reuse).
    if (run > 0) await call(s, 'DELETE', '/api/libraries/bench/big');
    let t = performance.now();
    const r = await call<{ queueId: number }>(s, 'POST', '/api/parse', { repoUrl });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    let job = await waitJob(s, r.body.queueId, 600_000);
    if (job.state !== 'succeeded') throw new Error(job.error ?? job.state);
    index.push(performance.now() - t);
    const v = s.services.store.libraries.currentVersion('/bench/big', '')!;
    console.log(`  ${JSON.stringify(job.progress.timings)}`);
    console.log(
      `run ${run + 1}: index ${FILES} files: ${(index[run]! / 1000).toFixed(2)} s (${v.totalSnippets} doc snippets, ${s.services.store.libraries.dynamicPartition(v.dynamicVersionId ?? 0)?.totalSnippets ?? 0} source snippets)`,
    );
    const changed: Record<string, string> = {};
    for (let k = 0; k < CHANGED; k++) {
      const i = (run * CHANGED + k) * 5;
      changed[`docs/section-${i % 40}/page-${i}.md`] = page(i, run + 1);
    }
    repo.write(changed).commit(`change ${run}`).publish();
    t = performance.now();
    const f = await call<{ queueId: number }>(s, 'POST', '/api/projects/bench/big/refresh');
    job = await waitJob(s, f.body.queueId, 600_000);
    if (job.state !== 'succeeded') throw new Error(job.error ?? job.state);
    refresh.push(performance.now() - t);
    console.log(
      `run ${run + 1}: refresh after ${CHANGED} changed files: ${(refresh[run]! / 1000).toFixed(2)} s (parsed ${String(job.progress.parsed)}, reused ${String(job.progress.reused)}; ${JSON.stringify(job.progress.timings)})`,
    );
  }
  console.log(`median of ${RUNS}: index ${(median(index) / 1000).toFixed(2)} s, refresh ${(median(refresh) / 1000).toFixed(2)} s`);
} finally {
  await s.close();
  await gitServer.close();
  repo.cleanup();
  fs.rmSync(root, { recursive: true, force: true });
}
