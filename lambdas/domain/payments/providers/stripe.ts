/**
 * Stripe webhooks: signature check with the `stripe` package and the facts of
 * the events we use (`docs/payments.md` "One payment, many events").
 *
 * Keying rule: one purchase shows up as a Checkout Session, a PaymentIntent, a
 * Charge and, for subscriptions, an Invoice; each event knows only some of
 * these ids. Every fact is keyed by the PaymentIntent id when its event knows
 * it, else by the Invoice id, else by the Checkout Session id, else by the
 * Charge id, and lists every other id it knows as an alias. The store treats a
 * payment's id and aliases as one set and merges rows whose sets meet, so the
 * events of one purchase converge however they arrive:
 *
 * - one-time Checkout: the session names its PaymentIntent (id `pi_…`, alias
 *   `cs_…`); `payment_intent.*` names its latest charge (`pi_…` + `ch_…`);
 *   `charge.*` names its PaymentIntent (`pi_…` + `ch_…`).
 * - subscription Checkout: the session knows the first invoice but not its
 *   PaymentIntent (`in_…` + `cs_…`); `invoice.paid` names the PaymentIntent on
 *   API versions before 2025-03-31.basil (`invoice.payment_intent`) or when
 *   `payments` is included (`payments.data[].payment.payment_intent`), else it
 *   stays `in_…`. From basil on, PaymentIntents and Charges no longer name
 *   their invoice, and `invoice_payment.paid` is the event that links the two
 *   (`pi_…` + `in_…`): endpoints on basil or later must subscribe to it, or a
 *   subscription payment's `payment_intent.*`/`charge.*` facts stay a separate
 *   row from its invoice. Source:
 *   https://docs.stripe.com/changelog/basil/2025-03-31/add-support-for-multiple-partial-payments-on-invoices
 *
 * Amounts: Stripe's minor units equal ISO 4217's except ISK (Stripe keeps two
 * decimals, https://support.stripe.com/questions/deprecation-of-fractional-isk-charges-and-refunds)
 * and MGA (Stripe treats it as zero-decimal, https://docs.stripe.com/currencies#zero-decimal);
 * those two are rescaled to ISO minor units. The USD value comes in a
 * separate balance transaction that the webhook does not carry, so
 * `amount_usd` is set only for payments in USD.
 */
import { Stripe } from 'stripe';
import * as z from 'zod';
import type { CustomerFact, PaymentFact, PaymentStatus, ProviderFacts, SubscriptionFact } from '../facts.js';
import { minorUnitExponent, normalizeCurrency, rescaleMinor } from '../currency.js';
import {
  checkSignedTime,
  compact,
  factsByType,
  noFacts,
  otherIds,
  parseWith,
  usdIfUsd,
  visitorFrom,
  WebhookPayloadError,
  WebhookSignatureError,
  type ProviderModule,
} from './common.js';
import { own } from '../../dict.js';

const PROVIDER = 'stripe';

/** How every Stripe webhook signing secret starts (https://docs.stripe.com/webhooks#verify-events); an API key (`sk_…`) there is a mistake. */
export const STRIPE_SECRET_PREFIX = 'whsec_';

/** Currencies whose Stripe API minor unit is not the ISO 4217 one: code → decimals in Stripe amounts. */
const STRIPE_EXPONENTS: Readonly<Record<string, number>> = { ISK: 2, MGA: 0 };

/** Subscription statuses in which the customer is paying or will be charged (https://docs.stripe.com/billing/subscriptions/overview#subscription-statuses). */
const PAYING_STATUSES = new Set(['active', 'trialing', 'past_due']);

/**
 * `invoice.billing_reason` → whether the payment renews an existing
 * subscription (https://docs.stripe.com/api/invoices/object#invoice_object-billing_reason).
 * Only `subscription_create` starts one; the others bill a customer who has
 * already subscribed. Reasons not listed are not subscription invoices.
 */
const RENEWAL_BY_BILLING_REASON: Readonly<Record<string, boolean>> = {
  subscription_create: false,
  subscription_cycle: true,
  subscription_update: true,
  subscription_threshold: true,
  subscription: true,
};

