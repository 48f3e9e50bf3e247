import { Worker } from 'node:worker_threads';
import type { LocalCredentials } from './dynalite.js';

/** What the thread is given: where the database is, the credential it lets in, and its entry module (`local/dynalite-thread-boot.js` loads it). */
export interface DynaliteThreadData {
  dbPath: string;
  credentials: LocalCredentials;
  /** `local/dynalite-thread-main.ts` (file URL). */
  entry: string;
}

/** The thread's one message: it listens on `port`. */
export interface DynaliteThreadMessage {
  type: 'listening';
  port: number;
}

/**
 * Starts dynalite on LevelDB in `dbPath` in a worker thread of this process
 * (`local/dynalite-thread-main.ts`), letting in only `credentials`. The
 * thread ends with the process, so it can outlive neither Ctrl-C nor a crash;
 * `stop` closes the database, then ends the thread.
 *
 * @returns its loopback port, once it listens
 * @throws Error when the thread fails or exits before it listens (LevelDB cannot be opened, for one)
 */
export async function dynaliteThread(
  dbPath: string,
  credentials: LocalCredentials,
): Promise<{ port: number; stop(): Promise<void> }> {
  const workerData: DynaliteThreadData = {
    dbPath,
    credentials,
    entry: new URL('./dynalite-thread-main.ts', import.meta.url).href,
  };
  const worker = new Worker(new URL('./dynalite-thread-boot.js', import.meta.url), { workerData });
  const port = await new Promise<number>((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    const exited = (code: number) => reject(new Error(`the dynalite thread exited with ${code} before it listened`));
    worker.once('error', failed);
    worker.once('exit', exited);
    worker.once('message', (message: DynaliteThreadMessage) => {
      worker.off('error', failed);
      worker.off('exit', exited);
      resolve(message.port);
    });
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  let stopping: Promise<void> | null = null;
  return {
    port,
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage('stop');
      })),
  };
}
