import { randomUUID } from 'node:crypto';
import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoImportJobStore } from '../adapters/dynamo/import-job-store.js';
import { dynamoPaymentDeps } from './payment-deps.js';
import { historyApiOf, historySource } from '../adapters/history/sources.js';
import type { Provider } from '../domain/payments/facts.js';
import type { SecretBox } from '../ports.js';
import type { ImportRunDeps, ImportStartDeps } from '../services/history-import.js';

/**
 * What the imports function runs a job with (`runHistoryImport`): the job store, the box that opens the
 * key, each provider's lists (a stand-in's base URL from `FOOTFALL_<PROVIDER>_API` in `env`, tests and
 * the local twin's demo; none in AWS), and the bulk import's stores.
 */
export function importRunDeps(
  conn: DynamoConnection,
  secrets: Pick<SecretBox, 'open'>,
  clock: () => number,
  env: Readonly<Record<string, string | undefined>>,
): ImportRunDeps {
  return {
    jobs: new DynamoImportJobStore(conn),
    secrets,
    sites: new DynamoConfigStore(conn),
    sources: (provider, apiKey, scope) => historySource(provider, apiKey, historyApiOf(provider, env), scope),
    payments: dynamoPaymentDeps(conn, clock),
    clock,
  };
}

/** What the app starts a job with (`startHistoryImport`): the job store, the sealing box and the function's invoker. */
export function importStartDeps(
  conn: DynamoConnection,
  secrets: Pick<SecretBox, 'seal'>,
  invoke: (site: string, provider: Provider, run: string) => Promise<void>,
  clock: () => number,
): ImportStartDeps {
  return { jobs: new DynamoImportJobStore(conn), secrets, invoke, clock, newId: randomUUID };
}