/** An expandable reference: an id, or the object when expanded; webhooks send the id. */
const ref = z
  .union([z.string(), z.object({ id: z.string() })])
  .nullish()
  .transform((v) => (typeof v === 'string' ? v : v?.id));

const metadata = z.record(z.string(), z.unknown()).nullish();

const eventSchema = z.object({
  id: z.string(),
  type: z.string(),
  /** Seconds since epoch. */
  created: z.number().int(),
  data: z.object({ object: z.unknown() }),
});
type StripeEvent = z.infer<typeof eventSchema>;

const sessionSchema = z.object({
  id: z.string(),
  mode: z.string(),
  payment_status: z.string(),
  amount_total: z.number().int().nullish(),
  currency: z.string().nullish(),
  payment_intent: ref,
  invoice: ref,
  subscription: ref,
  customer: ref,
  metadata,
});

const paymentIntentSchema = z.object({
  id: z.string(),
  amount: z.number().int(),
  amount_received: z.number().int().nullish(),
  currency: z.string(),
  customer: ref,
  latest_charge: ref,
  /** Removed in 2025-03-31.basil. */
  invoice: ref,
  metadata,
});

const chargeSchema = z.object({
  id: z.string(),
  /** Unix seconds: when the charge, i.e. the payment, was made. */
  created: z.number().int().nullish(),
  amount: z.number().int(),
  /** Below `amount` after a partial capture; 0 while uncaptured or failed. */
  amount_captured: z.number().int().nullish(),
  amount_refunded: z.number().int(),
  currency: z.string(),
  refunded: z.boolean(),
  payment_intent: ref,
  /** Removed in 2025-03-31.basil. */
  invoice: ref,
  customer: ref,
  metadata,
});

const invoiceSchema = z.object({
  id: z.string(),
  amount_paid: z.number().int(),
  /** What the invoice asks for; what a failed attempt tried to collect. */
  amount_due: z.number().int().nullish(),
  currency: z.string(),
  billing_reason: z.string().nullish(),
  customer: ref,
  metadata,
  status_transitions: z.object({ paid_at: z.number().int().nullish() }).nullish(),
  // Before 2025-03-31.basil:
  payment_intent: ref,
  charge: ref,
  subscription: ref,
  subscription_details: z.object({ metadata }).nullish(),
  // 2025-03-31.basil and later:
  parent: z.object({ subscription_details: z.object({ subscription: ref, metadata }).nullish() }).nullish(),
  payments: z
    .object({
      data: z.array(
        z.object({
          status: z.string().nullish(),
          payment: z.object({ payment_intent: ref, charge: ref }),
        }),
      ),
    })
    .nullish(),
});

const invoicePaymentSchema = z.object({
  id: z.string(),
  invoice: ref,
  payment: z.object({ payment_intent: ref, charge: ref }),
});

const subscriptionSchema = z.object({
  id: z.string(),
  status: z.string(),
  customer: ref,
  metadata,
});

const customerSchema = z.object({ id: z.string(), metadata });

/** A Stripe amount in ISO 4217 minor units of `currency`. */
function isoMinor(amount: number, currency: string): number {
  const code = normalizeCurrency(currency);
  const iso = minorUnitExponent(code);
  return rescaleMinor(amount, STRIPE_EXPONENTS[code] ?? iso, iso);
}

/** Amount, currency and, for USD, the USD value; amounts rescaled to ISO minor units. */
function money(amount: number, currency: string): Pick<PaymentFact, 'amount' | 'currency' | 'amount_usd'> {
  const minor = isoMinor(amount, currency);
  return { amount: minor, currency: normalizeCurrency(currency), amount_usd: usdIfUsd(minor, currency) };
}

/**
 * The fact's key by the rule in this file's header: PaymentIntent, else
 * Invoice, else Checkout Session, else Charge; the other known ids become aliases.
 */
function keyed(ids: {
  paymentIntent?: string;
  invoice?: string;
  session?: string;
  charge?: string;
}): Pick<PaymentFact, 'id' | 'aliases'> {
  const ordered = [ids.paymentIntent, ids.invoice, ids.session, ids.charge];
  const id = ordered.find((x): x is string => !!x);
  if (!id) throw new Error('a Stripe payment fact needs at least one id');
  return { id, aliases: otherIds(id, ...ordered) };
}

