// Entry of a backup's PostgreSQL copy thread. The TypeScript loader of the main thread (tsx) does not
// reach worker threads, so register it here first (the compiled build loads pg-snapshot-worker.js directly).
const { register } = await import('tsx/esm/api');
register();
await import('./pg-snapshot-worker.ts');
