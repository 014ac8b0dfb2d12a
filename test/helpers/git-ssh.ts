// A real SSH transport for the git-source tests: an ssh2 server on 127.0.0.1 that admits one
// public key and runs the system `git upload-pack` on the bare repositories under `root` (what
// an SSH Git host does for `git clone ssh://...`). The client side is the system OpenSSH that
// Stacks runs. Close the server in `after`/`finally`; one left open is closed after the file's
// tests (lifecycle.ts).
import { execFileSync, spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import { GIT_ENV } from './git-repos.ts';
import { trackChild, trackOpen } from './lifecycle.ts';

const { Server, utils } = ssh2;

export interface SshKeyPair {
  /** OpenSSH private key file contents. */
  private: string;
  /** `ssh-ed25519 AAAA...` */
  public: string;
}

/**
 * A fresh ed25519 key pair made by the system's ssh-keygen. Not ssh2's generateKeyPairSync: it
 * strips leading zero bytes from the public key, so about one key in 256 cannot be parsed back
 * (mscdex/ssh2#1390), which failed these tests now and then.
 */
export function sshKeyPair(): SshKeyPair {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-sshkey-'));
  try {
    const file = path.join(dir, 'key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'stacks-test', '-f', file]);
    return { private: fs.readFileSync(file, 'utf8'), public: fs.readFileSync(`${file}.pub`, 'utf8').trim() };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface GitSshServer {
  port: number;
  /** `ssh://git@127.0.0.1:<port>/<name>.git` */
  url(name: string): string;
  /** Commands the server ran (to check what a clone asked for). */
  commands: string[];
  close(): Promise<void>;
}

/** Serves the bare repositories under `root` over SSH to the holder of `clientKey` (user `git`). */
export async function startGitSshServer(root: string, clientKey: SshKeyPair, hostKey: SshKeyPair = sshKeyPair()): Promise<GitSshServer> {
  const allowed = utils.parseKey(clientKey.public);
  if (allowed instanceof Error) throw allowed;
  const allowedBlob = allowed.getPublicSSH();
  const commands: string[] = [];
  const server = new Server({ hostKeys: [hostKey.private] }, (client) => {
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey' || ctx.username !== 'git') return ctx.reject(['publickey']);
      const offered = ctx.key.data;
      if (offered.length !== allowedBlob.length || !timingSafeEqual(offered, allowedBlob) || ctx.key.algo !== allowed.type) return ctx.reject(['publickey']);
      // The first round only asks whether the key would do; the second carries its signature.
      if (!ctx.signature) return ctx.accept();
      if (allowed.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) !== true) return ctx.reject(['publickey']);
      ctx.accept();
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        const env: Record<string, string> = {};
        session.on('env', (accept, _reject, info) => {
          if (info.key === 'GIT_PROTOCOL') env.GIT_PROTOCOL = info.val;
          accept?.();
        });
        session.on('exec', (accept, reject, info) => {
          commands.push(info.command);
          const m = /^git[- ]upload-pack '?\/?([\w./-]+?)'?$/.exec(info.command);
          const dir = m ? path.resolve(root, m[1]!) : null;
          if (!dir || !dir.startsWith(root + path.sep) || dir.includes('..')) return reject();
          const stream = accept();
          const child = trackChild(spawn('git', ['upload-pack', '--strict', dir], { env: { ...GIT_ENV, ...env }, stdio: ['pipe', 'pipe', 'pipe'] }));
          stream.pipe(child.stdin);
          child.stdout.pipe(stream, { end: false });
          child.stderr.pipe(stream.stderr, { end: false });
          child.on('close', (code) => {
            stream.exit(code ?? 1);
            stream.end();
          });
        });
      });
    });
    client.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return trackOpen({
    port,
    commands,
    url: (name: string) => `ssh://git@127.0.0.1:${port}/${name}.git`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
