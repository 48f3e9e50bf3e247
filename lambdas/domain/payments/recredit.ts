/**
 * Which payments a batch of visits can credit differently (`docs/payments.md` "Customers and
 * attribution": the sessionizer's re-credit writes only what a batch can change).
 *
 * The rules it derives from (`attribution.ts`, `attribute` in
 * `lambdas/services/payments.ts`, `docs/payments.md` "Customers and attribution"):
 * - a payment is credited among its visitor's visits that start at or before
 *   the payment and at most `lookback_days` before it, whatever the model;
 * - its first touch is the visitor's earliest visit, if that starts at or
 *   before the payment;
 * - a payment without a time has no credit;
 * - a renewal inherits its customer's first attributed payment's credit,
 *   whatever its own time.
 *
 * A batch's visits of one visitor start at or after `since`: the start of the
 * earliest visit that holds one of the batch's events. Every visit the batch
 * wrote starts there or later, and so does every visit it removed (a visit is
 * only removed when merged into one that starts no later). So a visit the
 * batch wrote or removed can enter a payment's window, or become its first
 * touch, only if it starts at or before the payment: `since <= ts`. The rule
 * holds for every model and window, which is why it takes neither.
 */

/**
 * Whether visits starting at or after `since` (ms) can change the credit or
 * first touch of a payment at `paymentTs` (ms, null when the payment has no
 * time yet), not counting what it inherits as a renewal.
 */
export function creditMayChange(paymentTs: number | null, since: number): boolean {
  return paymentTs !== null && since <= paymentTs;
}

/**
 * The payments of one visitor's timeline to credit again after a batch whose
 * visits of the visitor start at or after `since`: those whose own credit may
 * change (`creditMayChange`), and, when there is any, every renewal (a renewal
 * follows its customer's first attributed payment, which may be among them).
 * Order is kept.
 */
export function paymentsToRecredit<P extends { ts: number | null; is_renewal: boolean }>(
  payments: readonly P[],
  since: number,
): P[] {
  const own = payments.filter((p) => creditMayChange(p.ts, since));
  if (own.length === 0) return [];
  return payments.filter((p) => p.is_renewal || creditMayChange(p.ts, since));
}
