import { Command } from 'commander';
import { commands } from './commands/index.ts';
import { VERSION } from '../server/version.ts';

/**
 * The `stacks` program with every command. Parse errors are not printed here: they are thrown
 * (exitOverride) and cli/main.ts prints them as one line like every other error.
 */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('stacks')
    .description('Stacks: offline documentation search and library indexing')
    .version(VERSION)
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  for (const register of commands) register(program);
  return program;
}
