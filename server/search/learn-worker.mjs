// Entry of a learning worker thread. The TypeScript loader of the main thread (tsx) does not reach
// worker threads, so register it here first (the compiled build loads learn-worker.js directly).
const { register } = await import('tsx/esm/api');
register();
await import('./learn-worker.ts');
