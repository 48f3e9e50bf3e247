import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { dynamoPaymentStores, type DynamoPaymentStores } from '../adapters/dynamo/payment-store.js';
import { dynamoPaymentListLayout } from '../adapters/dynamo/payments/payment-list-layout.js';
import { DynamoVisitStore } from '../adapters/dynamo/visit-store.js';
import { DynamoFxStore, FxRates } from '../adapters/dynamo/fx-store.js';
import { usdRateOf } from '../domain/payments/fx.js';
import type { PaymentImportDeps } from '../services/payment-import.js';

/**
 * The payment use cases' dependencies on the single table (Lambda entries, local server, CLI): one
 * store per item family (`dynamoPaymentStores`), the import's bulk writes included.
 */
export function dynamoPaymentDeps(
  conn: DynamoConnection,
  clock: () => number = Date.now,
): PaymentImportDeps & DynamoPaymentStores {
  const fx = new FxRates(new DynamoFxStore(conn));
  return {
    ...dynamoPaymentStores(conn, clock),
    list: dynamoPaymentListLayout,
    visits: new DynamoVisitStore(conn),
    rates: async () => usdRateOf(await fx.table()),
    clock,
  };
}
