import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { attachCapacityMeter, type CapacityMeter } from './capacity-meter.js';

export interface DynamoConnection {
  doc: DynamoDBDocumentClient;
  table: string;
  /** The meter counting this connection's requests and capacity units, when one was passed in. */
  meter?: CapacityMeter;
}

/** Connection timeout to the local store on loopback, ms (AWS endpoints keep the SDK's 2 s). */
export const LOCAL_CONNECTION_TIMEOUT_MS = 10_000;

/**
 * A DynamoDB document client. With `endpoint` (local dynalite) it uses the
 * given credentials (or fixed dummy ones) and region so no AWS configuration is needed; without it,
 * the Lambda environment's region and role. With `capacityMeter`, every request (each retry too)
 * asks for and counts its consumed capacity (`capacity-meter.ts`); without it nothing is added.
 */
export function createDynamoConnection(options: {
  table: string;
  endpoint?: string;
  maxAttempts?: number;
  /** With `endpoint`: the local store's per-process credential (`openLocalDynamo`); dummy ones by default. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Counts requests, items, RCU/WCU and bytes per operation (benchmarks and tests; opt-in). */
  capacityMeter?: CapacityMeter;
}): DynamoConnection {
  const local = options.endpoint !== undefined;
  const client = new DynamoDBClient({
    ...(local
      ? {
          endpoint: options.endpoint,
          region: 'local',
          credentials: options.credentials ?? { accessKeyId: 'local', secretAccessKey: 'local' },
        }
      : {}),
    maxAttempts: options.maxAttempts ?? 4,
    // Options, not a handler instance: the SDK builds its default (HTTP/1.1) handler, so
    // bundles need not import @smithy and can use the Lambda runtime's SDK. The local store
    // answers on loopback from this same process: a connection there is slow only while the
    // process itself is busy (seeding a year of demo data on a loaded machine timed out at 2 s
    // and failed whole sessionizer batches over and over), so it gets longer.
    requestHandler: { connectionTimeout: local ? LOCAL_CONNECTION_TIMEOUT_MS : 2000, requestTimeout: 10_000 },
  });
  if (options.capacityMeter) attachCapacityMeter(client.middlewareStack, options.capacityMeter);
  // The document client shares the client's middleware stack, so the meter sees its calls too.
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return { doc, table: options.table, ...(options.capacityMeter ? { meter: options.capacityMeter } : {}) };
}
