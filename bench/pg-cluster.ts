// `npm run bench -- pg-cluster --postgres debian|pgvector [--dir DIR]`
// The bench corpus (bench/corpus.ts) in a PERSISTENT PostgreSQL cluster, so that the serving benches
// (`--postgres` of context, search and import) reuse one copy instead of copying a million snippets
// (~40 min) each run. The cluster lives in pg-<flavor> beside the corpus's cache dir (.tmp/bench/pg-debian,
// .tmp/bench/pg-pgvector; beside STACKS_BENCH_DIR when set), made by test/helpers/postgres.ts
// (as the user `postgres` when running as root); its database `stacks` is filled once by
// `stacks store copy`'s own code (copyStoreToPostgres, checked by counts and checksums), and
// copy.json beside it records that copy's report: a later start finds it and copies nothing.
//   'debian'   Debian 12's PostgreSQL 15, no pgvector: nearest neighbours computed in the node;
//   'pgvector' PostgreSQL 18 with pgvector (tools/pgvector): the HNSW column the copy adds.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { copyStoreToPostgres, type StoreCopyReport } from '../server/system/store-copy.ts';
import { startPostgres, type PostgresFlavor, type TestPostgres } from '../test/helpers/postgres.ts';
import { BENCH_CACHE_DIR, ensureBenchCorpus, type BenchCorpus } from './corpus.ts';

/**
 * The benches' server settings beside the helper's: shared_buffers 1 GB (the default 128 MB would
 * leave a 2-5 GB corpus to the kernel's page cache and double-buffer it; 1 GB is what a box of this
 * size would give it), a WAL that a bulk write does not checkpoint every few seconds, and room for
 * pgvector's HNSW build (with the default 64 MB its graph of a million vectors spills to disk
 * after ~100,000 and the copy's index build took ~25 minutes at ~650 vectors/s).
 */
export const BENCH_PG_SETTINGS = ['shared_buffers=1GB', 'max_wal_size=4GB', 'maintenance_work_mem=1GB'];

export type BenchPostgres = TestPostgres & { pid: number; copy: StoreCopyReport; dir: string };

/** Where a flavor's persistent cluster lives. */
export function benchPgDir(flavor: PostgresFlavor): string {
  // No variable of its own: the server children inherit the environment, and a STACKS_* name they do not know stops them.
  return path.join(path.dirname(BENCH_CACHE_DIR), `pg-${flavor}`);
}

export function parseFlavor(v: string | undefined): PostgresFlavor | undefined {
  if (v === undefined) return undefined;
  if (v !== 'debian' && v !== 'pgvector') throw new Error(`--postgres takes debian or pgvector, not ${v}`);
  return v;
}

/**
 * The flavor's persistent cluster started (fsync on unless `fast`: the serving figures pay for crash
 * safety as SQLite's WAL does) with the corpus copied into its database `stacks` (copied now when
 * it is not there yet: fsync off for that, ~40 min). The caller closes it.
 */
