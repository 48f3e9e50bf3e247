/**
 * Paddle Billing webhooks: signature check and the facts of the events we use
 * (https://developer.paddle.com/webhooks/overview).
 *
 * Keying rule: a payment is a transaction (`txn_…`); renewals are new
 * transactions of the same subscription, and refunds are adjustments that
 * name their `transaction_id`, so every fact of one payment has the same id
 * and needs no aliases.
 *
 * Money: totals are strings in the currency's minor unit
 * (https://developer.paddle.com/api-reference/transactions/overview,
 * `details.totals`). Paddle's own conversion is `details.payout_totals`, in
 * the seller's payout currency: it is a USD value only when that currency is
 * USD.
 *
 * Refunds: an approved refund adjustment states that refund alone, not the
 * total refunded so far (https://developer.paddle.com/api-reference/adjustments/overview).
 * Its fact carries it under `refunds` with the adjustment id, so the store
 * adds up the distinct refunds of a transaction. A `full` adjustment marks the
 * payment refunded.
 */
import * as z from 'zod';
import type { PaymentFact, ProviderFacts, SubscriptionFact } from '../facts.js';
import { normalizeCurrency, toMajor } from '../currency.js';
import {
  checkSignedTime,
  compact,
  factsByType,
  hexDigestsEqual,
  hmacSha256Hex,
  isoDateTime,
  isoToMs,
  noFacts,
  parseJsonBody,
  parseWith,
  usdIfUsd,
  visitorFrom,
  WebhookSignatureError,
  type ProviderModule,
} from './common.js';
import { own } from '../../dict.js';

const PROVIDER = 'paddle';

/**
 * Transaction `origin` → renewal (https://developer.paddle.com/api-reference/transactions/overview,
 * `origin`). Checkout (`web`) and `api` sales are new purchases; the
 * `subscription_*` origins bill a customer who already subscribed. A
 * payment-method change bills nothing and is dropped as a $0 transaction.
 */
const RENEWAL_BY_ORIGIN: Readonly<Record<string, boolean>> = {
  web: false,
  api: false,
  subscription_recurring: true,
  subscription_update: true,
  subscription_charge: true,
};

/** Subscription statuses in which the customer pays or will be charged (https://developer.paddle.com/api-reference/subscriptions/overview). */
const PAYING_STATUSES = new Set(['active', 'trialing', 'past_due']);

/** A non-negative integer amount in minor units, sent as a string. */
const minorString = z
  .string()
  .regex(/^\d+$/)
  .transform(Number)
  .refine((n) => Number.isSafeInteger(n), 'amount out of range');

const customData = z.record(z.string(), z.unknown()).nullish();

const eventSchema = z.object({
  event_id: z.string(),
  event_type: z.string(),
  occurred_at: isoDateTime,
  data: z.unknown(),
});
type PaddleEvent = z.infer<typeof eventSchema>;

const totalsSchema = z.object({ grand_total: minorString, currency_code: z.string() });

const transactionSchema = z.object({
  id: z.string(),
  origin: z.string().nullish(),
  customer_id: z.string().nullish(),
  subscription_id: z.string().nullish(),
  custom_data: customData,
  billed_at: isoDateTime.nullish(),
  details: z.object({ totals: totalsSchema, payout_totals: totalsSchema.nullish() }),
  payments: z.array(z.object({ status: z.string(), captured_at: isoDateTime.nullish() })).nullish(),
});

const adjustmentSchema = z.object({
  id: z.string(),
  action: z.string(),
  type: z.string().nullish(),
  status: z.string(),
  transaction_id: z.string(),
  customer_id: z.string().nullish(),
  subscription_id: z.string().nullish(),
  totals: z.object({ total: minorString, currency_code: z.string() }),
  created_at: isoDateTime.nullish(),
});

const subscriptionSchema = z.object({
  id: z.string(),
  status: z.string(),
  customer_id: z.string().nullish(),
  custom_data: customData,
});

function facts(event: PaddleEvent, parts: Partial<Omit<ProviderFacts, 'event_id' | 'event_type'>>): ProviderFacts {
  return { ...noFacts(event.event_id, event.event_type), ...parts };
}

/** Paddle's USD value of the grand total: the total itself in USD, or the payout total when paid out in USD. */
function usdOf(
  totals: z.infer<typeof totalsSchema>,
  payout: z.infer<typeof totalsSchema> | null | undefined,
): number | undefined {
  const own = usdIfUsd(totals.grand_total, totals.currency_code);
  if (own !== undefined) return own;
  return payout && normalizeCurrency(payout.currency_code) === 'USD' ? toMajor(payout.grand_total, 'USD') : undefined;
}

