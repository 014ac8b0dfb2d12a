import type { Command } from 'commander';
import { serveCommand } from './serve.ts';
import { keysCommand } from './keys.ts';
import { licenseCommand } from './license.ts';
import { librariesCommand } from './libraries.ts';
import { importCommand } from './import.ts';
import { mcpCommand } from './mcp.ts';
import { teamsCommand } from './teams.ts';
import { addCommand } from './add.ts';
import { searchCommand } from './search.ts';
import { crawlCommand } from './crawl.ts';
import { jobsCommand } from './jobs.ts';
import { auditCommand } from './audit.ts';
import { usersCommand } from './users.ts';
import { gitHostsCommand } from './git.ts';
import { backupCommand } from './backup.ts';
import { exportCommand } from './export.ts';
import { sourcesCommand } from './sources.ts';
import { storeCommand } from './store.ts';

/** Every CLI command module; each adds its commands to the program. */
export const commands: ((program: Command) => void)[] = [
  serveCommand,
  keysCommand,
  licenseCommand,
  librariesCommand,
  mcpCommand,
  importCommand,
  teamsCommand,
  addCommand,
  searchCommand,
  crawlCommand,
  jobsCommand,
  auditCommand,
  usersCommand,
  gitHostsCommand,
  backupCommand,
  exportCommand,
  sourcesCommand,
  storeCommand,
];
