import fs from 'node:fs';
import type { Command } from 'commander';
import { output, runIndexing, visibilityOption, withDataDir, withServices, type CommonOpts } from '../context.ts';
import { ApiError } from '../../lib/errors.ts';
import { LOCAL } from '../../server/operations/index.ts';

interface AddGitOpts extends CommonOpts {
  branch?: string;
  folders?: string;
  excludeFolders?: string;
  excludeFiles?: string;
  force?: boolean;
  visibility?: string;
}

const list = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);

/** `stacks add git <url>`: POST /api/parse in this process (as the default teamspace), then the queue is worked until idle. */
export function addGitCommand(add: Command): void {
  withDataDir(
    add
      .command('git')
      .description('a Git repository: docs of its default branch (or --branch), tags as versions on request, a source-code index')
      .argument('<repo-url>'),
  )
    .option('--branch <name>', 'branch or tag (default: the default branch)')
    .option('--folders <list>', 'comma-separated folders to index (a sparse checkout)')
    .option('--exclude-folders <list>', 'comma-separated folder globs to leave out')
    .option('--exclude-files <list>', 'comma-separated file globs to leave out')
    .option('--force', 'index again, every file, when the repository is already indexed')
    .addOption(visibilityOption())
    .action(async (repoUrl: string, opts: AddGitOpts) => {
      const input = {
        repoUrl,
        branch: opts.branch,
        folders: list(opts.folders),
        excludeFolders: list(opts.excludeFolders),
        excludeFiles: list(opts.excludeFiles),
        force: !!opts.force,
        visibility: opts.visibility,
      };
      await runIndexing(
        opts,
        (s) => s.operations.parseRepo(input, LOCAL),
        (r) => ({ jobId: r.queueId, libraryId: r.project }),
      );
    });
}

/**
 * `stacks git-hosts add|list|remove`: the instance's credentials per Git host, stored encrypted
 * (STACKS_GIT_CREDENTIALS_KEY), through the same operations as /api/git-hosts. The CLI acts for the
 * instance, whose credentials serve the default teamspace's repositories; a teamspace's own are
 * managed by its owners and admins over the API (docs/git.md#whose-credentials).
 */
export function gitHostsCommand(program: Command): void {
  const hosts = program
    .command('git-hosts')
    .description(
      "the instance's credentials per Git host (HTTPS token, user and password, or SSH key), stored encrypted; used for the default teamspace's repositories",
    );
  withDataDir(
    hosts
      .command('add')
      .description("store or replace the instance's credentials of a Git host; the secret is read from a file or standard input, never from the command line")
      .argument('<host>'),
  )
    .option('--token-file <file>', 'an access token (sent as the basic-auth password; user --username, default oauth2); "-" reads standard input')
    .option('--password-file <file>', 'a password for --username (basic authentication); "-" reads standard input')
    .option('--ssh-key <file>', 'an SSH private key file')
    .option('--username <name>', 'user name (required with --password-file)')
    .action(async (host: string, opts: CommonOpts & { tokenFile?: string; passwordFile?: string; sshKey?: string; username?: string }) => {
      const given = [opts.tokenFile && 'token', opts.passwordFile && 'basic', opts.sshKey && 'ssh'].filter((x): x is 'token' | 'basic' | 'ssh' => !!x);
      if (given.length !== 1) throw new ApiError('validation_error', 'Give exactly one of --token-file, --password-file, --ssh-key.');
      const file = opts.tokenFile ?? opts.passwordFile ?? opts.sshKey!;
      const raw = fs.readFileSync(file === '-' ? 0 : file, 'utf8');
      const secret = given[0] === 'ssh' ? raw : raw.trim();
      await withServices(
        opts,
        async (s) => {
          const view = await s.operations.gitHostAdd({ host, kind: given[0], username: opts.username, secret }, LOCAL);
          output(opts, view, () => `Stored ${view.kind} credentials for ${view.host}${view.username ? ` (user ${view.username})` : ''} for the instance.`);
        },
        { create: true },
      );
    });
  withDataDir(hosts.command('list').description('hosts with credentials stored for the instance (never the secrets)')).action(async (opts: CommonOpts) => {
    await withServices(opts, async (s) => {
      const { hosts: rows } = await s.operations.gitHostsList({}, LOCAL);
      output(opts, rows, () =>
        rows.length
          ? rows.map((h) => `${h.host}  ${h.kind}${h.username ? `  ${h.username}` : ''}  updated ${h.updatedAt}`)
          : ['no Git host credentials stored'],
      );
    });
  });
  withDataDir(hosts.command('remove').description("forget the instance's credentials of a Git host").argument('<host>')).action(
    async (host: string, opts: CommonOpts) => {
      await withServices(opts, async (s) => {
        await s.operations.gitHostRemove({ host }, LOCAL);
        output(opts, { host, removed: true }, () => `Removed the credentials of ${host}.`);
      });
    },
  );
}
