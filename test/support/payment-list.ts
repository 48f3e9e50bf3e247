import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { PaymentListStore } from '../../lambdas/adapters/dynamo/payments/payment-list-store.js';
import { listKeys, positionId } from '../../lambdas/adapters/dynamo/payments/payment-list-positions.js';
import { PaymentRecords } from '../../lambdas/adapters/dynamo/payments/payment-store-records.js';
import { contributionOf, type Contribution } from '../../lambdas/domain/payments/contribution.js';
import type { Payment } from '../../lambdas/domain/payments/payment.js';

/**
 * Stores a payment as a settle does, at a USD rate of 1 in time zone `timezone`: its PAYMENT item (over
 * `before`, the stored one, or none), then its list positions and counters (`PaymentListStore.sync`), the
 * positions `before` held and it no longer does removed. With `oldForm`, its list item is written as before
 * contributions carried the credited visit's id.
 */
export async function storePayment(
  conn: DynamoConnection,
  p: Payment,
  before: Payment | null,
  options: { timezone?: string; oldForm?: boolean } = {},
): Promise<void> {
  const timezone = options.timezone ?? 'Europe/Berlin';
  const rate = () => 1;
  await new PaymentRecords(conn).putPayment(p, before?.rev ?? 0);
  const was = before ? contributionOf(before, timezone, rate) : null;
  const stale = was ? listKeys(p.site, was).map(positionId) : [];
  const c = contributionOf(p, timezone, rate);
  const listed: Contribution | null = c && options.oldForm ? withoutVisit(c) : c;
  await new PaymentListStore(conn).sync(p.site, listed, stale, async () => p.rev);
}

function withoutVisit(c: Contribution): Contribution {
  const { visit: _visit, ...old } = c;
  return old;
}

/** Deletes a stored payment as a provider's deletion does: its PAYMENT item, then its list positions and counters. */
export async function deletePayment(
  conn: DynamoConnection,
  before: Payment,
  timezone = 'Europe/Berlin',
): Promise<void> {
  await new PaymentRecords(conn).deletePayment(before.site, before.provider, before.provider_payment_id);
  const was = contributionOf(before, timezone, () => 1);
  const stale = was ? listKeys(before.site, was).map(positionId) : [];
  await new PaymentListStore(conn).sync(before.site, null, stale, async () => before.rev);
}
