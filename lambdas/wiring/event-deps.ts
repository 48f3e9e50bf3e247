import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoSaltStore } from '../adapters/dynamo/salt-store.js';
import { CachedSiteDirectory, SITE_CACHE_TTL_MS } from '../adapters/cached-site-directory.js';
import { SiteRateLimiter } from '../domain/rate-limit.js';
import type { CountryLookup } from '../domain/country.js';
import type { EventHandlerDeps } from '../handlers/event.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { EventStream } from '../ports.js';

/** What differs between the event function in AWS and on a laptop: the stream, the country database, the clock. */
export interface EventWiring {
  telemetry: Telemetry;
  /** The ingest stream (Firehose; locally the durable local stream). */
  stream: EventStream;
  /** The IP-to-country database, absent when none is loaded (CDN headers only). */
  countries?: CountryLookup;
  clock?: () => number;
  /** How long a site's configuration is cached, ms (default `SITE_CACHE_TTL_MS`). */
  siteCacheTtlMs?: number;
}

/**
 * The event function's dependencies (`POST /api/event`) on the single table, for the Lambda
 * entry (`lambdas/entry/event.ts`) and the local service (`local/service.ts`) alike.
 */
export function dynamoEventDeps(conn: DynamoConnection, wiring: EventWiring): EventHandlerDeps {
  const { telemetry, stream, countries, clock = Date.now, siteCacheTtlMs = SITE_CACHE_TTL_MS } = wiring;
  return {
    ...telemetry,
    clock,
    countries,
    sites: new CachedSiteDirectory(new DynamoConfigStore(conn), siteCacheTtlMs, clock),
    salts: new DynamoSaltStore(conn),
    stream,
    limiter: new SiteRateLimiter(),
  };
}