function facts(event: StripeEvent, parts: Partial<Omit<ProviderFacts, 'event_id' | 'event_type'>>): ProviderFacts {
  return { ...noFacts(event.id, event.type), ...parts };
}

function payment(fact: PaymentFact): PaymentFact {
  return compact(fact);
}

const eventMs = (event: StripeEvent) => event.created * 1000;

function checkoutSessionCompleted(event: StripeEvent): ProviderFacts {
  const s = parseWith(sessionSchema, event.data.object, PROVIDER, event.type);
  const visitor_id = visitorFrom(s.metadata);
  const customers: CustomerFact[] =
    s.customer && visitor_id ? [{ provider: PROVIDER, customer_id: s.customer, visitor_id }] : [];
  // Setup sessions and free or trial checkouts move no money.
  if (s.mode === 'setup' || s.payment_status === 'no_payment_required' || s.amount_total === 0)
    return facts(event, { customers });
  const fact = payment({
    provider: PROVIDER,
    ...keyed({ paymentIntent: s.payment_intent, invoice: s.invoice, session: s.id }),
    ts: eventMs(event),
    ...(s.amount_total != null && s.currency ? money(s.amount_total, s.currency) : {}),
    // `unpaid`: an asynchronous method (bank debit) still pending; payment_intent.succeeded settles it.
    status: s.payment_status === 'paid' ? 'paid' : undefined,
    customer_id: s.customer,
    visitor_id,
    is_renewal: false,
    subscription_id: s.subscription,
  });
  return facts(event, { payments: [fact], customers });
}

function paymentIntentFact(status: PaymentStatus) {
  return (event: StripeEvent): ProviderFacts => {
    const pi = parseWith(paymentIntentSchema, event.data.object, PROVIDER, event.type);
    const amount = status === 'paid' && pi.amount_received ? pi.amount_received : pi.amount;
    const fact = payment({
      provider: PROVIDER,
      ...keyed({ paymentIntent: pi.id, invoice: pi.invoice, charge: pi.latest_charge }),
      ts: eventMs(event),
      ...money(amount, pi.currency),
      status,
      customer_id: pi.customer,
      visitor_id: visitorFrom(pi.metadata),
    });
    return facts(event, { payments: [fact] });
  };
}

/**
 * What a charge moved: `amount_captured` once captured (below `amount` after a
 * partial capture, https://docs.stripe.com/api/charges/object#charge_object-amount_captured),
 * else `amount`, the attempt (a failed or not yet captured charge).
 */
function chargedAmount(c: z.infer<typeof chargeSchema>): number {
  return c.amount_captured || c.amount;
}

function chargeFact(status: PaymentStatus) {
  return (event: StripeEvent): ProviderFacts => {
    const c = parseWith(chargeSchema, event.data.object, PROVIDER, event.type);
    const fact = payment({
      provider: PROVIDER,
      ...keyed({ paymentIntent: c.payment_intent, invoice: c.invoice, charge: c.id }),
      ts: eventMs(event),
      ...money(chargedAmount(c), c.currency),
      status,
      customer_id: c.customer,
      visitor_id: visitorFrom(c.metadata),
    });
    return facts(event, { payments: [fact] });
  };
}

/**
 * `charge.refunded`: `amount_refunded` is the cumulative total; `refunded` is
 * true once the whole charge is refunded (https://docs.stripe.com/api/charges/object#charge_object-refunded).
 * No `ts`: the event's time is the refund's, not the payment's; the charge's
 * `created` is a `fallback` time, so a refund that comes first still shows.
 */
function chargeRefunded(event: StripeEvent): ProviderFacts {
  const c = parseWith(chargeSchema, event.data.object, PROVIDER, event.type);
  const fact = payment({
    provider: PROVIDER,
    ...keyed({ paymentIntent: c.payment_intent, invoice: c.invoice, charge: c.id }),
    ...money(chargedAmount(c), c.currency),
    refunded: isoMinor(c.amount_refunded, c.currency),
    status: c.refunded ? 'refunded' : 'paid',
    customer_id: c.customer,
    visitor_id: visitorFrom(c.metadata),
    // The charge's creation is the payment's time: it stands in until the payment's own event arrives.
    fallback: c.created ? { ts: c.created * 1000 } : undefined,
  });
  return facts(event, { payments: [fact] });
}

