// Worker threads do not inherit the tsx loader: this bootstrap registers it, then runs the
// TypeScript worker named in workerData.script.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.script);
