// Real Git repositories for the git-source tests and the bench: built on disk with the system git,
// served over smart HTTP by `git http-backend` behind a small node:http server on 127.0.0.1
// (optionally with basic authentication per path prefix). Close the server in `after`/`finally`;
// one left open is closed after the file's tests (lifecycle.ts).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { listen, type FixtureServer } from './fixtures.ts';
import { trackChild } from './lifecycle.ts';

/** The environment test git commands run with: no system or user config, a fixed author, no prompts. */
export const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: os.devNull,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 't@example.com',
  GIT_TERMINAL_PROMPT: '0',
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

/** A working repository whose commits are pushed to a bare one under the served root. */
export class TestRepo {
  readonly work: string;
  readonly bare: string;

  constructor(
    root: string,
    readonly name: string,
  ) {
    this.work = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-gitwork-'));
    this.bare = path.join(root, `${name}.git`);
    git(this.work, 'init', '-q', '-b', 'main');
  }

  write(files: Record<string, string | Buffer>): this {
    for (const [rel, content] of Object.entries(files)) {
      const p = path.join(this.work, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
    }
    return this;
  }

  remove(rel: string): this {
    fs.rmSync(path.join(this.work, rel), { force: true });
    return this;
  }

  commit(message: string, tag?: string): this {
    git(this.work, 'add', '-A');
    git(this.work, 'commit', '-q', '-m', message);
    if (tag) git(this.work, 'tag', tag);
    return this;
  }

  /** Pushes every branch and tag to the served bare repository (created on first push). */
  publish(): this {
    if (!fs.existsSync(this.bare)) {
      fs.mkdirSync(path.dirname(this.bare), { recursive: true });
      git(path.dirname(this.bare), 'init', '-q', '--bare', '-b', 'main', this.bare);
      git(this.bare, 'config', 'uploadpack.allowFilter', 'true');
      git(this.bare, 'config', 'http.receivepack', 'false');
    }
    git(this.work, 'push', '-q', '--force', '--tags', this.bare, 'main');
    return this;
  }

  cleanup(): void {
    fs.rmSync(this.work, { recursive: true, force: true });
  }
}

export interface GitHttpServer extends FixtureServer {
  root: string;
  /** Requests seen: method and path (to check what a clone fetched). */
  requests: string[];
  /** The Authorization header of each request, by path (null: none sent): to check whose credentials came. */
  authorizations: { path: string; authorization: string | null }[];
}

/**
 * Serves the bare repositories under `root` with `git http-backend`. Paths starting with a prefix
 * of `auth` need basic authentication with that user and password (401 otherwise).
 */
export async function startGitHttpServer(root: string, auth: Record<string, { user: string; password: string }> = {}): Promise<GitHttpServer> {
  const requests: string[] = [];
  const authorizations: GitHttpServer['authorizations'] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}`);
    authorizations.push({ path: url.pathname, authorization: req.headers.authorization ?? null });
    const guard = Object.entries(auth).find(([prefix]) => url.pathname.startsWith(prefix));
    if (guard) {
      const expected = `Basic ${Buffer.from(`${guard[1].user}:${guard[1].password}`).toString('base64')}`;
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
        return res.end('authentication required');
      }
    }
    const child = trackChild(
      spawn('git', ['http-backend'], {
        env: {
          ...GIT_ENV,
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: '1',
          PATH_INFO: decodeURIComponent(url.pathname),
          QUERY_STRING: url.search.slice(1),
          REQUEST_METHOD: req.method ?? 'GET',
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          REMOTE_ADDR: '127.0.0.1',
          REMOTE_USER: guard ? guard[1].user : '',
          HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
          GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        },
        stdio: ['pipe', 'pipe', 'ignore'],
      }),
    );
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let sent = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (sent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      sent = true;
      res.write(head.subarray(end + 4));
    });
    child.on('close', () => res.end());
  });
  const s = await listen(server);
  return Object.assign(s, { root, requests, authorizations });
}
