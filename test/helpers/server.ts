import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { loadConfig, type Config, type ConfigInput } from '../../server/config.ts';
import { createLogger, type Logger } from '../../server/log.ts';
import { startServer, type RunningServer } from '../../server/server.ts';
import { onSqlite, type ServiceOverrides, type Services } from '../../server/services.ts';
import type { Store } from '../../server/store/index.ts';
import { signLicense, type LicensePayload } from '../../server/license/license.ts';
import { trackChild, trackOpen, trackTempDir } from './lifecycle.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const DEV_PRIVATE_KEY = path.join(ROOT, 'licenses/dev/stacks-dev.private.pem');

/** A port free on 127.0.0.1 now (for a process or a setting that must know its port before it listens). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** A new directory in the system's temp dir, removed when this process exits (lifecycle.ts). */
export function tempDir(prefix = 'stacks-test-'): string {
  return trackTempDir(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** A license signed with the committed development key (accepted in dev mode only). */
export function devLicense(overrides: Partial<LicensePayload> = {}): string {
  const payload: LicensePayload = {
    licensee: 'Test Co',
    edition: 'enterprise',
    issuedAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 365 * 86400_000).toISOString(),
    maxMembers: null,
    features: [],
    ...overrides,
  };
  return JSON.stringify(signLicense(payload, fs.readFileSync(DEV_PRIVATE_KEY, 'utf8')));
}

export interface TestServer extends RunningServer {
  /** The services; a test server's state is SQLite's (its stores answer synchronously). */
  services: Services<Store>;
  /** The owner key created on first start. */
  key: string;
  dataDir: string;
  /** fetch relative to the server URL, with the owner key unless `auth: null` / another key is given. */
  api(pathname: string, init?: RequestInit & { auth?: string | null }): Promise<Response>;
}

/**
 * The real sentence model, with the vectors of the reference corpora (test/fixtures/corpus) from its
 * cache (test/fixtures/model/corpus.vcache, scripts/build-vector-cache.ts; embed-model.test.ts checks
 * it against the model): for the tests of ranking, which would otherwise embed thousands of snippets.
 */
export const REAL_MODEL = { embedProvider: 'model', embedCache: path.join(ROOT, 'test/fixtures/model/corpus.vcache') } as const;

export interface TestServerOptions {
  config?: Partial<ConfigInput>;
  /** Install a valid dev license (default true). */
  license?: boolean;
  dataDir?: string;
  overrides?: ServiceOverrides;
  /** The server's logger (default: one at config.logLevel on stderr, silent unless a test asks). */
  log?: Logger;
}

/**
 * A test server's settings: ephemeral port on 127.0.0.1, dev mode, silent, `overrides` on top.
 * Off unless a test asks: the own documentation (tests count and search the libraries they load)
 * and ranking models learned in the background (CPU most tests do not need; search-model.test.ts
 * and the eval turn it on). The builtin word vectors embed while writing, so a test searches its
 * imports at once; the tests of the sentence model (embed-model.test.ts) and the eval ask for it.
 */
export function testServerConfig(dataDir: string, overrides: Partial<ConfigInput> = {}): Config {
  return loadConfig(
    {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      dev: true,
      logLevel: 'silent',
      ownDocs: false,
      learnRanking: false,
      embedProvider: 'builtin',
      ...overrides,
    } as never,
    {},
  );
}

/**
 * Starts the real server in this process on an ephemeral port with a temporary data dir (dev mode).
 * Close it in `t.after`/`after`/`finally`; one left open is closed after the file's tests.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  if (options.license !== false) fs.writeFileSync(path.join(dataDir, 'license.json'), devLicense());
  const config = testServerConfig(dataDir, options.config);
  const server = await startServer(config, { log: options.log ?? createLogger(config.logLevel), overrides: options.overrides });
  const key = server.firstKey?.key ?? '';
  return trackOpen<TestServer>({
    ...server,
    services: onSqlite(server.services),
    key,
    dataDir,
    api(pathname, init = {}) {
      const headers = new Headers(init.headers);
      const auth = init.auth === undefined ? key : init.auth;
      if (auth) headers.set('authorization', `Bearer ${auth}`);
      return fetch(new URL(pathname, server.url), { ...init, headers });
    },
  });
}

/** The script a `stacks` child process runs: the compiled program when test/run-versions.mjs built one (TEST_CLI_BUILD), else the sources. */
export function stacksEntry(): string {
  return process.env.TEST_CLI_BUILD ? path.join(process.env.TEST_CLI_BUILD, 'cli/main.js') : path.join(ROOT, 'bin/stacks.js');
}

/**
 * Runs the real CLI as a child process (for crash tests and CLI tests); `nodeFlags` go to node itself.
 * The child is killed when the test process ends, if it is still running then.
 */
export function spawnStacks(args: string[], env: NodeJS.ProcessEnv = {}, nodeFlags: string[] = [], stdin: 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  return trackChild(
    spawn(process.execPath, [...nodeFlags, stacksEntry(), ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', STACKS_OWN_DOCS: 'false', STACKS_LEARN_RANKING: 'false', STACKS_EMBED_PROVIDER: 'builtin', ...env },
      stdio: [stdin, 'pipe', 'pipe'],
    }),
  );
}

export interface StacksProcess {
  child: ChildProcess;
  /** Base URL on 127.0.0.1. */
  url: string;
  /** The owner key printed on first start, or null. */
  key: string | null;
}

/**
 * Starts `stacks serve` as a real child process on an ephemeral port and reads its URL (and the
 * first-start key, printed in the same write) from stdout. Used by crash tests and benchmarks.
 */
export async function startStacksProcess(options: {
  dataDir: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  nodeFlags?: string[];
  timeoutMs?: number;
}): Promise<StacksProcess> {
  const child = spawnStacks(
    ['serve', '--port', '0', '--data-dir', options.dataDir, ...(options.args ?? [])],
    { HOST: '127.0.0.1', ...options.env },
    options.nodeFlags,
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => process.env.TEST_VERBOSE && process.stderr.write(d));
  let m: RegExpExecArray;
  try {
    m = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`stacks serve did not start: ${out}`)), options.timeoutMs ?? 120_000);
      const check = () => {
        const found = /running at (http:\/\/\S+)/.exec(out);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      child.stdout!.on('data', check);
      child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`stacks serve exited with ${code}: ${out}`))));
    });
  } catch (err) {
    await stopProcess(child, 'SIGKILL');
    throw err;
  }
  return { child, url: m[1]!.replace('localhost', '127.0.0.1'), key: /(stk_[A-Za-z0-9_-]+)/.exec(out)?.[1] ?? null };
}

/** Sends `signal` (SIGTERM unless given) and waits until the process has exited; resolves at once if it already has. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** Runs the CLI to completion and returns its output; `input` is written to its standard input (e.g. for --password-stdin). */
export async function runStacks(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnStacks(args, env, [], input === undefined ? 'ignore' : 'pipe');
  if (input !== undefined) child.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

/** Polls until fn returns a truthy value or the timeout passes. */
export async function waitFor<T>(fn: () => Promise<T> | T, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
