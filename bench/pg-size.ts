// `npm run bench -- pg-size [--dir DIR] [--flavor debian|pgvector]`
// What a data dir costs on PostgreSQL, per snippet: the 1M bench corpus (bench/corpus.ts; or any
// data dir) copied by `stacks store copy` into a throwaway server (test/helpers/postgres.ts: Debian's
// PostgreSQL 15, or 18 with pgvector, whose HNSW column the copy adds), then each table's and its
// indexes' size. Prints bytes per snippet by table and in all, the SQLite files' for comparison,
// and the copy's rate. The figures docs/operations.md sizes a cluster with.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { copyStoreToPostgres } from '../server/system/store-copy.ts';
import { startPostgres, type PostgresFlavor } from '../test/helpers/postgres.ts';
import { ensureBenchCorpus } from './corpus.ts';

const { values: opts } = parseArgs({
  options: { dir: { type: 'string' }, flavor: { type: 'string', default: 'debian' } },
  allowPositionals: true,
});
const dataDir = opts.dir ?? (await ensureBenchCorpus({})).dataDir;
const server = await startPostgres(opts.flavor as PostgresFlavor);
try {
  const url = await server.createDatabase('size');
  const copied = await copyStoreToPostgres(dataDir, url);
  const snippets = copied.tables.find((t) => t.table === 'snippets')?.rows ?? 0;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('VACUUM ANALYZE');
  const { rows } = await client.query<{ name: string; heap: string; toast: string; indexes: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS heap,
            coalesce(pg_total_relation_size(c.reltoastrelid), 0) AS toast, pg_indexes_size(c.oid) AS indexes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  const { rows: db } = await client.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
  await client.end();
  const per = (bytes: number) => (bytes / Math.max(1, snippets)).toFixed(0);
  const sqliteBytes = fs
    .readdirSync(dataDir)
    .filter((f) => /^(stacks|usage)\.db(-wal)?$/.test(f))
    .reduce((n, f) => n + fs.statSync(path.join(dataDir, f)).size, 0);
  console.log(
    `${snippets} snippets copied in ${copied.seconds.toFixed(0)} s (${(snippets / copied.seconds).toFixed(0)} snippets/s, checked); PostgreSQL ${opts.flavor}`,
  );
  console.log('table                     heap B/snippet  toast B/snippet  indexes B/snippet');
  for (const r of rows.filter((r) => Number(r.heap) + Number(r.toast) + Number(r.indexes) > 1_000_000))
    console.log(`${r.name.padEnd(26)}${per(Number(r.heap)).padStart(15)}${per(Number(r.toast)).padStart(17)}${per(Number(r.indexes)).padStart(19)}`);
  console.log(
    `database: ${(Number(db[0]!.bytes) / 1e9).toFixed(2)} GB, ${per(Number(db[0]!.bytes))} B/snippet; SQLite files: ${(sqliteBytes / 1e9).toFixed(2)} GB, ${per(sqliteBytes)} B/snippet`,
  );
} finally {
  await server.close();
}
