import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiError } from '../../../lib/errors.ts';

/**
 * Runs the system `git` for the git source: no shell, a clean environment (no system or user
 * configuration, no terminal prompts, no credential helpers, no hooks, symlinks checked out as
 * plain files, only the https, http, ssh and git transports, no HTTP redirects), a time limit,
 * and optionally a limit on the bytes written into a directory (a clone over it is killed).
 */
export interface GitRun {
  args: string[];
  cwd?: string;
  /** Extra `-c` settings (pinned addresses, an authorization header: never logged). */
  config?: [string, string][];
  /** Extra environment (GIT_SSH_COMMAND). */
  env?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Kill git when this directory grows past maxBytes. */
  watch?: { dir: string; maxBytes: number };
}

export interface GitResult {
  stdout: string;
  stderr: string;
}

const SAFE_CONFIG: [string, string][] = [
  ['core.hooksPath', os.devNull],
  ['core.symlinks', 'false'],
  ['core.fsmonitor', 'false'],
  ['core.askPass', ''],
  ['credential.helper', ''],
  ['http.followRedirects', 'false'],
  ['protocol.file.allow', 'never'],
  ['protocol.ext.allow', 'never'],
  ['submodule.recurse', 'false'],
  ['advice.detachedHead', 'false'],
  ['init.defaultBranch', 'main'],
];

/** Output kept per stream: enough for ls-tree of a large repository, bounded all the same. */
const MAX_OUTPUT = 64 * 1024 * 1024;

export class GitFailed extends Error {
  constructor(
    message: string,
    readonly stderr: string,
    readonly reason: 'exit' | 'timeout' | 'size' | 'aborted',
  ) {
    super(message);
  }
}

export function gitEnv(config: [string, string][], extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const all = [...SAFE_CONFIG, ...config];
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: os.tmpdir(),
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: 'https:http:ssh:git',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_LFS_SKIP_SMUDGE: '1',
    GIT_CONFIG_COUNT: String(all.length),
    ...extra,
  };
  all.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

export function runGit(run: GitRun): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', run.args, { cwd: run.cwd, env: gitEnv(run.config ?? [], run.env), stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    let stdout = '';
    let stderr = '';
    let stop: GitFailed['reason'] | null = null;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout.length < MAX_OUTPUT ? (stdout += d) : undefined));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr.length < MAX_OUTPUT ? (stderr += d) : undefined));
    const kill = (why: GitFailed['reason']) => {
      if (stop) return;
      stop = why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill('timeout'), run.timeoutMs);
    const onAbort = () => kill('aborted');
    if (run.signal?.aborted) onAbort();
    else run.signal?.addEventListener('abort', onAbort, { once: true });
    const watcher = run.watch ? setInterval(() => dirBytes(run.watch!.dir, run.watch!.maxBytes) > run.watch!.maxBytes && kill('size'), 500) : null;
    const done = () => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      run.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (err) => {
      done();
      reject(new ApiError('internal_error', `git could not be started: ${err.message}. Install git (apt-get install git).`));
    });
    child.on('close', (code) => {
      done();
      if (run.watch && !stop && code === 0 && dirBytes(run.watch.dir, run.watch.maxBytes) > run.watch.maxBytes) stop = 'size';
      if (stop === 'aborted') return reject(run.signal?.reason ?? new GitFailed('git was stopped', stderr, 'aborted'));
      if (stop === 'timeout')
        return reject(new GitFailed(`git ${run.args[0]} took longer than ${Math.round(run.timeoutMs / 1000)} s (STACKS_GIT_TIMEOUT_MS)`, stderr, 'timeout'));
      if (stop === 'size') return reject(new GitFailed(`the repository is larger than ${run.watch!.maxBytes} bytes (STACKS_GIT_MAX_BYTES)`, stderr, 'size'));
      if (code !== 0) return reject(new GitFailed(`git ${run.args[0]} failed: ${lastLines(stderr)}`, stderr, 'exit'));
      resolve({ stdout, stderr });
    });
  });
}

/** Bytes under a directory, counted until `limit` is passed (then the walk stops early). */
export function dirBytes(dir: string, limit = Infinity): number {
  let total = 0;
  const stack = [dir];
  while (stack.length && total <= limit) {
    const d = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) {
        try {
          total += fs.statSync(p).size;
        } catch {
          /* removed meanwhile (git's temporary files) */
        }
      }
    }
  }
  return total;
}

function lastLines(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(Cloning into|remote: (Counting|Compressing|Enumerating|Total))/.test(l));
  // ssh and curl say why before git's closing "fatal:" lines.
  return lines.slice(-5).join(' ').slice(0, 600) || 'no message';
}
