/**
 * Polar webhooks: Standard Webhooks signature check and the facts of the
 * events we use (https://polar.sh/docs/integrate/webhooks/events).
 *
 * Keying rule: every payment is an order (first purchase, subscription start,
 * each renewal), and `order.*` events all carry the order, so facts are keyed
 * by the order id and need no aliases.
 *
 * Money: `total_amount` (after discount, with tax) and `refunded_amount`
 * (cumulative) are in the currency's minor unit; Polar gives no USD
 * conversion, so `amount_usd` is set only for USD orders
 * (https://polar.sh/docs/api-reference/orders/get).
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import * as z from 'zod';
import type { PaymentFact, PaymentStatus, ProviderFacts, SubscriptionFact } from '../facts.js';
import { normalizeCurrency } from '../currency.js';
import {
  checkSignedTime,
  compact,
  factsByType,
  isoDateTime,
  isoToMs,
  noFacts,
  parseWith,
  usdIfUsd,
  visitorFrom,
  WebhookPayloadError,
  WebhookSignatureError,
  type ProviderModule,
} from './common.js';
import { own } from '../../dict.js';

const PROVIDER = 'polar';

/**
 * Order `status` → payment status (https://polar.sh/docs/api-reference/orders/get).
 * `partially_refunded` stays paid with `refunded` > 0; `draft`, `pending` and
 * `void` state none.
 */
const STATUS: Readonly<Record<string, PaymentStatus>> = {
  paid: 'paid',
  partially_refunded: 'paid',
  refunded: 'refunded',
};

/**
 * Order `billing_reason` → renewal (https://polar.sh/docs/api-reference/webhooks/order.created):
 * `purchase` and `subscription_create` are first payments; `subscription_cycle`
 * renews and `subscription_update` bills a plan change of an existing subscription.
 */
const RENEWAL_BY_BILLING_REASON: Readonly<Record<string, boolean>> = {
  purchase: false,
  subscription_create: false,
  subscription_cycle: true,
  subscription_update: true,
};

/** Subscription statuses in which the customer pays or will be charged (https://polar.sh/docs/api-reference/subscriptions/get). */
const PAYING_STATUSES = new Set(['active', 'trialing', 'past_due']);

const metadata = z.record(z.string(), z.unknown()).nullish();
const customer = z.object({ metadata }).nullish();

const eventSchema = z.object({ type: z.string(), timestamp: isoDateTime, data: z.unknown() });
type PolarEvent = z.infer<typeof eventSchema>;

const orderSchema = z.object({
  id: z.string(),
  status: z.string(),
  total_amount: z.number().int().min(0),
  refunded_amount: z.number().int().min(0),
  currency: z.string(),
  billing_reason: z.string(),
  customer_id: z.string(),
  subscription_id: z.string().nullish(),
  created_at: isoDateTime.nullish(),
  metadata,
  customer,
});

const subscriptionSchema = z.object({
  id: z.string(),
  status: z.string(),
  customer_id: z.string(),
  metadata,
  customer,
});

function facts(
  event: PolarEvent,
  objectId: string,
  parts: Partial<Omit<ProviderFacts, 'event_id' | 'event_type'>>,
): ProviderFacts {
  // Payloads carry no event id (the delivery's `webhook-id` header is not passed on); type, object and time name it.
  return { ...noFacts(`${event.type}:${objectId}@${event.timestamp}`, event.type), ...parts };
}

/** `order.paid`, `order.created` (when created paid) and `order.refunded`. */
function orderFact(event: PolarEvent): ProviderFacts {
  const o = parseWith(orderSchema, event.data, PROVIDER, event.type);
  // An order created unpaid says nothing yet (order.paid follows); a $0 order moves no money.
  if ((event.type === 'order.created' && o.status !== 'paid') || o.total_amount === 0) return facts(event, o.id, {});
  const fact: PaymentFact = compact({
    provider: PROVIDER,
    id: o.id,
    aliases: [],
    // The event's time is the payment's for paid/created; a refund's time is not, so it states none.
    ts: event.type === 'order.refunded' ? undefined : isoToMs(event.timestamp),
    // A refund that arrives first shows the payment at the order's creation until order.paid states its time.
    fallback: event.type === 'order.refunded' && o.created_at ? { ts: isoToMs(o.created_at) } : undefined,
    amount: o.total_amount,
    currency: normalizeCurrency(o.currency),
    amount_usd: usdIfUsd(o.total_amount, o.currency),
    refunded: o.refunded_amount > 0 ? o.refunded_amount : undefined,
    status: own(STATUS, o.status),
    customer_id: o.customer_id,
    // Checkout `metadata` is copied to the order, `customer_metadata` to the customer.
    visitor_id: visitorFrom(o.metadata, o.customer?.metadata),
    is_renewal: own(RENEWAL_BY_BILLING_REASON, o.billing_reason) ?? false,
    subscription_id: o.subscription_id ?? undefined,
  });
  return facts(event, o.id, { payments: [fact] });
}

