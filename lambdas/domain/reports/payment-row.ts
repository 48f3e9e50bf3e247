import type { Payment } from '../payments/payment.js';
import { amountUsd, netUsd, type UsdRate } from '../payments/money.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** A payment row (`docs/api.md` "Payments"). Times are RFC 3339 UTC; ids the provider never gave are null. */
export interface PaymentRow {
  provider: string;
  provider_payment_id: string;
  ts: string;
  amount: number;
  currency: string;
  amount_usd: number;
  refunded: number;
  net_usd: number;
  status: string;
  visitor_id: string | null;
  customer_id: string | null;
  is_renewal: boolean;
  visitor: string | null;
  touch: {
    session_id: string;
    ts: string;
    channel: string;
    referrer_host: string | null;
    source: string | null;
    campaign: string | null;
    landing_page: string;
    country: string | null;
    device: string;
  } | null;
  first_touch: { ts: string; channel: string; referrer_host: string | null; source: string | null } | null;
}

/**
 * The row of a stored payment, or null while the payment is incomplete (no
 * time, amount, currency or status yet; no USD rate for its currency).
 */
export function paymentRow(p: Payment, rate: UsdRate): PaymentRow | null {
  const usd = amountUsd(p, rate);
  const net = netUsd(p, rate);
  if (p.ts === null || p.amount === null || p.currency === null || p.status === null || usd === null || net === null)
    return null;
  return {
    provider: p.provider,
    provider_payment_id: p.provider_payment_id,
    ts: iso(p.ts),
    amount: p.amount,
    currency: p.currency,
    amount_usd: usd,
    refunded: p.refunded,
    net_usd: net,
    status: p.status,
    visitor_id: p.visitor_id,
    customer_id: p.customer_id,
    is_renewal: p.is_renewal,
    visitor: p.visitor,
    touch: p.touch ? { ...p.touch, ts: iso(p.touch.ts) } : null,
    first_touch: p.first_touch ? { ...p.first_touch, ts: iso(p.first_touch.ts) } : null,
  };
}
