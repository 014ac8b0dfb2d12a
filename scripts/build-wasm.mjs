#!/usr/bin/env node
// Compiles the WebAssembly kernels from their text sources (lib/**/*.wat -> .wasm beside them):
//   node scripts/build-wasm.mjs [--check]
// The .wasm files are committed, so installing and serving need no compiler; wabt is a
// devDependency. --check compiles in memory and exits 1 when a committed .wasm differs from its source.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import initWabt from 'wabt';

const KERNELS = ['lib/vector/int8-l2.wat'];
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

const wabt = await initWabt();
let stale = 0;
for (const rel of KERNELS) {
  const src = path.join(root, rel);
  // threads: the kernel's memory is shared (int8-l2.wat).
  const features = { simd: true, threads: true };
  const module = wabt.parseWat(rel, fs.readFileSync(src, 'utf8'), features);
  module.validate(features);
  const bytes = Buffer.from(module.toBinary({ log: false, write_debug_names: false }).buffer);
  module.destroy();
  const out = src.replace(/\.wat$/, '.wasm');
  if (check) {
    const same = fs.existsSync(out) && Buffer.compare(fs.readFileSync(out), bytes) === 0;
    if (!same) stale++;
    console.log(`${path.relative(root, out)}: ${same ? 'up to date' : 'differs from its source'}`);
  } else {
    fs.writeFileSync(out, bytes);
    console.log(`${path.relative(root, out)}: ${bytes.length} bytes`);
  }
}
process.exit(stale ? 1 : 0);
