// The servers a serving bench measures: one `stacks serve` on the corpus's SQLite data dir, or
// (`--postgres debian|pgvector`) N of them on the corpus's copy in a persistent PostgreSQL cluster
// (bench/pg-cluster.ts), each node with an empty data dir of its own and STACKS_DATABASE_URL, as a
// cluster's nodes run. Requests are spread round robin over the nodes; the CPU figures are the
// nodes' summed, and PostgreSQL's own (its processes', from /proc).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PostgresFlavor } from '../test/helpers/postgres.ts';
import { startStacksProcess } from '../test/helpers/server.ts';
import type { BenchCorpus } from './corpus.ts';
import { benchPostgres, pgCpuMs, pgDatabaseBytes, type BenchPostgres } from './pg-cluster.ts';
import { memoryOf, serverCpuMs } from './stats.ts';

export interface BenchNodes {
  /** 'SQLite', 'PostgreSQL debian (fallback vectors)', 'PostgreSQL pgvector', with the node count. */
  label: string;
  urls: string[];
  children: ChildProcess[];
  pg: BenchPostgres | null;
  /** The next node's base URL, round robin. */
  next(): string;
  /** CPU ms the nodes have used (all threads, summed over the nodes). */
  nodesCpuMs(): number;
  /** CPU ms PostgreSQL's processes have used (0 on SQLite). */
  databaseCpuMs(): number;
  /** The first node's memory (MB), as memoryOf. */
  memory(): ReturnType<typeof memoryOf>;
  /** The database's bytes: SQLite's files, or pg_database_size. */
  databaseBytes(): Promise<number>;
  close(): Promise<void>;
}

export interface BenchNodesOptions {
  postgres?: PostgresFlavor;
  nodes?: number;
  env?: NodeJS.ProcessEnv;
  log?: (m: string) => void;
  /** pg_stat_statements loaded (a diagnosis of where PostgreSQL's time goes). */
  statements?: boolean;
}

export async function startBenchNodes(corpus: BenchCorpus, options: BenchNodesOptions): Promise<BenchNodes> {
  const n = options.nodes ?? 1;
  if (n > 1 && !options.postgres) throw new Error('--nodes > 1 needs --postgres: nodes share a PostgreSQL database (SQLite is one process on its file)');
  const pg = options.postgres ? await benchPostgres(options.postgres, corpus, options.log, { statements: options.statements }) : null;
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  try {
    // One after the other: the first start of a node on a database migrates it, the next finds nothing to do.
    for (let i = 0; i < n; i++) {
      let dataDir = corpus.dataDir;
      const env: NodeJS.ProcessEnv = { ...options.env };
      if (pg) {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-bench-node-'));
        dirs.push(dataDir);
        env.STACKS_DATABASE_URL = pg.url;
      }
      const started = await startStacksProcess({ dataDir, env });
      children.push(started.child);
      urls.push(started.url);
    }
  } catch (err) {
    await stopAll(children);
    await pg?.close();
    throw err;
  }
  let turn = 0;
  return {
    label: `${pg ? `PostgreSQL ${pg.flavor}${pg.flavor === 'debian' ? ' (fallback vectors)' : ''}` : 'SQLite'}, ${n} node${n > 1 ? 's' : ''}`,
    urls,
    children,
    pg,
    next: () => urls[turn++ % urls.length]!,
    nodesCpuMs: () => children.reduce((ms, c) => ms + serverCpuMs(c.pid!), 0),
    databaseCpuMs: () => (pg ? pgCpuMs(pg.pid) : 0),
    memory: () => memoryOf(children[0]!.pid!),
    databaseBytes: async () =>
      pg
        ? pgDatabaseBytes(pg.url)
        : fs
            .readdirSync(corpus.dataDir)
            .filter((f) => /^(stacks|usage)\.db(-wal)?$/.test(f))
            .reduce((b, f) => b + fs.statSync(path.join(corpus.dataDir, f)).size, 0),
    async close() {
      await stopAll(children);
      await pg?.close();
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
        }),
    ),
  );
}
