// The TypeScript loader of the test processes on a Node.js with module.registerHooks (22.15 and
// later): test/run.mjs preloads it there instead of tsx (`--import`). tsx's hooks run in a thread
// of their own that every module's resolve and load crosses; on 2 cores that cost about 0.7
// CPU-seconds per test file (loading the server's ~400 modules), ~1.5 s against ~0.8 s here. These
// hooks run in the loading thread. The same transform as tsx (esbuild, the tsconfig's target), each
// result cached on disk by the source's hash. Node.js 20 has no registerHooks: it keeps tsx.
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
  target: 'node20',
  sourcemap: 'inline',
  // What tsx reads from tsconfig.json that changes the emitted code (class fields as ES2023 defines them).
  tsconfigRaw: { compilerOptions: { target: 'ES2023', useDefineForClassFields: true } },
};
let esbuild;
const cacheDir = path.join(os.tmpdir(), `stacks-ts-hooks-${process.getuid?.() ?? 'user'}`);
let salt;

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

// Stack traces point into the TypeScript sources (the inline source maps), as under tsx.
process.setSourceMapsEnabled(true);
module.registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:') && /\.[cm]?ts$/.test(new URL(url).pathname)) {
      const file = fileURLToPath(url);
      if (!file.includes(`${path.sep}node_modules${path.sep}`) && !file.endsWith('.d.ts')) {
        if (file.endsWith('.cts')) throw new Error(`test/ts-hooks.mjs loads ES modules only: ${file}`);
        return { format: 'module', source: transform(file), shortCircuit: true };
      }
    }
    return nextLoad(url, context);
  },
});
