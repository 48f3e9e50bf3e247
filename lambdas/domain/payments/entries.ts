import { PAYMENT_DIMENSIONS, type PaymentDimension } from '../rollup.js';
import { localDay } from '../range.js';
import { isCountable, type Payment } from './payment.js';
import { netUsd, type UsdRate } from './money.js';

/**
 * What a payment puts into the payment rollups of its site-local day and
 * month: one entry per payment, keyed by `paymentKey`, replaced whole when the
 * payment changes (a newer `rev` wins; a removed payment leaves a tombstone
 * with its `rev`). Reports add the entries of the periods in a range, so a
 * payment is never counted twice and a refund or a re-credit just replaces
 * its entry.
 */

/** Flags of a totals entry. */
export const FAILED = 1;
export const REFUNDED = 2;

/** `[rev, ts (ms), net USD cents, customer key, touch day or null, flags]`, or `[rev]` for a tombstone. */
export type TotalsEntry = [number, number, number, string, string | null, number] | [number];
/** `[rev, net USD cents, customer key, values or null (Unattributed)]`, or `[rev]`. */
export type DimensionEntry = [number, number, string, string[] | null] | [number];

export interface PaymentPeriods {
  day: string;
  month: string;
}

export const paymentKey = (p: Pick<Payment, 'provider' | 'provider_payment_id'>) => `${p.provider}:${p.provider_payment_id}`;

/** Distinct payers: the provider's customer, or the payment itself when it has no customer. */
export const customerKey = (p: Payment) => (p.customer_id ? `${p.provider}:${p.customer_id}` : `payment:${paymentKey(p)}`);

/** The site-local day and month of a payment; null while it has no time. */
export function paymentPeriods(p: Payment, timezone: string): PaymentPeriods | null {
  if (p.ts === null) return null;
  const day = localDay(p.ts, timezone);
  return { day, month: day.slice(0, 7) };
}

/**
 * The entries of a payment: the totals entry and one per dimension. A payment
 * without a time, amount or currency, or whose USD value is unknown, leaves
 * tombstones. Failed payments keep a totals entry (listed, not counted) and
 * leave the dimensions.
 */
export function paymentEntries(p: Payment, timezone: string, rate: UsdRate): { totals: TotalsEntry; dimensions: Record<PaymentDimension, DimensionEntry> } {
  const tombstone: [number] = [p.rev];
  const dimensions = Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, tombstone])) as Record<PaymentDimension, DimensionEntry>;
  const net = netUsd(p, rate);
  if (p.ts === null || p.amount === null || p.currency === null || net === null) return { totals: tombstone, dimensions };
  const flags = (p.status === 'failed' ? FAILED : 0) | (p.refunded > 0 ? REFUNDED : 0);
  const touchDay = p.touch ? localDay(p.touch.ts, timezone) : null;
  const cents = Math.round(net * 100);
  const totals: TotalsEntry = [p.rev, p.ts, cents, customerKey(p), touchDay, flags];
  if (!isCountable(p)) return { totals, dimensions };
  for (const d of PAYMENT_DIMENSIONS) dimensions[d] = [p.rev, cents, customerKey(p), p.touch_dims ? (p.touch_dims[d] ?? []) : null];
  return { totals, dimensions };
}
