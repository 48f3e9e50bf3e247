import { toMajor } from './currency.js';
import type { Payment } from './payment.js';

/** USD per one unit of a currency on a day (`YYYY-MM-DD`), or null when unknown. */
export type UsdRate = (currency: string, day: string) => number | null;

const cents = (usd: number) => Math.round(usd * 100) / 100;

/**
 * USD value of a payment's amount (`docs/api.md` "Payments" `amount_usd`): the provider's own
 * conversion when it gave one, else the amount in major units times the dated
 * rate of the payment's UTC day (`docs/payments.md` "Money"). Null when neither is known.
 */
export function amountUsd(p: Payment, rate: UsdRate): number | null {
  if (p.provider_amount_usd !== null) return cents(p.provider_amount_usd);
  if (p.amount === null || p.currency === null || p.ts === null) return null;
  const perUnit = p.currency === 'USD' ? 1 : rate(p.currency, new Date(p.ts).toISOString().slice(0, 10));
  return perUnit === null ? null : cents(toMajor(p.amount, p.currency) * perUnit);
}

/**
 * USD net of refunds (`docs/api.md` "Payments" `net_usd`): `amount_usd` scaled by the share
 * not refunded; 0 for a failed payment, which moved no money
 * (`docs/payments.md` "Money"), so the `filter=all` list adds up to the overview's revenue.
 */
export function netUsd(p: Payment, rate: UsdRate): number | null {
  const usd = amountUsd(p, rate);
  if (usd === null || p.amount === null) return null;
  if (p.status === 'failed') return 0;
  if (p.amount <= 0) return usd;
  return cents((usd * Math.max(0, p.amount - p.refunded)) / p.amount);
}
