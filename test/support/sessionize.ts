import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { DynamoBatchMarkers } from '../../lambdas/adapters/dynamo/batch-marker-store.js';
import { createSessionizeHandler, type SessionizeHandlerDeps } from '../../lambdas/handlers/sessionize.js';

/**
 * The sessionizer Lambda handler on `conn` as the tests run it: silent
 * telemetry, uncached site lookups, rollups compacted at every batch; `extra`
 * adds or replaces dependencies (re-credit, a visit cache).
 */
export function sessionizeHandlerFor(
  conn: DynamoConnection,
  extra: Partial<SessionizeHandlerDeps> = {},
): ReturnType<typeof createSessionizeHandler> {
  return createSessionizeHandler({
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'T' }),
    sites: new DynamoConfigStore(conn),
    visits: new DynamoVisitStore(conn),
    rollups: new DynamoRollupStore(conn, 1),
    markers: new DynamoBatchMarkers(conn),
    ...extra,
  });
}
