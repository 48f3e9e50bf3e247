import { parentPort, workerData } from 'node:worker_threads';
import { serveDynalite } from './dynalite.js';
import type { DynaliteThreadData, DynaliteThreadMessage } from './dynalite-thread.js';

/**
 * The dynalite thread of `footfall serve` (`local/dynalite-thread.ts`): serves
 * the data directory's database until told to stop, then closes it and ends.
 */
const { dbPath, credentials } = workerData as DynaliteThreadData;
const server = await serveDynalite(dbPath, credentials);
const port = parentPort!;
port.postMessage({
  type: 'listening',
  port: (server.address() as { port: number }).port,
} satisfies DynaliteThreadMessage);
// dynalite closes its database when its server closes; then nothing holds the thread.
port.once('message', () => server.close(() => port.close()));