type Invoice = z.infer<typeof invoiceSchema>;

/** An invoice's payment fact: keyed by its PaymentIntent when known, renewal by `billing_reason`, visitor from the subscription's metadata. */
function invoiceFact(inv: Invoice, fields: { ts: number; amount: number; status: PaymentStatus }): PaymentFact {
  const payments = inv.payments?.data ?? [];
  const settled = payments.find((p) => p.status === 'paid') ?? payments[0];
  const subscriptionDetails = inv.parent?.subscription_details;
  return payment({
    provider: PROVIDER,
    ...keyed({
      paymentIntent: inv.payment_intent ?? settled?.payment.payment_intent,
      invoice: inv.id,
      charge: inv.charge ?? settled?.payment.charge,
    }),
    ts: fields.ts,
    ...money(fields.amount, inv.currency),
    status: fields.status,
    customer_id: inv.customer,
    visitor_id: visitorFrom(subscriptionDetails?.metadata, inv.subscription_details?.metadata, inv.metadata),
    is_renewal: own(RENEWAL_BY_BILLING_REASON, inv.billing_reason ?? '') ?? false,
    subscription_id: subscriptionDetails?.subscription ?? inv.subscription,
  });
}

function invoicePaid(event: StripeEvent): ProviderFacts {
  const inv = parseWith(invoiceSchema, event.data.object, PROVIDER, event.type);
  // A $0 invoice (trial start, full credit) moves no money.
  if (inv.amount_paid === 0) return facts(event, {});
  const ts = inv.status_transitions?.paid_at ? inv.status_transitions.paid_at * 1000 : eventMs(event);
  return facts(event, { payments: [invoiceFact(inv, { ts, amount: inv.amount_paid, status: 'paid' })] });
}

/**
 * `invoice.payment_failed`: an attempt to pay an invoice failed
 * (https://docs.stripe.com/api/events/types#event_types-invoice.payment_failed).
 * Of the failure events it is the one that says whether the payment renews a
 * subscription (`billing_reason`), so a failed renewal arrives as what it is,
 * as `import payments` would state it. Time: the attempt (the event). A
 * retry that later succeeds is `invoice.paid` on the same invoice and
 * PaymentIntent: the same row, and `paid` wins (a status never steps back).
 */
function invoicePaymentFailed(event: StripeEvent): ProviderFacts {
  const inv = parseWith(invoiceSchema, event.data.object, PROVIDER, event.type);
  if (!inv.amount_due) return facts(event, {});
  return facts(event, {
    payments: [invoiceFact(inv, { ts: eventMs(event), amount: inv.amount_due, status: 'failed' })],
  });
}

/**
 * `invoice_payment.paid` (2025-03-31.basil and later): the one event that
 * names both an invoice and the PaymentIntent that paid it. It states no
 * amount of its own (the PaymentIntent can pay several invoices); it only
 * joins the invoice's row and the PaymentIntent's row.
 */
function invoicePaymentPaid(event: StripeEvent): ProviderFacts {
  const ip = parseWith(invoicePaymentSchema, event.data.object, PROVIDER, event.type);
  if (!ip.invoice || !(ip.payment.payment_intent ?? ip.payment.charge)) return facts(event, {});
  const fact = payment({
    provider: PROVIDER,
    ...keyed({ paymentIntent: ip.payment.payment_intent, invoice: ip.invoice, charge: ip.payment.charge }),
  });
  return facts(event, { payments: [fact] });
}

function subscriptionChanged(event: StripeEvent): ProviderFacts {
  const sub = parseWith(subscriptionSchema, event.data.object, PROVIDER, event.type);
  const fact: SubscriptionFact = compact({
    provider: PROVIDER,
    subscription_id: sub.id,
    customer_id: sub.customer,
    status: sub.status,
    paying: PAYING_STATUSES.has(sub.status),
    visitor_id: visitorFrom(sub.metadata),
    ts: eventMs(event),
  });
  return facts(event, { subscriptions: [fact] });
}

