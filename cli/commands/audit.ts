import type { Command } from 'commander';
import { intArg, output, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { LOCAL } from '../../server/operations/index.ts';

interface AuditOpts extends CommonOpts {
  since?: string;
  until?: string;
  actor?: string;
  action?: string;
  before?: number;
  limit: number;
}

/** `stacks audit`: the audit log as GET /api/audit answers it, every teamspace's (the operator reads all). */
export function auditCommand(program: Command): void {
  withDataDir(program.command('audit').description('show the audit log, newest first (as GET /api/audit)'))
    .option('--since <time>', 'entries at or after this ISO date or time')
    .option('--until <time>', 'entries before this ISO date or time')
    .option('--actor <who>', 'a member or user name, key:<id>, operator or anonymous')
    .option('--action <id>', 'e.g. keyCreate, importLibraries, libraryUpdate, authRefused')
    .option('--before <id>', 'entries older than this id (the `next` of the previous page)', intArg(1))
    .option('--limit <n>', 'entries per page (1-1000)', intArg(1, 1000), 100)
    .action(async (opts: AuditOpts) => {
      await withServices(opts, async (s) => {
        const page = await s.operations.auditList(
          { since: opts.since, until: opts.until, actor: opts.actor, action: opts.action, before: opts.before, limit: opts.limit },
          LOCAL,
        );
        output(opts, page, () => [
          ...page.entries.map((e) => {
            const who =
              e.actor.kind === 'key' ? `key:${e.actor.keyId} (${e.actor.name ?? '?'})` : e.actor.name ? `${e.actor.kind} ${e.actor.name}` : e.actor.kind;
            const times = e.count > 1 ? `  x${e.count} until ${e.lastAt}` : '';
            return `${String(e.id).padStart(5)}  ${e.at}  ${e.outcome.padEnd(7)}  ${e.action}${e.target ? ` ${e.target}` : ''}  by ${who}${e.teamspace ? ` [${e.teamspace}]` : ''}${e.sourceIp ? ` from ${e.sourceIp}` : ''}${times}`;
          }),
          ...(page.next ? [`(more: --before ${page.next})`] : []),
        ]);
      });
    });
}
