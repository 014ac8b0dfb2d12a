import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ApiError } from '../../../lib/errors.ts';
import { checkHost, type NetPolicy } from '../../../lib/net/guard.ts';
import type { RepoAddress } from './address.ts';
import type { GitAuth } from './credentials.ts';
import { GitFailed, runGit, type GitRun } from './run.ts';

/**
 * Talking to a remote repository: the address guard (the host is resolved and checked like the
 * crawler's, and git is then pinned to the checked address, so a second lookup cannot point it
 * elsewhere), the credentials (an Authorization header or an SSH key file that exists only while
 * git runs), `ls-remote` and the shallow clone.
 */
export interface RemoteOptions {
  policy: NetPolicy;
  auth: GitAuth | null;
  timeoutMs: number;
  /** Where an SSH key file lives while git runs (inside the data dir). */
  workDir: string;
  /** SSH host keys, kept across jobs: the first key a host shows is trusted, a changed one refused. */
  knownHostsFile: string;
  signal?: AbortSignal;
}

export interface RemoteRefs {
  /** The default branch (what HEAD points at), when the server says. */
  head: string | null;
  branches: string[];
  tags: string[];
}

interface Connection {
  url: string;
  config: [string, string][];
  env: Record<string, string>;
  cleanup(): void;
}

/** Checks the host and prepares git's settings for it; call cleanup() when git is done. */
async function connect(addr: RepoAddress, o: RemoteOptions): Promise<Connection> {
  const label = `${addr.transport}://${addr.host}${addr.port ? `:${addr.port}` : ''}`;
  const ip = (await checkHost(addr.host, o.policy, label))[0]!;
  const literal = net.isIPv6(ip) ? `[${ip}]` : ip;
  const config: [string, string][] = [];
  const env: Record<string, string> = {};
  let url = addr.url;
  let keyDir: string | null = null;
  if (addr.transport === 'https' || addr.transport === 'http') {
    config.push(['http.curloptResolve', `${addr.host}:${addr.port ?? (addr.transport === 'https' ? 443 : 80)}:${literal}`]);
    if (o.auth && o.auth.kind !== 'ssh') {
      const basic = Buffer.from(`${o.auth.username ?? 'oauth2'}:${o.auth.secret}`).toString('base64');
      config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
    }
  } else {
    url = url.replace(addr.host.includes(':') ? `[${addr.host}]` : addr.host, literal);
  }
  if (addr.transport === 'ssh') {
    fs.mkdirSync(o.workDir, { recursive: true, mode: 0o700 });
    const ssh = [
      'ssh',
      '-F',
      '/dev/null',
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=accept-new',
      '-o',
      `UserKnownHostsFile=${o.knownHostsFile}`,
      '-o',
      `HostKeyAlias=${addr.host}`,
      '-o',
      'ConnectTimeout=20',
    ];
    if (o.auth?.kind === 'ssh') {
      keyDir = fs.mkdtempSync(path.join(o.workDir, 'key-'));
      const keyFile = path.join(keyDir, 'id');
      fs.writeFileSync(keyFile, o.auth.secret.endsWith('\n') ? o.auth.secret : `${o.auth.secret}\n`, { mode: 0o600 });
      ssh.push('-i', keyFile, '-o', 'IdentitiesOnly=yes');
    }
    // git runs GIT_SSH_COMMAND through the shell: every word is quoted.
    env.GIT_SSH_COMMAND = ssh.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  }
  return { url, config, env, cleanup: () => keyDir && fs.rmSync(keyDir, { recursive: true, force: true }) };
}

async function withRemote<T>(
  addr: RepoAddress,
  o: RemoteOptions,
  fn: (c: Connection, run: (r: Omit<GitRun, 'config' | 'env' | 'timeoutMs' | 'signal'>) => ReturnType<typeof runGit>) => Promise<T>,
): Promise<T> {
  const c = await connect(addr, o);
  try {
    return await fn(c, (r) => runGit({ ...r, config: c.config, env: c.env, timeoutMs: o.timeoutMs, signal: o.signal }));
  } catch (err) {
    throw explain(err, addr, o.auth);
  } finally {
    c.cleanup();
  }
}

/** Branches, tags and the default branch of a remote repository (one round trip, nothing downloaded). */
export function listRemote(addr: RepoAddress, o: RemoteOptions): Promise<RemoteRefs> {
  return withRemote(addr, o, async (c, run) => {
    const { stdout } = await run({ args: ['ls-remote', '--symref', c.url, 'HEAD', 'refs/heads/*', 'refs/tags/*'] });
    const refs: RemoteRefs = { head: null, branches: [], tags: [] };
    for (const line of stdout.split('\n')) {
      const sym = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
      if (sym) refs.head = sym[1]!;
      const m = /^[0-9a-f]{40,64}\trefs\/(heads|tags)\/(\S+?)(\^\{\})?$/.exec(line);
      if (!m) continue;
      if (m[1] === 'heads') refs.branches.push(m[2]!);
      else if (!m[3]) refs.tags.push(m[2]!);
    }
    return refs;
  });
}

export interface CloneOptions extends RemoteOptions {
  /** Branch or tag; null: the default branch. */
  ref: string | null;
  /** Sparse checkout of these folders (and the files at the root). */
  folders: string[];
  dir: string;
  maxBytes: number;
}

