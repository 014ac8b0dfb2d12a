// The TypeScript transform of test/ts-loader/register.mjs: what tsx does to a module (esbuild, with
// the tsconfig's target), cached on disk by the file's path and source so that a hundred test
// processes transform each file once. Also the `load` hook that Node.js 20 runs in its hooks thread.
import crypto from 'node:crypto';
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = module.createRequire(import.meta.url);
const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  // As tsx: syntax for the running Node.js, an inline source map without the sources (stack traces
  // name the .ts file and line; a map with the sources would be parsed at every first error).
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  sourcesContent: false,
  // What tsx takes from tsconfig.json that changes the emitted code (class fields as ES2023 defines them).
  tsconfigRaw: { compilerOptions: { target: 'ES2023', useDefineForClassFields: true } },
};
const cacheDir = path.join(os.tmpdir(), `stacks-ts-loader-${process.getuid?.() ?? 'user'}`);
let esbuild;
let salt;

/** The file: URL of a TypeScript module of this repository (node_modules left to Node.js), else null. */
function typescriptFile(url) {
  if (!url.startsWith('file:')) return null;
  const file = fileURLToPath(url);
  if (!file.endsWith('.ts') || file.endsWith('.d.ts') || file.includes(`${path.sep}node_modules${path.sep}`)) return null;
  return file;
}

/** The module's JavaScript: from the cache, else transformed (and cached). */
function transform(file) {
  const source = fs.readFileSync(file, 'utf8');
  salt ??= `${require('esbuild/package.json').version}\0${JSON.stringify(OPTIONS)}\0`;
  const key = crypto.createHash('sha256').update(salt).update(file).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  esbuild ??= require('esbuild');
  const { code } = esbuild.transformSync(source, { ...OPTIONS, sourcefile: file });
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    // Written whole, then renamed: another test process may read it at the same moment.
    const tmp = `${cached}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  } catch {
    // no cache where the temp dir is not writable: transformed again next time
  }
  return code;
}

/** The load hook: synchronous for module.registerHooks; module.register (Node.js 20) awaits what it returns. */
export function load(url, context, nextLoad) {
  const file = typescriptFile(url);
  return file ? { format: 'module', source: transform(file), shortCircuit: true } : nextLoad(url, context);
}
