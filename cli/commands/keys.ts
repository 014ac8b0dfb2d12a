import type { Command } from 'commander';
import { choiceOption, intArg, output, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { KEY_SCOPES, type KeyScope, type Role } from '../../lib/model.ts';
import { localIn, LOCAL } from '../../server/operations/index.ts';

export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

/** `stacks keys create|list|revoke`: the key operations of /api/v2/keys, as the operator (in --teamspace, or the default one). */
export function keysCommand(program: Command): void {
  const keys = program.command('keys').description('manage API keys');
  withDataDir(keys.command('create').description('create an API key (printed once)'))
    .requiredOption('--name <name>', 'a label for the key')
    .option('--member <name>', 'member that owns the key (created when new; default: the key name)')
    .addOption(choiceOption('--role <role>', 'role of a new member', ROLES, 'member'))
    .option('--teamspace <name>', 'teamspace of the member (default: the first one)')
    .addOption(choiceOption('--scope <scope>', 'read: search, context and MCP only (for an AI assistant); all: what the role allows', KEY_SCOPES, 'all'))
    .action(async (opts: CommonOpts & { name: string; member?: string; role: Role; teamspace?: string; scope: KeyScope }) => {
      await withServices(
        opts,
        async (s) => {
          const caller = localIn(opts.teamspace);
          const memberName = opts.member ?? opts.name;
          // A new member is added first (POST /api/v2/members, which enforces the license's maxMembers).
          const { members } = await s.operations.membersList({}, caller);
          const memberId =
            members.find((m) => m.name === memberName)?.id ??
            (await s.operations.memberAdd({ name: memberName, role: opts.role, createKey: false }, caller)).member.id;
          const k = await s.operations.keyCreate({ name: opts.name, memberId, scope: opts.scope }, caller);
          const { teamspaces } = await s.operations.teamspacesList({}, LOCAL);
          const teamspaceId = teamspaces.find((t) => (opts.teamspace === undefined ? t.isDefault : t.name === opts.teamspace))?.id;
          const scope = k.scope === 'read' ? ', read scope' : '';
          output(opts, { ...k, teamspaceId }, () => `Created key ${k.id} for ${k.memberName} (${k.role}${scope}). It is shown only once:\n\n${k.key}`);
        },
        { create: true },
      );
    });
  withDataDir(keys.command('list').description('list API keys (never the keys themselves)'))
    .option('--teamspace <name>', 'only the keys of this teamspace (default: all)')
    .action(async (opts: CommonOpts & { teamspace?: string }) => {
      await withServices(opts, async (s) => {
        const { keys: list } = await s.operations.keysList({}, localIn(opts.teamspace));
        output(opts, list, () =>
          list.map(
            (k) =>
              `${String(k.id).padStart(4)}  ${k.prefix}…  ${k.name}  member=${k.memberName} (${k.role})${k.scope === 'read' ? '  scope=read' : ''}  ${k.revokedAt ? `revoked ${k.revokedAt}` : `created ${k.createdAt}`}`,
          ),
        );
      });
    });
  withDataDir(keys.command('revoke').description('revoke an API key').argument('<id>', 'key id from `stacks keys list`', intArg(1))).action(
    async (id: number, opts: CommonOpts) => {
      await withServices(opts, async (s) => {
        await s.operations.keyRevoke({ id }, LOCAL);
        output(opts, { id, revoked: true }, () => `Revoked key ${id}.`);
      });
    },
  );
}
