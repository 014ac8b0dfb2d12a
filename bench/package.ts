// `npm run bench -- package [--tarball FILE]`: proves the offline package works with no network.
// Builds the package (npm run package) unless --tarball names one, unpacks it into an empty
// directory, and inside a network namespace of its own (`unshare -n`: only a loopback interface,
// no route anywhere, no DNS) with a PATH that has no node and no npm (so the bundled runtime runs):
// ./install.sh --offline, ./stacks serve, /ping, an import, its vectors from the sentence model, a query.
// Prints what it measured.
//
// A production license cannot be signed here (its private key is the vendor's), so the check adds
// the development verify key to the unpacked copy and runs the server in dev mode with a license
// signed by it; the package itself ships no development key.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signLicense } from '../server/license/license.ts';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const at = args.indexOf('--tarball');
let tarball = at >= 0 ? path.resolve(args[at + 1]!) : '';
if (!tarball) {
  execFileSync('npm', ['run', 'package', '--silent'], { cwd: root, stdio: 'inherit' });
  const dir = path.join(root, '.tmp/package');
  tarball = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('-linux-x64.tar.gz'))!);
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stacks-offline-'));
const started = Date.now();
execFileSync('tar', ['-xzf', tarball, '-C', work]);
const pkg = path.join(work, fs.readdirSync(work)[0]!);
console.log(`unpacked ${path.basename(tarball)} (${(fs.statSync(tarball).size / 1024 / 1024).toFixed(1)} MB) into ${pkg} in ${Date.now() - started} ms`);
if (fs.existsSync(path.join(pkg, 'licenses/dev'))) throw new Error('the package ships the development key');
fs.mkdirSync(path.join(pkg, 'licenses/dev'));
fs.copyFileSync(path.join(root, 'licenses/dev/stacks-dev.public.pem'), path.join(pkg, 'licenses/dev/stacks-dev.public.pem'));
const dataDir = path.join(work, 'data');
fs.mkdirSync(dataDir);
const payload = {
  licensee: 'offline check',
  edition: 'enterprise',
  issuedAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 86400_000).toISOString(),
  maxMembers: null,
  features: [],
};
fs.writeFileSync(
  path.join(dataDir, 'license.json'),
  JSON.stringify(signLicense(payload, fs.readFileSync(path.join(root, 'licenses/dev/stacks-dev.private.pem'), 'utf8'))),
);
fs.copyFileSync(path.join(root, 'test/fixtures/corpus/bundles/pino.json'), path.join(work, 'pino.json'));
fs.copyFileSync(path.join(import.meta.dirname, 'package-check.mjs'), path.join(work, 'check.mjs'));

// No node, no npm, no apt on the PATH: a folder of the few basic tools install.sh and the check use.
const tools = path.join(work, 'tools');
fs.mkdirSync(tools);
for (const t of ['sh', 'bash', 'dirname', 'mkdir', 'id', 'ip', 'cat', 'grep', 'sort', 'uname', 'ls', 'env']) {
  const found = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'].map((d) => path.join(d, t)).find((f) => fs.existsSync(f));
  if (found) fs.symlinkSync(found, path.join(tools, t));
}
const env = { PATH: tools, HOME: work, LANG: 'C.UTF-8' };
const r = spawnSync(
  '/usr/bin/unshare',
  ['-n', `${tools}/sh`, '-c', `ip link set lo up && exec "${pkg}/runtime/node/bin/node" "${work}/check.mjs" "${pkg}" "${dataDir}" "${work}/pino.json"`],
  { env, stdio: 'inherit', timeout: 10 * 60_000 },
);
fs.rmSync(work, { recursive: true, force: true });
if (r.status !== 0) {
  console.error(`offline check failed (exit ${r.status ?? r.signal}${r.error ? `: ${r.error.message}` : ''})`);
  process.exit(1);
}
console.log(`offline check passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
