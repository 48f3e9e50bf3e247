import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../adapters/dynamo/rollup-store.js';
import { DynamoRealtimeStore } from '../adapters/dynamo/realtime-store.js';
import { DynamoBatchMarkers } from '../adapters/dynamo/batch-marker-store.js';
import { DynamoVisitStore } from '../adapters/dynamo/visit-store.js';
import { DynamoRecentPaymentMarks } from '../adapters/dynamo/recent-payment-marks.js';
import { DynamoIngestJournal } from '../adapters/dynamo/ingest-journal.js';
import { CachedSiteDirectory, SITE_CACHE_TTL_MS } from '../adapters/cached-site-directory.js';
import { ShardVisitCache } from '../adapters/shard-visit-cache.js';
import { recreditVisitors } from '../services/payments.js';
import type { SessionizeHandlerDeps } from '../handlers/sessionize.js';
import type { ObjectSessionizeDeps } from '../handlers/sessionize-objects.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { ArchiveDelivery, RawObjects } from '../ports.js';
import { dynamoPaymentDeps } from './payment-deps.js';

/** What differs between the sessionizer in AWS and on a laptop: the raw objects, the archive delivery, the clock. */
export interface SessionizeWiring {
  telemetry: Telemetry;
  /** The raw delivery's objects (S3 `raw/`; locally files of the stream's delivery stand-in). */
  objects: RawObjects;
  /** The archive's delivery (Firehose; locally its stand-in's directory). */
  archive: ArchiveDelivery;
  clock?: () => number;
  /** How long a site's configuration is cached, ms (default `SITE_CACHE_TTL_MS`). */
  siteCacheTtlMs?: number;
  /** The table whose TTL the local twin sweeps itself (absent in AWS, where DynamoDB's TTL does it). */
  localExpiry?: DynamoConnection;
}

/**
 * The sessionizer function's dependencies on the single table, for the Lambda entry
 * (`lambdas/entry/sessionize.ts`) and the local stream consumer (`local/consumers.ts`) alike:
 * `stream` for `createSessionizeHandler`, `objects` for `createObjectSessionizeHandler` (which
 * also takes the stream handler as its `sessionize`).
 */
export function dynamoSessionizeDeps(
  conn: DynamoConnection,
  wiring: SessionizeWiring,
): { stream: SessionizeHandlerDeps; objects: Omit<ObjectSessionizeDeps, 'sessionize'> } {
  const { telemetry, clock = Date.now, siteCacheTtlMs = SITE_CACHE_TTL_MS, localExpiry } = wiring;
  const payments = dynamoPaymentDeps(conn, clock);
  return {
    stream: {
      ...telemetry,
      sites: new CachedSiteDirectory(new DynamoConfigStore(conn), siteCacheTtlMs, clock),
      visits: new DynamoVisitStore(conn),
      rollups: new DynamoRollupStore(conn),
      realtime: { store: new DynamoRealtimeStore(conn, { localExpiry }), clock },
      markers: new DynamoBatchMarkers(conn),
      visitCache: new ShardVisitCache(new DynamoRecentPaymentMarks(conn), { clock }),
      recredit: (site, visitors) => recreditVisitors(payments, site, visitors),
    },
    objects: {
      journal: new DynamoIngestJournal(conn, { clock, localExpiry }),
      objects: wiring.objects,
      archive: wiring.archive,
      logger: telemetry.logger,
      clock,
    },
  };
}
