import { openLocalStore } from '../local/service.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';

/**
 * Runs `fn` against the data directory's table: through a running `serve`'s
 * dynalite when there is one, else on a dynalite of our own for the command
 * (`owner` true: no server runs on this data directory).
 */
export async function withLocalStore<T>(dataDir: string, fn: (dynamo: DynamoConnection, owner: boolean) => Promise<T>): Promise<T> {
  const { dynamo, db } = await openLocalStore(dataDir, 'cli');
  try {
    return await fn(dynamo, db.owner);
  } finally {
    dynamo.doc.destroy();
    await db.close();
  }
}
