import type { Command } from 'commander';
import { ApiError } from '../../lib/errors.ts';
import { configFrom, output, withDataDir, type CommonOpts } from '../context.ts';
import { copyStoreFromPostgres, copyStoreToPostgres } from '../../server/operations/index.ts';

/**
 * `stacks store copy --to postgres://...`: the data dir's database copied into an empty PostgreSQL
 * database; `--from postgres://...`: a PostgreSQL database copied into a new data dir. Both checked table by table.
 */
export function storeCommand(program: Command): void {
  const store = program.command('store').description("the instance's database: move it between SQLite and PostgreSQL");
  withDataDir(
    store
      .command('copy')
      .description(
        "copy the data dir's SQLite database into an empty PostgreSQL database (--to), or a PostgreSQL database into a new data dir (--from); checked by row counts and checksums",
      )
      .option('--to <url>', 'the target database, postgres://user:password@host:port/database (must be empty)')
      .option('--from <url>', 'the source database; the data dir must not hold a Stacks database yet'),
  ).action(async (opts: CommonOpts & { to?: string; from?: string }) => {
    if (Boolean(opts.to) === Boolean(opts.from)) throw new ApiError('validation_error', 'Give exactly one of --to <url> and --from <url>.');
    const { dataDir } = configFrom(opts);
    const progress = (table: string, rows: number) => {
      if (!opts.json && rows > 0) process.stderr.write(`  ${table}: ${rows} rows\n`);
    };
    const r = opts.to ? await copyStoreToPostgres(dataDir, opts.to, progress) : await copyStoreFromPostgres(opts.from!, dataDir, progress);
    output(opts, r, () => [
      `Copied ${r.rows} rows in ${r.tables.length} tables ${r.direction === 'to-postgres' ? `to ${r.postgres}` : `from ${r.postgres} into ${dataDir}`} in ${r.seconds.toFixed(1)} s; every table's rows read back with the same checksum.`,
    ]);
  });
}