function transactionCompleted(event: PaddleEvent): ProviderFacts {
  const t = parseWith(transactionSchema, event.data, PROVIDER, event.event_type);
  const { totals, payout_totals } = t.details;
  // Trials and payment-method changes complete $0 transactions: no money moved.
  if (totals.grand_total === 0) return facts(event, {});
  const captured = t.payments?.find((p) => p.status === 'captured' && p.captured_at)?.captured_at;
  const fact: PaymentFact = compact({
    provider: PROVIDER,
    id: t.id,
    aliases: [],
    ts: isoToMs(captured ?? t.billed_at ?? event.occurred_at),
    amount: totals.grand_total,
    currency: normalizeCurrency(totals.currency_code),
    amount_usd: usdOf(totals, payout_totals),
    status: 'paid',
    customer_id: t.customer_id ?? undefined,
    visitor_id: visitorFrom(t.custom_data),
    is_renewal: own(RENEWAL_BY_ORIGIN, t.origin ?? '') ?? false,
    subscription_id: t.subscription_id ?? undefined,
  });
  return facts(event, { payments: [fact] });
}

/** `adjustment.created|updated`: only refunds that Paddle has approved move money back (credits and chargebacks are not refunds). */
function adjustmentChanged(event: PaddleEvent): ProviderFacts {
  const a = parseWith(adjustmentSchema, event.data, PROVIDER, event.event_type);
  if (a.action !== 'refund' || a.status !== 'approved') return facts(event, {});
  const fact: PaymentFact = compact({
    provider: PROVIDER,
    id: a.transaction_id,
    aliases: [],
    currency: normalizeCurrency(a.totals.currency_code),
    refunds: [{ id: a.id, amount: a.totals.total }],
    status: a.type === 'full' ? 'refunded' : undefined,
    // Before its transaction arrives the payment shows at the refund's time and, refunded in full, for the refund's amount.
    fallback: a.created_at
      ? compact({ ts: isoToMs(a.created_at), amount: a.type === 'full' ? a.totals.total : undefined })
      : undefined,
    customer_id: a.customer_id ?? undefined,
    subscription_id: a.subscription_id ?? undefined,
  });
  return facts(event, { payments: [fact] });
}

function subscriptionChanged(event: PaddleEvent): ProviderFacts {
  const sub = parseWith(subscriptionSchema, event.data, PROVIDER, event.event_type);
  const fact: SubscriptionFact = compact({
    provider: PROVIDER,
    subscription_id: sub.id,
    customer_id: sub.customer_id ?? undefined,
    status: sub.status,
    paying: PAYING_STATUSES.has(sub.status),
    visitor_id: visitorFrom(sub.custom_data),
    ts: isoToMs(event.occurred_at),
  });
  return facts(event, { subscriptions: [fact] });
}

/** Event types we use (https://developer.paddle.com/webhooks/overview) → their facts. */
const HANDLERS: Readonly<Record<string, (event: PaddleEvent) => ProviderFacts>> = {
  'transaction.completed': transactionCompleted,
  'adjustment.created': adjustmentChanged,
  'adjustment.updated': adjustmentChanged,
  'subscription.created': subscriptionChanged,
  'subscription.updated': subscriptionChanged,
  'subscription.activated': subscriptionChanged,
  'subscription.trialing': subscriptionChanged,
  'subscription.past_due': subscriptionChanged,
  'subscription.paused': subscriptionChanged,
  'subscription.resumed': subscriptionChanged,
  'subscription.canceled': subscriptionChanged,
};

/** `ts=<seconds>;h1=<hex>[;h1=<hex>…]` → its parts; several `h1` appear while a secret is being rotated. */
function parseSignatureHeader(header: string): { ts: number; h1: string[] } | null {
  let ts: number | undefined;
  const h1: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 'ts' && /^\d+$/.test(value)) ts = Number(value);
    else if (key === 'h1' && value) h1.push(value);
  }
  return ts === undefined || h1.length === 0 ? null : { ts, h1 };
}

/**
 * Verifies `paddle-signature`: HMAC-SHA256 (hex) of `${ts}:${rawBody}` under
 * the endpoint's secret key, any `h1` matching, and `ts` within 5 minutes of
 * `nowMs` either way (`checkSignedTime`)
 * (https://developer.paddle.com/webhooks/signature-verification).
 */
function verify(rawBody: string, headers: Record<string, string | undefined>, secret: string, nowMs: number): unknown {
  const header = headers['paddle-signature'];
  if (!header) throw new WebhookSignatureError('missing webhook signature');
  const parsed = parseSignatureHeader(header);
  if (!parsed) throw new WebhookSignatureError('malformed webhook signature');
  if (!secret) throw new WebhookSignatureError('webhook secret is not configured');
  const expected = hmacSha256Hex(secret, `${parsed.ts}:${rawBody}`);
  if (!parsed.h1.some((h) => hexDigestsEqual(expected, h)))
    throw new WebhookSignatureError('webhook signature does not match');
  // Checked after the signature, so that only a genuine but old delivery is called stale.
  checkSignedTime(parsed.ts, nowMs);
  return parseJsonBody(PROVIDER, rawBody);
}

const paddleFacts = factsByType(eventSchema, PROVIDER, (e) => e.event_type, HANDLERS);

export const paddleProvider: ProviderModule = { provider: PROVIDER, verify, facts: paddleFacts };
