import readline from 'node:readline';
import type { Command } from 'commander';
import type { z } from 'zod';
import { choiceOption, output, withDataDir, withServices, type CommonOpts, type Local } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import type { Role } from '../../lib/model.ts';
import { ROLES } from '../../server/contracts/teams.ts';
import type { userView } from '../../server/contracts/users.ts';
import { LOCAL, localIn } from '../../server/operations/index.ts';

type UserView = z.output<typeof userView>;

type Opts = CommonOpts & { teamspace?: string; passwordStdin?: boolean };

/**
 * A password from the first line of standard input (--password-stdin, for scripts), or typed at a
 * prompt that does not echo it. Never an argument: arguments end up in shell history and `ps`.
 * Its length is the contract's to check (server/contracts/users.ts), as for POST /api/users.
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
  return password;
}

/** The user of a user name (as the console's users list names them: trimmed, lower case). */
async function userNamed(s: Local, username: string): Promise<UserView> {
  const { users } = await s.operations.usersList({}, LOCAL);
  const u = users.find((x) => x.username === username.trim().toLowerCase());
  if (!u) throw new ApiError('not_found', `No user named "${username}".`);
  return u;
}

const line = (u: UserView) =>
  `${String(u.id).padStart(4)}  ${u.username}  ${u.role} in ${u.teamspace}  ${u.kind}${u.disabled ? '  DISABLED' : ''}  last sign-in: ${u.lastSignInAt ?? 'never'}`;

/** `stacks users invite`: a one-time link to a console account, as Admin → Invite people makes it. */
function inviteCommand(users: Command): void {
  withDataDir(users.command('invite').description('invite a person: prints a one-time link to a console account (they choose their password)'))
    .addOption(choiceOption('--role <role>', 'role in its teamspace', ROLES, 'member'))
    .option('--username <name>', 'fix the user name (default: the invitee chooses one)')
    .option('--email <address>', 'for the record (Stacks sends no e-mail)')
    .option('--days <n>', 'days the link works (1-30)', (v) => Number(v), 7)
    .option('--teamspace <name>', 'teamspace (default: the first one)')
    .action(async (opts: Opts & { role: Role; username?: string; email?: string; days: number }) => {
      await withServices(opts, async (s) => {
        const inv = await s.operations.invitationCreate(
          { role: opts.role, username: opts.username, email: opts.email, days: opts.days },
          localIn(opts.teamspace),
        );
        output(opts, inv, () => [
          `Invitation ${inv.id}: ${inv.role} in ${inv.teamspace}, works once until ${inv.expiresAt}.`,
          inv.url ?? `${inv.path}  (open it on this instance's address; set STACKS_PUBLIC_URL to print the whole link)`,
        ]);
      });
    });
}

/** `stacks users create|list|disable|enable|password|invite`: console accounts, on the box. */
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
          const u = await s.operations.userCreate({ username, password, role: opts.role }, localIn(opts.teamspace));
          output(opts, u, () => `Created ${u.username} (${u.role} in ${u.teamspace}); they sign in at the web console.`);
        },
        { create: true },
      );
    });
  withDataDir(users.command('list').description('list users')).action(async (opts: CommonOpts) => {
    await withServices(opts, async (s) => {
      const { users: rows } = await s.operations.usersList({}, LOCAL);
      output(opts, rows, () => rows.map(line));
    });
  });
  for (const [name, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    withDataDir(
      users
        .command(name)
        .description(disabled ? 'disable a user and end its sessions' : 'enable a disabled user')
        .argument('<username>'),
    ).action(async (username: string, opts: CommonOpts) => {
      await withServices(opts, async (s) => {
        const after = await s.operations.userUpdate({ id: (await userNamed(s, username)).id, disabled }, LOCAL);
        output(opts, after, () => `${after.username} is ${disabled ? 'disabled' : 'enabled'}.`);
      });
    });
  }
  inviteCommand(users);
  withDataDir(users.command('password').description("set a local user's password (ends all of that user's sessions)").argument('<username>'))
    .option('--password-stdin', 'read the password from the first line of standard input')
    .action(async (username: string, opts: Opts) => {
      const password = await readPassword(opts);
      await withServices(opts, async (s) => {
        const u = await userNamed(s, username);
        await s.operations.userUpdate({ id: u.id, password }, LOCAL);
        output(opts, { id: u.id, username: u.username, passwordChanged: true }, () => `Password of ${u.username} changed.`);
      });
    });
}
