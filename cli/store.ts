import { openLocalStore } from '../local/service.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';

/**
 * Runs `fn` against the data directory's table: through a running `serve`'s
 * dynalite when there is one, else on a dynalite of our own for the command.
 */
export async function withLocalStore<T>(dataDir: string, fn: (dynamo: DynamoConnection) => Promise<T>): Promise<T> {
  const { dynamo, db } = await openLocalStore(dataDir, 'cli');
  try {
    return await fn(dynamo);
  } finally {
    dynamo.doc.destroy();
    await db.close();
  }
}
