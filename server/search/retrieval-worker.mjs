// Entry of a retrieval worker thread. The TypeScript loader of the main thread (tsx, registered by
// bin/stacks.js or `node --import tsx`) does not reach worker threads, so register it here first.
const { register } = await import('tsx/esm/api');
register();
await import('./retrieval-worker.ts');
