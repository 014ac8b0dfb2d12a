// Import throughput end to end through the real HTTP endpoint:
//   npm run bench -- import [--snippets 200000] [--runs 3] [--max-old-space MB (default 512, as npm start)] [--trace] [--keep] [--postgres debian|pgvector]
// Generates a realistic bundle (~500 bytes per snippet) into a temp dir, starts `stacks serve` as a
// child process per run (fresh data dir, dev license), uploads the bundle as a streamed JSON body
// and waits for the import job, then for the search-model job it queues (reporting how long /ping waited
// meanwhile). Prints snippets/s (upload + parse + validate + stage + store + FTS
// + embeddings with the configured embedder) and the server's peak RSS (VmHWM from /proc).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import { writeBundle } from '../test/helpers/bundles.ts';
import { devLicense, startStacksProcess } from '../test/helpers/server.ts';
import { finishedJob, memoryOf } from './stats.ts';
import type { JobState } from '../lib/model.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { BENCH_PG_SETTINGS, parseFlavor, pgCpuMs, pgDatabaseBytes } from './pg-cluster.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SNIPPETS = arg('snippets', 200_000);
const RUNS = arg('runs', 3);
const keep = args.includes('--keep');
const trace = args.includes('--trace');
/** V8 old-space cap for the server process, as `npm start` and the Docker image set it (0 = node's default, which collects lazily up to ~4 GB). */
const maxOldSpace = arg('max-old-space', 512);
const flavor = parseFlavor(args.includes('--postgres') ? args[args.indexOf('--postgres') + 1] : undefined);
const postgres = flavor ? await startPostgres(flavor, { durable: true, settings: BENCH_PG_SETTINGS }) : null;

async function startServer(dataDir: string, databaseUrl: string | null): Promise<{ child: ChildProcess; url: string; key: string }> {
  // The test helper turns model learning off; this bench measures it after the import.
  const started = await startStacksProcess({
    dataDir,
    args: ['--dev'],
    env: { STACKS_LEARN_RANKING: 'true', ...(databaseUrl ? { STACKS_DATABASE_URL: databaseUrl } : {}) },
    nodeFlags: maxOldSpace > 0 ? [`--max-old-space-size=${maxOldSpace}`] : [],
  });
  if (!started.key) throw new Error('the server printed no first key');
  return { child: started.child, url: started.url, key: started.key };
}

interface RunResult {
  seconds: number;
  uploadSeconds: number;
  rate: number;
  peakRssMb: number;
  idleRssMb: number;
  /** Highest anonymous (heap, SQLite cache) resident memory seen, sampled every 100 ms. */
  peakAnonMb: number;
  /** File-backed resident memory at the end: the database file mapped by SQLite (mmap_size), page cache the kernel can drop. */
  fileMb: number;
  stored: number;
  /** On PostgreSQL: its processes' CPU during the import (s), and the database's size after it (bytes). */
  pg: { cpuSeconds: number; bytes: number } | null;
  /** The search-model job the new version queued: its duration, and how long /ping waited meanwhile (the server keeps serving). */
  learning: { seconds: number; pingP99Ms: number; pingMaxMs: number; peakAnonMb: number };
}

interface Job {
  state: JobState;
  error: string | null;
  progress: { stored?: number };
}

