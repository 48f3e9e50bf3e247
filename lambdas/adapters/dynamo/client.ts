import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface DynamoConnection {
  doc: DynamoDBDocumentClient;
  table: string;
}

/**
 * A DynamoDB document client. With `endpoint` (local dynalite) it uses the
 * given credentials (or fixed dummy ones) and region so no AWS configuration is needed; without it,
 * the Lambda environment's region and role.
 */
export function createDynamoConnection(options: {
  table: string;
  endpoint?: string;
  maxAttempts?: number;
  /** With `endpoint`: the local store's per-process credential (`openLocalDynamo`); dummy ones by default. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}): DynamoConnection {
  const local = options.endpoint !== undefined;
  const client = new DynamoDBClient({
    ...(local
      ? { endpoint: options.endpoint, region: 'local', credentials: options.credentials ?? { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
    maxAttempts: options.maxAttempts ?? 4,
    // Options, not a handler instance: the SDK builds its default (HTTP/1.1) handler, so
    // bundles need not import @smithy and can use the Lambda runtime's SDK.
    requestHandler: { connectionTimeout: 2000, requestTimeout: 10_000 },
  });
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return { doc, table: options.table };
}
