/**
 * Lemon Squeezy webhooks: HMAC signature check and the facts of the events we
 * use (https://docs.lemonsqueezy.com/help/webhooks).
 *
 * Keying rule: a one-time purchase and the first payment of a subscription are
 * both an order (`data.id` of `order_*` events); a renewal is a subscription
 * invoice, keyed `subscription-invoice:<id>` because Lemon Squeezy numbers
 * orders and subscription invoices in separate sequences and the two would
 * otherwise collide. Every event of one payment carries the same object, so no
 * aliases are needed.
 *
 * The first payment of a subscription arrives twice, as `order_created` and as
 * `subscription_payment_success` with `billing_reason: initial`; Lemon Squeezy
 * always sends `order_created` alongside `subscription_created`
 * (https://docs.lemonsqueezy.com/help/webhooks/event-types), and the initial
 * invoice does not name its order, so the order alone records that payment
 * and the initial invoice states no payment fact.
 *
 * Money: `total` is in the currency's minor unit, `total_usd` is Lemon
 * Squeezy's own USD value in cents, `refunded_amount` is cumulative
 * (https://docs.lemonsqueezy.com/api/orders/the-order-object).
 */
import * as z from 'zod';
import type { PaymentFact, PaymentStatus, ProviderFacts, SubscriptionFact } from '../facts.js';
import { normalizeCurrency, toMajor } from '../currency.js';
import {
  compact,
  factsByType,
  hexDigestsEqual,
  hmacSha256Hex,
  isoDateTime,
  isoToMs,
  noFacts,
  parseJsonBody,
  parseWith,
  visitorFrom,
  WebhookSignatureError,
  type ProviderModule,
} from './common.js';
import { own } from '../../dict.js';

const PROVIDER = 'lemonsqueezy';

/** Prefix that keeps subscription-invoice ids apart from order ids. */
export const SUBSCRIPTION_INVOICE_PREFIX = 'subscription-invoice:';

/**
 * Order and subscription-invoice `status` → payment status
 * (https://docs.lemonsqueezy.com/api/orders/the-order-object,
 * https://docs.lemonsqueezy.com/api/subscription-invoices/the-subscription-invoice-object).
 * `partial_refund` stays paid with `refunded` > 0; `pending` and `void` state none.
 */
const STATUS: Readonly<Record<string, PaymentStatus>> = {
  paid: 'paid',
  partial_refund: 'paid',
  refunded: 'refunded',
  failed: 'failed',
  fraudulent: 'failed',
};

/**
 * Subscription-invoice `billing_reason` → renewal. `initial` is the first
 * payment (recorded by its order, see above); `updated` bills a plan change of
 * an existing subscription.
 */
const RENEWAL_BY_BILLING_REASON: Readonly<Record<string, boolean>> = { renewal: true, updated: true };

/** Subscription statuses in which the customer pays or will be charged (https://docs.lemonsqueezy.com/api/subscriptions/the-subscription-object). */
const PAYING_STATUSES = new Set(['on_trial', 'active', 'past_due']);

/** Lemon Squeezy ids are numbers in attributes and strings in `data.id`. */
const id = z.union([z.number().int(), z.string().min(1)]).transform(String);
const minor = z.number().int().min(0);

const eventSchema = z.object({
  meta: z.object({
    event_name: z.string(),
    custom_data: z.record(z.string(), z.unknown()).nullish(),
  }),
  data: z.object({ type: z.string(), id, attributes: z.unknown() }),
});
type LemonEvent = z.infer<typeof eventSchema>;

const orderSchema = z.object({
  customer_id: id.nullish(),
  currency: z.string(),
  total: minor,
  total_usd: minor.nullish(),
  refunded_amount: minor.nullish(),
  status: z.string(),
  created_at: isoDateTime,
});

const invoiceSchema = orderSchema.extend({
  subscription_id: id,
  billing_reason: z.string(),
});

const subscriptionSchema = z.object({
  customer_id: id.nullish(),
  status: z.string(),
  updated_at: isoDateTime,
});

function facts(event: LemonEvent, parts: Partial<Omit<ProviderFacts, 'event_id' | 'event_type'>>): ProviderFacts {
  // Payloads carry no event id; the event name and object id say what this delivery was about.
  return { ...noFacts(`${event.meta.event_name}:${event.data.id}`, event.meta.event_name), ...parts };
}