function customerChanged(event: StripeEvent): ProviderFacts {
  const c = parseWith(customerSchema, event.data.object, PROVIDER, event.type);
  const visitor_id = visitorFrom(c.metadata);
  return facts(event, { customers: visitor_id ? [{ provider: PROVIDER, customer_id: c.id, visitor_id }] : [] });
}

/** Event types we use (https://docs.stripe.com/api/events/types) → their facts. */
const HANDLERS: Readonly<Record<string, (event: StripeEvent) => ProviderFacts>> = {
  'checkout.session.completed': checkoutSessionCompleted,
  'payment_intent.succeeded': paymentIntentFact('paid'),
  'payment_intent.payment_failed': paymentIntentFact('failed'),
  'charge.succeeded': chargeFact('paid'),
  'charge.failed': chargeFact('failed'),
  'charge.refunded': chargeRefunded,
  'invoice.paid': invoicePaid,
  'invoice.payment_failed': invoicePaymentFailed,
  'invoice_payment.paid': invoicePaymentPaid,
  'customer.subscription.created': subscriptionChanged,
  'customer.subscription.updated': subscriptionChanged,
  'customer.subscription.deleted': subscriptionChanged,
  'customer.created': customerChanged,
  'customer.updated': customerChanged,
};

/** One `key=value` part of a `stripe-signature` header: a lower-case scheme name, a value without spaces, commas or `=`. */
const HEADER_PART = /^([a-z][a-z0-9]*)=([^\s,=]+)$/;

/**
 * The signed time of a `stripe-signature` header (`t=<seconds>,v1=<hex>[,v0=…]`),
 * seconds since epoch, read exactly as the `stripe` package's `parseHeader`
 * reads it (split on `,`, then on `=`, `t` compared verbatim; the last `t=`
 * wins there). So that our age check and the package's HMAC always see the
 * same `t`, a header that the two could read differently is refused: any part
 * that is not `key=value` (leading or trailing spaces, empty parts, a second
 * `=`), a `t` that is not decimal digits, or more than one `t=`.
 * Throws `WebhookSignatureError('malformed webhook signature')`.
 */
export function stripeSignedAt(header: string): number {
  let t: number | null = null;
  for (const part of header.split(',')) {
    const kv = HEADER_PART.exec(part);
    if (!kv) throw new WebhookSignatureError('malformed webhook signature');
    if (kv[1] !== 't') continue;
    if (t !== null || !/^\d{1,12}$/.test(kv[2]!)) throw new WebhookSignatureError('malformed webhook signature');
    t = parseInt(kv[2]!, 10);
  }
  if (t === null) throw new WebhookSignatureError('malformed webhook signature');
  return t;
}

/**
 * Verifies `stripe-signature` (`t=<seconds>,v1=<hex>`: HMAC-SHA256 of
 * `${t}.${rawBody}`): the header's form and its one `t` (`stripeSignedAt`),
 * then the HMAC with `Stripe.webhooks.constructEvent`, then the timestamp with
 * `checkSignedTime` (5 minutes either way from `nowMs`). The SDK's own
 * tolerance is off (0) because it only refuses old timestamps, and accepted
 * `t` a year ahead (https://docs.stripe.com/webhooks#verify-events).
 */
function verify(rawBody: string, headers: Record<string, string | undefined>, secret: string, nowMs: number): unknown {
  const header = headers['stripe-signature'];
  if (!header) throw new WebhookSignatureError('missing webhook signature');
  const t = stripeSignedAt(header);
  let event: unknown;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, header, secret, 0, undefined, nowMs);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError)
      throw new WebhookSignatureError('webhook signature does not match', err.message);
    // Signed, but not JSON: the signature check passed before constructEvent parsed the body.
    if (err instanceof SyntaxError) throw new WebhookPayloadError(PROVIDER, 'unknown', 'body is not JSON');
    throw err;
  }
  checkSignedTime(t, nowMs);
  return event;
}

const stripeFacts = factsByType(eventSchema, PROVIDER, (e) => e.type, HANDLERS);

export const stripeProvider: ProviderModule = { provider: PROVIDER, verify, facts: stripeFacts };
