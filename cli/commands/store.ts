import type { Command } from 'commander';
import { configFrom, output, withDataDir, type CommonOpts } from '../context.ts';
import { copyStoreToPostgres } from '../../server/operations/index.ts';

/** `stacks store copy --to postgres://...`: the data dir's database copied into an empty PostgreSQL database, checked table by table. */
export function storeCommand(program: Command): void {
  const store = program.command('store').description("the instance's database: move it between SQLite and PostgreSQL");
  withDataDir(
    store
      .command('copy')
      .description(
        "copy the data dir's SQLite database into an empty PostgreSQL database (>= 15), checked by row counts and checksums; the data dir is only read",
      )
      .requiredOption('--to <url>', 'the target database, postgres://user:password@host:port/database'),
  ).action(async (opts: CommonOpts & { to: string }) => {
    const { dataDir } = configFrom(opts);
    const r = await copyStoreToPostgres(dataDir, opts.to, (table, rows) => {
      if (!opts.json && rows > 0) process.stderr.write(`  ${table}: ${rows} rows\n`);
    });
    output(opts, r, () => [
      `Copied ${r.rows} rows in ${r.tables.length} tables to ${r.to} in ${r.seconds.toFixed(1)} s; every table's rows read back with the same checksum.`,
    ]);
  });
}
