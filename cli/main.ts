import { Command, CommanderError } from 'commander';
import { commands } from './commands/index.ts';
import { ConfigError } from '../server/config.ts';
import { ApiError } from '../lib/errors.ts';

const program = new Command();
program.name('stacks').description('Stacks: offline documentation search and library indexing').version('0.1.0').showHelpAfterError();
for (const register of commands) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  if (err instanceof ConfigError || err instanceof ApiError) {
    process.stderr.write(`stacks: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`stacks: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
}
