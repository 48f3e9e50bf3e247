import { createDynamoConnection } from '../adapters/dynamo/client.js';
import { CountryDatabase } from '../adapters/country-database.js';
import { FirehoseEventStream, createFirehoseClient } from '../adapters/firehose-stream.js';
import { createEventHandler } from '../handlers/event.js';
import { createTelemetry } from '../observability/telemetry.js';
import { requireEnv } from './env.js';
import { dynamoEventDeps } from '../wiring/event-deps.js';

// Built once per execution environment (cold start), reused by every invocation.
const dynamo = createDynamoConnection({ table: requireEnv('TABLE_NAME') });
const telemetry = createTelemetry('event');

/**
 * The country database from the stack's layer (`GEO_DATABASE_PATH`, under
 * /opt), read once here. A missing or broken file is logged as an error and
 * events go on with the CDN header alone: losing countries beats losing events.
 */
function openCountries(): CountryDatabase | undefined {
  const path = process.env.GEO_DATABASE_PATH;
  if (!path) return undefined;
  try {
    return CountryDatabase.open(path);
  } catch (error) {
    telemetry.logger.error('country database not loaded; countries come from CDN headers only', error as Error);
    return undefined;
  }
}

/** Lambda entry of `POST|OPTIONS /api/event`: its function URL (`EventUrl`) and the HTTP API route, both payload format 2.0. */
export const handler = createEventHandler(
  dynamoEventDeps(dynamo, {
    telemetry,
    countries: openCountries(),
    stream: new FirehoseEventStream(createFirehoseClient(), requireEnv('INGEST_STREAM')),
  }),
);