/**
 * `subscription.*`: `paying` follows the status alone; a subscription
 * canceled at period end stays `active` (and paying) until Polar revokes it.
 */
function subscriptionFact(event: PolarEvent): ProviderFacts {
  const sub = parseWith(subscriptionSchema, event.data, PROVIDER, event.type);
  const fact: SubscriptionFact = compact({
    provider: PROVIDER,
    subscription_id: sub.id,
    customer_id: sub.customer_id,
    status: sub.status,
    paying: PAYING_STATUSES.has(sub.status),
    visitor_id: visitorFrom(sub.metadata, sub.customer?.metadata),
    ts: isoToMs(event.timestamp),
  });
  return facts(event, sub.id, { subscriptions: [fact] });
}

/** Event types we use (https://polar.sh/docs/integrate/webhooks/events) → their facts. */
const HANDLERS: Readonly<Record<string, (event: PolarEvent) => ProviderFacts>> = {
  'order.created': orderFact,
  'order.paid': orderFact,
  'order.refunded': orderFact,
  'subscription.created': subscriptionFact,
  'subscription.updated': subscriptionFact,
  'subscription.active': subscriptionFact,
  'subscription.canceled': subscriptionFact,
  'subscription.uncanceled': subscriptionFact,
  'subscription.revoked': subscriptionFact,
  'subscription.past_due': subscriptionFact,
};

/**
 * The Standard Webhooks key for a Polar secret. Polar signs with the UTF-8
 * bytes of the secret shown in its dashboard, and Standard Webhooks libraries
 * take the key base64-encoded ("the webhook secret is expected to be base64
 * encoded", https://polar.sh/docs/integrate/webhooks/delivery; Polar's SDK
 * does `Buffer.from(secret, 'utf-8').toString('base64')`).
 */
export function standardWebhooksKey(polarSecret: string): string {
  return Buffer.from(polarSecret, 'utf8').toString('base64');
}

/**
 * Verifies `webhook-signature` (`v1,<base64>` entries: HMAC-SHA256 of
 * `${webhook-id}.${webhook-timestamp}.${rawBody}`) with the `standardwebhooks`
 * package. The package measures the timestamp against the system clock; we
 * check it against `nowMs` first, so a caller's notion of now decides.
 */
function verify(rawBody: string, headers: Record<string, string | undefined>, secret: string, nowMs: number): unknown {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signature = headers['webhook-signature'];
  if (!id || !timestamp || !signature) throw new WebhookSignatureError('missing webhook signature');
  if (!/^\d+$/.test(timestamp)) throw new WebhookSignatureError('malformed webhook signature');
  if (!secret) throw new WebhookSignatureError('webhook secret is not configured');
  // Before the package, which measures against the system clock: the caller's now decides (Standard Webhooks' 5 minutes either way).
  checkSignedTime(Number(timestamp), nowMs);
  try {
    return new Webhook(standardWebhooksKey(secret)).verify(rawBody, {
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': signature,
    });
  } catch (err) {
    if (err instanceof WebhookVerificationError) {
      const message = /too new/i.test(err.message)
        ? 'webhook timestamp too new'
        : /timestamp/i.test(err.message)
          ? 'webhook timestamp too old'
          : 'webhook signature does not match';
      throw new WebhookSignatureError(message, err.message);
    }
    // The signature matched and the package then failed to parse the body.
    if (err instanceof SyntaxError) throw new WebhookPayloadError(PROVIDER, 'unknown', 'body is not JSON');
    throw err;
  }
}

const polarFacts = factsByType(eventSchema, PROVIDER, (e) => e.type, HANDLERS);

export const polarProvider: ProviderModule = { provider: PROVIDER, verify, facts: polarFacts };