/** The fields an order and a subscription invoice share. */
function paymentOf(event: LemonEvent, paymentId: string, p: z.infer<typeof orderSchema>): PaymentFact {
  const refunded = p.refunded_amount ?? 0;
  return compact({
    provider: PROVIDER,
    id: paymentId,
    aliases: [],
    // An order is created when it is paid, so its creation time is the payment's on every event.
    ts: isoToMs(p.created_at),
    amount: p.total,
    currency: normalizeCurrency(p.currency),
    amount_usd: p.total_usd == null ? undefined : toMajor(p.total_usd, 'USD'),
    refunded: refunded > 0 ? refunded : undefined,
    status: own(STATUS, p.status),
    customer_id: p.customer_id ?? undefined,
    visitor_id: visitorFrom(event.meta.custom_data),
  });
}

function orderFact(event: LemonEvent): ProviderFacts {
  const order = parseWith(orderSchema, event.data.attributes, PROVIDER, event.meta.event_name);
  if (order.total === 0) return facts(event, {});
  return facts(event, { payments: [{ ...paymentOf(event, event.data.id, order), is_renewal: false }] });
}

function invoiceFact(event: LemonEvent): ProviderFacts {
  const inv = parseWith(invoiceSchema, event.data.attributes, PROVIDER, event.meta.event_name);
  const isRenewal = own(RENEWAL_BY_BILLING_REASON, inv.billing_reason);
  // `initial` (and any reason we don't know): the order records the payment.
  if (!isRenewal || inv.total === 0) return facts(event, {});
  const fact = {
    ...paymentOf(event, SUBSCRIPTION_INVOICE_PREFIX + event.data.id, inv),
    is_renewal: true,
    subscription_id: inv.subscription_id,
  };
  return facts(event, { payments: [fact] });
}

function subscriptionFact(event: LemonEvent): ProviderFacts {
  const sub = parseWith(subscriptionSchema, event.data.attributes, PROVIDER, event.meta.event_name);
  const fact: SubscriptionFact = compact({
    provider: PROVIDER,
    subscription_id: event.data.id,
    customer_id: sub.customer_id ?? undefined,
    status: sub.status,
    paying: PAYING_STATUSES.has(sub.status),
    visitor_id: visitorFrom(event.meta.custom_data),
    // The payload has no event time; the subscription's `updated_at` is when this change happened.
    ts: isoToMs(sub.updated_at),
  });
  return facts(event, { subscriptions: [fact] });
}

/** Event names we use (https://docs.lemonsqueezy.com/help/webhooks/event-types) → their facts. */
const HANDLERS: Readonly<Record<string, (event: LemonEvent) => ProviderFacts>> = {
  order_created: orderFact,
  order_refunded: orderFact,
  subscription_payment_success: invoiceFact,
  subscription_payment_refunded: invoiceFact,
  subscription_created: subscriptionFact,
  subscription_updated: subscriptionFact,
  subscription_cancelled: subscriptionFact,
  subscription_expired: subscriptionFact,
  subscription_resumed: subscriptionFact,
  subscription_paused: subscriptionFact,
  subscription_unpaused: subscriptionFact,
};

/**
 * Verifies `x-signature`: the hex HMAC-SHA256 of the raw body under the
 * signing secret, compared in constant time
 * (https://docs.lemonsqueezy.com/help/webhooks/signing-requests). The scheme
 * signs no timestamp, so there is no staleness check; a replayed delivery is
 * harmless because facts are idempotent.
 */
function verify(rawBody: string, headers: Record<string, string | undefined>, secret: string, _nowMs: number): unknown {
  const signature = headers['x-signature'];
  if (!signature) throw new WebhookSignatureError('missing webhook signature');
  if (!secret) throw new WebhookSignatureError('webhook secret is not configured');
  if (!hexDigestsEqual(hmacSha256Hex(secret, rawBody), signature))
    throw new WebhookSignatureError('webhook signature does not match');
  return parseJsonBody(PROVIDER, rawBody);
}

const lemonFacts = factsByType(eventSchema, PROVIDER, (e) => e.meta.event_name, HANDLERS);

export const lemonSqueezyProvider: ProviderModule = { provider: PROVIDER, verify, facts: lemonFacts };
