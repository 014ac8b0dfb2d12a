import type { Command } from 'commander';
import { loadConfig, type Config } from '../server/config.ts';
import { createLogger } from '../server/log.ts';
import { createServices, type Services } from '../server/services.ts';

/** Options every command accepts. */
export function withDataDir(cmd: Command): Command {
  return cmd.option('--data-dir <dir>', 'data directory (env DATA_DIR, default ./data)').option('--dev', 'development mode: accept the development license key (env STACKS_DEV)');
}

export function configFrom(opts: { dataDir?: string; dev?: boolean; port?: string; logLevel?: string }): Config {
  return loadConfig({ dataDir: opts.dataDir, dev: opts.dev || undefined, port: opts.port, logLevel: opts.logLevel });
}

/**
 * Runs a command against the services of a data dir directly (no HTTP to a server). Logs go to
 * stderr at warn level so that command output stays clean.
 */
export async function withServices<T>(opts: { dataDir?: string; dev?: boolean }, fn: (s: Services) => Promise<T> | T): Promise<T> {
  const config = configFrom(opts);
  const services = await createServices({ ...config, logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel }, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel));
  try {
    return await fn(services);
  } finally {
    services.store.close();
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
