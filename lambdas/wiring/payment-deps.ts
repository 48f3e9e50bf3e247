import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoPaymentStore } from '../adapters/dynamo/payment-store.js';
import { dynamoPaymentListLayout } from '../adapters/dynamo/payments/payment-list-layout.js';
import { DynamoVisitStore } from '../adapters/dynamo/visit-store.js';
import { DynamoFxStore, FxRates } from '../adapters/dynamo/fx-store.js';
import { usdRateOf } from '../domain/payments/fx.js';
import type { PaymentDeps } from '../services/payments.js';

/** The payment use cases' dependencies on the single table (Lambda entries, local server, CLI). */
export function dynamoPaymentDeps(
  conn: DynamoConnection,
  clock: () => number = Date.now,
): PaymentDeps & { payments: DynamoPaymentStore } {
  const fx = new FxRates(new DynamoFxStore(conn));
  return {
    payments: new DynamoPaymentStore(conn, clock),
    list: dynamoPaymentListLayout,
    visits: new DynamoVisitStore(conn),
    rates: async () => usdRateOf(await fx.table()),
    clock,
  };
}
