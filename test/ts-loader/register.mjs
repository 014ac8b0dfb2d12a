// The TypeScript loader of the test processes (test/run.mjs preloads it with --import) in place of
// tsx: tsx's resolve and load hooks cost about 1.3 CPU-s to load the server's ~400 modules, per test
// file; these ~0.8 s (Node.js 22, whose module.registerHooks runs them in the loading thread) or
// ~1.5 s (Node.js 20, module.register: a hooks thread, but only a load hook). Same transform as tsx
// (test/ts-loader/transform.mjs). Imports name their .ts files, so Node.js resolves them itself.
import module from 'node:module';
import { load } from './transform.mjs';

// Stack traces point into the TypeScript sources (the inline source maps), as under tsx.
process.setSourceMapsEnabled(true);
if (module.registerHooks) module.registerHooks({ load });
else module.register('./transform.mjs', import.meta.url);