async function run(bundle: string, size: number, n: number): Promise<RunResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-import-'));
  fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  const databaseUrl = postgres ? await postgres.createDatabase(`import_${n}`) : null;
  const { child, url, key } = await startServer(dataDir, databaseUrl);
  const pid = child.pid!;
  try {
    await new Promise((r) => setTimeout(r, 500));
    const idleRssMb = memoryOf(pid).rss;
    let peakAnonMb = 0;
    let ticks = 0;
    const t0 = performance.now();
    const pgCpu0 = postgres ? pgCpuMs(postgres.pid) : 0;
    const sampler = setInterval(() => {
      try {
        const a = memoryOf(pid).anon;
        peakAnonMb = Math.max(peakAnonMb, a);
        if (trace && ++ticks % 10 === 0)
          console.log(`  t=${((performance.now() - t0) / 1000).toFixed(0)}s anon ${a.toFixed(0)} MB, file ${memoryOf(pid).file.toFixed(0)} MB`);
      } catch {
        /* the process is gone */
      }
    }, 100);
    const res = await fetch(`${url}/api/import-libraries`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(size) },
      body: Readable.toWeb(fs.createReadStream(bundle, { highWaterMark: 1 << 20 })) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    const body = (await res.json()) as { jobs?: { jobId: number }[]; message?: string };
    if (res.status !== 200 || !body.jobs?.length) throw new Error(`import refused: ${res.status} ${JSON.stringify(body)}`);
    const uploadSeconds = (performance.now() - t0) / 1000;
    const job = await finishedJob<Job>(url, key, body.jobs[0]!.jobId);
    const seconds = (performance.now() - t0) / 1000;
    if (job.state !== 'succeeded') throw new Error(`import job ${job.state}: ${job.error}`);
    const importPeakAnon = peakAnonMb;
    const pgFigures = postgres && databaseUrl ? { cpuSeconds: (pgCpuMs(postgres.pid) - pgCpu0) / 1000, bytes: await pgDatabaseBytes(databaseUrl) } : null;
    const peakRssMb = memoryOf(pid).peak;
    const fileMb = memoryOf(pid).file + memoryOf(pid).shmem;
    // Then the ranking model of the new version is learned in the background: how long, and whether the server stays responsive.
    peakAnonMb = 0;
    const l0 = performance.now();
    const pings: number[] = [];
    for (;;) {
      if (performance.now() - l0 > 600_000) throw new Error('no search-model job finished within 10 minutes of the import');
      const p0 = performance.now();
      await fetch(`${url}/ping`);
      pings.push(performance.now() - p0);
      const list = (await (await fetch(`${url}/api/jobs?kind=search-model`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
        jobs: { state: string }[];
      };
      if (list.jobs.length > 0 && list.jobs.every((j) => j.state === 'succeeded' || j.state === 'failed')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    clearInterval(sampler);
    pings.sort((a, b) => a - b);
    const learning = {
      seconds: (performance.now() - l0) / 1000,
      pingP99Ms: pings[Math.min(pings.length - 1, Math.floor(pings.length * 0.99))]!,
      pingMaxMs: pings[pings.length - 1]!,
      peakAnonMb,
    };
    return {
      seconds,
      uploadSeconds,
      rate: SNIPPETS / seconds,
      peakRssMb,
      idleRssMb,
      peakAnonMb: importPeakAnon,
      fileMb,
      stored: Number(job.progress.stored),
      pg: pgFigures,
      learning,
    };
  } finally {
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    if (!keep) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-bundle-'));
const bundle = path.join(tmp, 'bundle.json');
const g0 = performance.now();
const size = await writeBundle(bundle, [{ project: '/bench/generated', snippets: SNIPPETS, seed: 11 }]);
console.log(`bundle: ${SNIPPETS} snippets, ${(size / 1024 / 1024).toFixed(1)} MB (generated in ${((performance.now() - g0) / 1000).toFixed(1)} s)`);
const results: RunResult[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const r = await run(bundle, size, i);
    results.push(r);
    console.log(
      `run ${i + 1}: ${r.seconds.toFixed(1)} s end to end (upload+staging ${r.uploadSeconds.toFixed(1)} s), ${Math.round(r.rate)} snippets/s, ` +
        `server peak RSS ${r.peakRssMb.toFixed(0)} MB (idle ${r.idleRssMb.toFixed(0)} MB; peak anonymous ${r.peakAnonMb.toFixed(0)} MB, ` +
        `file-backed at end ${r.fileMb.toFixed(0)} MB), stored ${r.stored}` +
        (r.pg ? `; PostgreSQL CPU ${r.pg.cpuSeconds.toFixed(1)} s, database ${(r.pg.bytes / 1e6).toFixed(0)} MB` : ''),
    );
    console.log(
      `  then the search-model job: ${r.learning.seconds.toFixed(1)} s, /ping meanwhile p99 ${r.learning.pingP99Ms.toFixed(0)} ms, max ${r.learning.pingMaxMs.toFixed(0)} ms, peak anonymous ${r.learning.peakAnonMb.toFixed(0)} MB`,
    );
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
  await postgres?.close();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rate = median(results.map((r) => r.rate));
const rss = Math.max(...results.map((r) => r.peakRssMb));
const anon = Math.max(...results.map((r) => r.peakAnonMb));
console.log(
  `\nimport: median ${Math.round(rate)} snippets/s over ${results.length} run(s) (target >= 3000); peak RSS ${rss.toFixed(0)} MB (target < 600), of it anonymous at most ${anon.toFixed(0)} MB`,
);
console.log(`backend: ${flavor ? `PostgreSQL ${flavor}` : 'SQLite'}`);
console.log(
  `server V8 old space: ${maxOldSpace > 0 ? `${maxOldSpace} MB` : 'node default'}; cpus: ${os.cpus().length}, load average: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
