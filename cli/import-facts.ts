import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentDeps } from '../lambdas/wiring/payment-deps.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import type { ProviderFacts } from '../lambdas/domain/payments/facts.js';
import type { SiteConfig } from '../lambdas/domain/site.js';
import { PaymentImportError, importPayments, type PaymentImportProgress } from '../lambdas/services/payment-import.js';
import type { LocalStoreOptions } from './store.js';
import { UsageError } from './usage.js';

/**
 * The local store of a bulk payment import (`import payments`, a provider's history): its own dynalite in a
 * thread of its own, so the import's work (parsing, crediting, the SDK client) and dynalite's use both cores
 * (`docs/benchmarks.md`, "Import of payments").
 */
export const BULK_IMPORT_STORE: LocalStoreOptions = { dynaliteThread: true };

/** The site a payment import writes to, read before anything is read or fetched. @throws Error when it does not exist */
export async function importSite(dynamo: DynamoConnection, domain: string): Promise<SiteConfig> {
  const site = await new DynamoConfigStore(dynamo).getSite(domain);
  if (!site) throw new Error(`site ${domain} does not exist`);
  return site;
}

/**
 * The write half of `import payments` and of each provider's history import:
 * the site's facts through the bulk import (`importPayments`), progress to
 * `onProgress`. Returns the payments the facts name.
 * @throws UsageError while a rebuild of the site runs
 */
export async function importFacts(
  dynamo: DynamoConnection,
  site: SiteConfig,
  facts: readonly ProviderFacts[],
  onProgress?: (progress: PaymentImportProgress) => void,
): Promise<number> {
  try {
    return (await importPayments(dynamoPaymentDeps(dynamo), site, facts, { onProgress })).payments;
  } catch (error) {
    if (error instanceof PaymentImportError) throw new UsageError(error.message);
    throw error;
  }
}