/** A shallow clone of one branch or tag into `dir` (which must not exist); returns the commit checked out. */
export function cloneRepo(addr: RepoAddress, o: CloneOptions): Promise<{ commit: string; branch: string | null }> {
  return withRemote(addr, o, async (c, run) => {
    const sparse = o.folders.length > 0;
    const args = [
      'clone',
      '--depth',
      '1',
      '--single-branch',
      '--no-tags',
      '--quiet',
      ...(sparse ? ['--sparse', '--filter=blob:none'] : []),
      ...(o.ref ? [`--branch=${o.ref}`] : []),
      '--',
      c.url,
      o.dir,
    ];
    await run({ args, watch: { dir: o.dir, maxBytes: o.maxBytes } });
    if (sparse) await run({ args: ['sparse-checkout', 'set', '--', ...o.folders], cwd: o.dir, watch: { dir: o.dir, maxBytes: o.maxBytes } });
    const commit = (await run({ args: ['rev-parse', 'HEAD'], cwd: o.dir })).stdout.trim();
    const branch = (await run({ args: ['rev-parse', '--abbrev-ref', 'HEAD'], cwd: o.dir })).stdout.trim();
    return { commit, branch: branch && branch !== 'HEAD' ? branch : null };
  });
}

/**
 * Brings an earlier clone of the same repository, ref and folders (a library's kept checkout) to
 * the remote's current commit: one shallow fetch of what changed, then a forced checkout of it.
 */
export function updateRepo(addr: RepoAddress, o: CloneOptions): Promise<{ commit: string }> {
  return withRemote(addr, o, async (c, run) => {
    const filter = o.folders.length > 0 ? ['--filter=blob:none'] : [];
    await run({
      args: ['fetch', '--depth', '1', '--no-tags', '--quiet', ...filter, '--', c.url, o.ref ?? 'HEAD'],
      cwd: o.dir,
      watch: { dir: o.dir, maxBytes: o.maxBytes },
    });
    await run({ args: ['checkout', '--quiet', '--force', '--detach', 'FETCH_HEAD'], cwd: o.dir, watch: { dir: o.dir, maxBytes: o.maxBytes } });
    return { commit: (await run({ args: ['rev-parse', 'HEAD'], cwd: o.dir })).stdout.trim() };
  });
}

/** Files of the checked-out commit: path -> blob hash (regular files only; symlinks and submodules are skipped). */
export async function treeBlobs(dir: string, timeoutMs: number): Promise<Map<string, string>> {
  const { stdout } = await runGit({ args: ['ls-tree', '-r', '-z', '--full-tree', 'HEAD'], cwd: dir, timeoutMs });
  const out = new Map<string, string>();
  for (const entry of stdout.split('\0')) {
    const m = /^(\d{6}) blob ([0-9a-f]{40,64})\t(.+)$/s.exec(entry);
    // Only regular files at safe paths: a crafted tree cannot make the indexer read outside the clone.
    if (m && (m[1] === '100644' || m[1] === '100755') && safePath(m[3]!)) out.set(m[3]!, m[2]!);
  }
  return out;
}

function safePath(p: string): boolean {
  return !p.startsWith('/') && !p.includes('\\') && p.split('/').every((seg) => seg && seg !== '.' && seg !== '..' && seg.toLowerCase() !== '.git');
}

/** A git failure as the API says it: credentials asked for or refused, not found, too large, too slow. */
function explain(err: unknown, addr: RepoAddress, auth: GitAuth | null): unknown {
  if (!(err instanceof GitFailed)) return err;
  const where = `${addr.host}${addr.port ? `:${addr.port}` : ''}`;
  if (err.reason === 'size') return new ApiError('payload_too_large', `Cloning ${addr.url} was stopped: ${err.message}. Nothing was changed.`);
  if (err.reason === 'timeout') return new ApiError('fetch_failed', `Cloning ${addr.url} was stopped: ${err.message}. Nothing was changed.`);
  const s = err.stderr;
  if (
    /Authentication failed|could not read (Username|Password)|terminal prompts disabled|HTTP 401|Permission denied \(publickey|returned error: 40[13]/i.test(s)
  ) {
    return new ApiError(
      'fetch_failed',
      auth
        ? `The Git host ${where} refused the stored credentials for ${addr.url}; replace them with \`stacks git-hosts add ${where} ...\`.`
        : `The Git host ${where} asks for credentials to read ${addr.url}; store them with \`stacks git-hosts add ${where} --token ...\` (or --username/--password, --ssh-key).`,
    );
  }
  // StrictHostKeyChecking=accept-new: a host key is learned on first use and must not change after.
  if (/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/i.test(s)) {
    return new ApiError(
      'fetch_failed',
      `The SSH host key of ${where} is not the one first seen for ${addr.host} (kept in the data dir's git/known_hosts), so the connection was refused: it may be an impostor. If the host really changed its key, remove its line from that file.`,
    );
  }
  if (/Remote branch .* not found|couldn't find remote ref/i.test(s))
    return new ApiError('fetch_failed', `${addr.url} has no branch or tag of that name: ${err.message}`);
  if (/not found|does not appear to be a git repository|returned error: 404/i.test(s))
    return new ApiError('fetch_failed', `No repository at ${addr.url}: ${err.message}`);
  return new ApiError('fetch_failed', `Reading ${addr.url} failed: ${err.message}`);
}
