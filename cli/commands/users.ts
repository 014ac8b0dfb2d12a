import readline from 'node:readline';
import type { Command } from 'commander';
import { choiceOption, output, recorded, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import type { Role } from '../../lib/model.ts';
import { ROLES } from '../../server/contracts/teams.ts';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../server/auth/passwords.ts';
import type { UserView } from '../../server/auth/users.ts';

type Opts = CommonOpts & { teamspace?: string; passwordStdin?: boolean };

/**
 * A password from the first line of standard input (--password-stdin, for scripts), or typed at a
 * prompt that does not echo it. Never an argument: arguments end up in shell history and `ps`.
 */
async function readPassword(opts: Opts): Promise<string> {
  let password: string;
  if (opts.passwordStdin || !process.stdin.isTTY) {
    const rl = readline.createInterface({ input: process.stdin });
    password = await new Promise<string>((resolve) => {
      rl.once('line', (line) => resolve(line));
      rl.once('close', () => resolve(''));
    });
    rl.close();
  } else {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Echo nothing while the password is typed.
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => {};
    process.stderr.write('Password: ');
    password = await new Promise<string>((resolve) => rl.question('', resolve));
    rl.close();
    process.stderr.write('\n');
  }
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) throw new ApiError('validation_error', `The password must have ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`);
  return password;
}

const line = (u: UserView) => `${String(u.id).padStart(4)}  ${u.username}  ${u.role} in ${u.teamspace}  ${u.kind}${u.disabled ? '  DISABLED' : ''}  last sign-in: ${u.lastSignInAt ?? 'never'}`;

/** `stacks users create|list|disable|enable|password`: console accounts, on the box. */
export function usersCommand(program: Command): void {
  const users = program.command('users').description('people who sign in to the web console (local accounts; SSO accounts appear after their first sign-in)');
  withDataDir(users.command('create').description('create a local user (asks for the password)').argument('<username>'))
    .addOption(choiceOption('--role <role>', 'role in its teamspace', ROLES, 'member'))
    .option('--teamspace <name>', 'teamspace (default: the first one)')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .action(async (username: string, opts: Opts & { role: Role }) => {
      const password = await readPassword(opts);
      await withServices(
        opts,
        async (s) => {
          const teamspaceId = opts.teamspace ? s.teams.teamspaces.byName(opts.teamspace).id : s.teams.defaultTeamspaceId();
          const u = await recorded(s, { action: 'userCreate', target: username, teamspaceId, detail: { role: opts.role } }, () => s.users.create({ username, password, teamspaceId, role: opts.role }));
          output(opts, u, () => `Created ${u.username} (${u.role} in ${u.teamspace}); they sign in at the web console.`);
        },
        { create: true },
      );
    });
  withDataDir(users.command('list').description('list users')).action(async (opts: CommonOpts) => {
    await withServices(opts, (s) => {
      const rows = s.users.list();
      output(opts, rows, () => rows.map(line));
    });
  });
  for (const [name, disabled] of [['disable', true], ['enable', false]] as const) {
    withDataDir(users.command(name).description(disabled ? 'disable a user and end its sessions' : 'enable a disabled user').argument('<username>')).action(async (username: string, opts: CommonOpts) => {
      await withServices(opts, (s) => {
        const u = s.users.byUsername(username);
        const after = recorded(s, { action: 'userUpdate', target: u.username, teamspaceId: s.users.principalRow(u.id).teamspace_id, detail: { disabled } }, () => s.users.setDisabled(u.id, disabled));
        output(opts, after, () => `${after.username} is ${disabled ? 'disabled' : 'enabled'}.`);
      });
    });
  }
  withDataDir(users.command('password').description("set a local user's password (ends all of that user's sessions)").argument('<username>'))
    .option('--password-stdin', 'read the password from the first line of standard input')
    .action(async (username: string, opts: Opts) => {
      const password = await readPassword(opts);
      await withServices(opts, async (s) => {
        const u = s.users.byUsername(username);
        await recorded(s, { action: 'userUpdate', target: u.username, teamspaceId: s.users.principalRow(u.id).teamspace_id, detail: { change: 'password' } }, () => s.users.setPassword(u.id, password));
        output(opts, { id: u.id, username: u.username, passwordChanged: true }, () => `Password of ${u.username} changed.`);
      });
    });
}
