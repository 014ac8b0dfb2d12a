import { Option, type Command } from 'commander';
import { ApiError } from '../lib/errors.ts';
import { restClient, type RestClient } from '../server/mcp/backend.ts';

/** Options of the commands that can talk to a remote Stacks instance instead of the local data dir. */
export interface RemoteOpts {
  url?: string;
  apiKey?: string;
  key?: string;
}

/** --url and --api-key (alias --key; env STACKS_API_KEY), as `stacks mcp` has them. */
export function withRemote(cmd: Command, what: string): Command {
  return cmd
    .option('--url <url>', `remote Stacks instance (http://host:3000 or http://host:3000/api) instead of the local data dir: ${what}`)
    .option('--api-key <key>', 'API key to act as (env STACKS_API_KEY)')
    .addOption(new Option('--key <key>', 'same as --api-key').hideHelp());
}

/** The API key given by --api-key, --key or STACKS_API_KEY, or null. */
export function apiKeyOf(opts: RemoteOpts): string | null {
  return opts.apiKey || opts.key || process.env.STACKS_API_KEY || null;
}

/** Checks that --url is an http(s) URL. */
export function checkRemoteUrl(url: string): string {
  let protocol = '';
  try {
    protocol = new URL(url).protocol;
  } catch {
    // reported below
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ApiError('validation_error', `--url must be an http(s) URL, not "${url}".`);
  return url;
}

/** The REST client of the instance named by --url (the one `stacks mcp --url` uses). */
export function remoteClient(opts: RemoteOpts & { url: string }): RestClient {
  return restClient(checkRemoteUrl(opts.url), apiKeyOf(opts), { userAgent: 'stacks-cli', unreachableCode: 'fetch_failed', timeoutMs: 30_000 });
}