export async function benchPostgres(
  flavor: PostgresFlavor,
  corpus: BenchCorpus,
  log: (m: string) => void = console.log,
  options: { statements?: boolean } = {},
): Promise<BenchPostgres> {
  const dir = benchPgDir(flavor);
  const marker = path.join(dir, 'copy.json');
  const settings = BENCH_PG_SETTINGS;
  if (!fs.existsSync(marker)) {
    const server = await startPostgres(flavor, { keep: dir, settings });
    try {
      log(`copying ${corpus.dataDir} into PostgreSQL (${flavor}) in ${dir}: the first time only`);
      let t0 = performance.now();
      const copy = await copyStoreToPostgres(corpus.dataDir, server.url, (table, rows) => {
        if (rows === 0) t0 = performance.now();
        else log(`  ${table}: ${rows} rows in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      });
      await vacuum(server.url);
      fs.writeFileSync(marker, `${JSON.stringify({ ...copy, corpus: corpus.dataDir, snippets: corpus.snippets }, null, 2)}\n`);
      log(`copied ${copy.rows} rows in ${copy.seconds.toFixed(0)} s, checked`);
    } finally {
      await server.close();
    }
  }
  const copy = JSON.parse(fs.readFileSync(marker, 'utf8')) as StoreCopyReport & { corpus: string; snippets: number };
  if (copy.snippets !== corpus.snippets)
    throw new Error(`${dir} holds a copy of ${copy.snippets} snippets, the corpus has ${corpus.snippets}: remove ${dir} to copy again`);
  // pg_stat_statements (a diagnosis, --pg-statements) must be loaded at the server's start.
  const server = await startPostgres(flavor, {
    keep: dir,
    durable: true,
    settings: options.statements ? [...settings, 'shared_preload_libraries=pg_stat_statements'] : settings,
  });
  if (options.statements) await onDatabase(server.url, (c) => c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
  return Object.assign(server, { copy, dir });
}

async function onDatabase<T>(url: string, f: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await f(client);
  } finally {
    await client.end();
  }
}

/** Forgets what pg_stat_statements has counted so far (the start of a phase to diagnose). */
export async function resetStatements(url: string): Promise<void> {
  await onDatabase(url, (c) => c.query('SELECT pg_stat_statements_reset()'));
}

/**
 * The statements that took the most of PostgreSQL's time since the last reset, per request of the
 * phase: where a request's database time goes (planning and execution; the round trips are the calls).
 */
export async function topStatements(url: string, requests: number, n = 6): Promise<string[]> {
  const { rows } = await onDatabase(url, (c) =>
    c.query<{ calls: string; exec: number; plan: number; rows: string; query: string }>(
      `SELECT calls, total_exec_time AS exec, total_plan_time AS plan, rows, query FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time + total_plan_time DESC LIMIT $1`,
      [n],
    ),
  );
  const { rows: all } = await onDatabase(url, (c) =>
    c.query<{ calls: string; ms: number }>(
      'SELECT sum(calls) AS calls, sum(total_exec_time + total_plan_time) AS ms FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())',
    ),
  );
  const per = (x: number) => (x / Math.max(1, requests)).toFixed(2);
  return [
    `  PostgreSQL per request: ${per(Number(all[0]?.calls ?? 0))} statements, ${per(all[0]?.ms ?? 0)} ms planning + execution; the most costly:`,
    ...rows.map(
      (r) =>
        `    ${per(Number(r.calls))} calls ${per(r.exec)} ms exec ${per(r.plan)} ms plan ${per(Number(r.rows))} rows: ${r.query.replace(/\s+/g, ' ').slice(0, 160)}`,
    ),
  ];
}

/** Statistics and the visibility map for the planner and index-only scans, as autovacuum would have them after a while. */
async function vacuum(url: string): Promise<void> {
  await onDatabase(url, (c) => c.query('VACUUM ANALYZE'));
}

/** The database's size on disk: tables, indexes and TOAST (pg_database_size). */
export async function pgDatabaseBytes(url: string): Promise<number> {
  return onDatabase(url, async (c) => Number((await c.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b')).rows[0]!.b));
}

/**
 * CPU time (user+sys, ms) of every PostgreSQL process of the cluster whose postmaster is `pid`: the
 * postmaster and its children (backends, walwriter, checkpointer...), read from /proc; a backend
 * that ended meanwhile is not counted (the benches' connections live as long as their pool).
 */
export function pgCpuMs(pid: number): number {
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  let ms = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields after the name: state ppid ... utime(14th of the line = f[11]) stime(f[12])
      if (Number(entry) !== pid && Number(f[1]) !== pid) continue;
      ms += (Number(f[11]) + Number(f[12])) * tick;
    } catch {
      // ended while read
    }
  }
  return ms;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { postgres: { type: 'string', default: 'debian' }, dir: { type: 'string' } }, allowPositionals: true });
  const flavor = parseFlavor(values.postgres)!;
  const corpus = await ensureBenchCorpus({ dir: values.dir });
  const server = await benchPostgres(flavor, corpus);
  try {
    console.log(`PostgreSQL ${flavor} in ${server.dir}: ${server.url}; database ${(await pgDatabaseBytes(server.url)) / 1e9} GB`);
    console.log(`copy: ${server.copy.rows} rows in ${server.copy.seconds.toFixed(0)} s`);
  } finally {
    await server.close();
  }
}
