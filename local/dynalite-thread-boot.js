// The dynalite thread's first module (`local/dynalite-thread.ts`), plain JavaScript as bin/run-ts.js is: a worker
// takes neither the module hooks of the thread that starts it (on every Node version) nor vitest's transform, so it
// registers tsx itself, then loads its TypeScript entry.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
