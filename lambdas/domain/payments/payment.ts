import type { PaymentFact, PaymentStatus, Provider } from './facts.js';
import type { FirstTouch, Touch } from './attribution.js';
import type { PaymentDimension } from '../rollup.js';
import { dict } from '../dict.js';

/**
 * A payment as stored: the merged facts of every event that described it,
 * and what attribution made of it. `rev` counts changes, so derived data
 * (payment rollups) can tell an old state from a new one.
 */
export interface Payment {
  site: string;
  provider: Provider;
  provider_payment_id: string;
  aliases: string[];
  /** ms since epoch, UTC; null until an event gives it. */
  ts: number | null;
  /** Minor unit of `currency`. */
  amount: number | null;
  currency: string | null;
  /** The provider's own USD value of `amount`, when it gave one. */
  provider_amount_usd: number | null;
  refunded: number;
  /** Single refunds by id, for providers that report refunds one by one. */
  refunds: Record<string, number>;
  status: PaymentStatus | null;
  customer_id: string | null;
  /** Visitor id from the payment's own metadata. */
  visitor_id: string | null;
  is_renewal: boolean;
  subscription_id: string | null;
  /** The visitor whose timeline shows the payment (the customer's first attributed visitor, else `visitor_id`). */
  visitor: string | null;
  touch: Touch | null;
  first_touch: FirstTouch | null;
  /** Every breakdown dimension's values of the credited visit (`page`: all its pages); null when unattributed. */
  touch_dims: Record<PaymentDimension, string[]> | null;
  /** Fields that hold a fact's `fallback` rather than a stated value (absent on items stored before it existed: none). */
  provisional?: ProvisionalField[];
  /**
   * List positions (`pk|sk` of PAYMENT_LIST items) the payment held in an
   * earlier state and that may still need removing; cleared once removed.
   */
  unlisted?: string[];
  rev: number;
}

/** The fields a refund can stand in for until its payment's own event arrives. */
export type ProvisionalField = 'ts' | 'amount';

/** A payment with nothing known but its ids. */
export function emptyPayment(site: string, provider: Provider, id: string): Payment {
  return {
    site,
    provider,
    provider_payment_id: id,
    aliases: [],
    ts: null,
    amount: null,
    currency: null,
    provider_amount_usd: null,
    refunded: 0,
    refunds: dict(),
    status: null,
    customer_id: null,
    visitor_id: null,
    is_renewal: false,
    subscription_id: null,
    visitor: null,
    touch: null,
    first_touch: null,
    touch_dims: null,
    rev: 0,
  };
}

/**
 * Status after a fact (`docs/payments.md`): a success after a failure wins
 * (a retried card), a failure after a success does not (an earlier attempt's
 * event arriving late), and a payment refunded in full stays refunded.
 */
function nextStatus(
  current: PaymentStatus | null,
  reported: PaymentStatus | undefined,
  fullyRefunded: boolean,
): PaymentStatus | null {
  if (fullyRefunded || current === 'refunded' || reported === 'refunded') return 'refunded';
  if (reported === 'paid' || current === 'paid') return 'paid';
  return reported ?? current;
}

/**
 * One field that a fact may state or stand in for (`PaymentFact.fallback`):
 * a stated value replaces a provisional one, and otherwise combines with the
 * stored one by `combine`; a fallback fills only a field nothing stated, and
 * combines with an earlier fallback. The result does not depend on the order
 * the facts arrive in.
 */
function mergeField(
  stored: number | null,
  provisional: boolean,
  stated: number | undefined,
  fallback: number | undefined,
  combine: (a: number, b: number) => number,
): { value: number | null; provisional: boolean } {
  if (stated !== undefined)
    return { value: stored === null || provisional ? stated : combine(stored, stated), provisional: false };
  if (fallback !== undefined && (stored === null || provisional))
    return { value: stored === null ? fallback : combine(stored, fallback), provisional: true };
  return { value: stored, provisional };
}

/**
 * Merges one fact into a payment (`docs/payments.md`, "One payment, many
 * events": one payment is one row however many events describe it). Field
 * by field: known values are kept unless the fact brings a value, but a
 * `failed` fact's amount does not replace a paid or refunded payment's; the time is the earliest reported; `refunded` only
 * grows, and single refunds add up by refund id; ids and aliases are unioned.
 * A fact's `fallback` time and amount fill in only until a fact states them.
 * Merging the same fact twice gives the same payment, so a redelivered
 * webhook changes nothing.
 */
export function mergePaymentFact(payment: Payment, fact: PaymentFact): Payment {
  const refunds = dict(payment.refunds ?? {});
  for (const r of fact.refunds ?? []) refunds[r.id] = r.amount;
  const refunded = Math.max(
    payment.refunded,
    fact.refunded ?? 0,
    Object.values(refunds).reduce((a, b) => a + b, 0),
  );
  const provisional = new Set(payment.provisional ?? []);
  const ts = mergeField(payment.ts, provisional.has('ts'), fact.ts, fact.fallback?.ts, Math.min);
  // A stated amount wins over the stored one (the latest event's), except that a failed attempt's amount (and its
  // USD value) never replaces what a paid payment moved (a late declined attempt, after a partial capture, states
  // the authorized amount); fallbacks (full refunds) keep the largest.
  const attemptOnly = fact.status === 'failed' && (payment.status === 'paid' || payment.status === 'refunded');
  const amount = mergeField(
    payment.amount,
    provisional.has('amount'),
    fact.amount,
    fact.fallback?.amount,
    (stored, next) => (fact.amount === undefined ? Math.max(stored, next) : attemptOnly ? stored : next),
  );
  const stillProvisional = (['ts', 'amount'] as const).filter((f) => ({ ts, amount })[f].provisional);
  const aliases = [
    ...new Set([...payment.aliases, ...fact.aliases, ...(fact.id !== payment.provider_payment_id ? [fact.id] : [])]),
  ]
    .filter((a) => a !== payment.provider_payment_id)
    .sort();
  const { provisional: _previous, ...rest } = payment;
  return {
    ...rest,
    aliases,
    ts: ts.value,
    amount: amount.value,
    currency: fact.currency ?? payment.currency,
    provider_amount_usd: (attemptOnly ? undefined : fact.amount_usd) ?? payment.provider_amount_usd,
    refunded,
    refunds,
    status: nextStatus(
      payment.status,
      fact.status,
      amount.value !== null && amount.value > 0 && refunded >= amount.value,
    ),
    customer_id: payment.customer_id ?? fact.customer_id ?? null,
    visitor_id: payment.visitor_id ?? fact.visitor_id ?? null,
    is_renewal: fact.is_renewal ?? payment.is_renewal,
    subscription_id: payment.subscription_id ?? fact.subscription_id ?? null,
    ...(stillProvisional.length > 0 ? { provisional: stillProvisional } : {}),
  };
}

/** True when two payments differ in anything a report shows. */
export function paymentChanged(a: Payment, b: Payment): boolean {
  const { rev: _a, ...left } = a;
  const { rev: _b, ...right } = b;
  return JSON.stringify(left) !== JSON.stringify(right);
}

/** A payment counts in reports once it has a time, an amount and a currency, and did not fail (`docs/payments.md` "Statuses"). */
export function isCountable(p: Payment): p is Payment & { ts: number; amount: number; currency: string } {
  return p.ts !== null && p.amount !== null && p.currency !== null && p.status !== null && p.status !== 'failed';
}
