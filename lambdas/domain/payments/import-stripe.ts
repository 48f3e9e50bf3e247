/**
 * A Stripe account's history as the webhooks would have told it
 * (`footfall import stripe`, `docs/payments.md` "Importing a provider's
 * history"): each object the API lists, in the state it is in now, stands for
 * the webhook events that state implies, and those events go through the
 * webhook's own mapping (`stripeProvider.facts`), so an imported payment is
 * the row its webhooks would have left: the same ids and aliases, amounts,
 * statuses, renewal flags, visitor ids from metadata.
 *
 * The event's time is the object's (its `created`, an invoice's `paid_at`, a
 * subscription's end): a listed object does not say when its event was sent.
 * Where the webhook would take the event's time as the payment's (a
 * PaymentIntent or Charge that succeeded), the payment's rows merge on the
 * earliest reported time, which for a purchase is its session or charge.
 */
import * as z from 'zod';
import type { ProviderFacts } from './facts.js';
import { stripeProvider } from './providers/stripe.js';

/** The Stripe list endpoints a history import reads, in the order it reads them (customers before their payments). */
export const STRIPE_HISTORY_KINDS = [
  'customer',
  'subscription',
  'checkout_session',
  'payment_intent',
  'invoice',
  'invoice_payment',
  'charge',
] as const;
export type StripeHistoryKind = (typeof STRIPE_HISTORY_KINDS)[number];

/** The fields that say which events an object's state implies (https://docs.stripe.com/api). */
const objectSchema = z.object({
  id: z.string(),
  /** Unix seconds. */
  created: z.number().int(),
  status: z.string().nullish(),
  /** Charges: cumulative refunded amount (https://docs.stripe.com/api/charges/object#charge_object-amount_refunded). */
  amount_refunded: z.number().int().nullish(),
  /** PaymentIntents: the last failed attempt (https://docs.stripe.com/api/payment_intents/object#payment_intent_object-last_payment_error). */
  last_payment_error: z.unknown().nullish(),
  /** Invoices: attempts to pay so far (https://docs.stripe.com/api/invoices/object#invoice_object-attempt_count). */
  attempt_count: z.number().int().nullish(),
  status_transitions: z.object({ paid_at: z.number().int().nullish() }).nullish(),
  /** Subscriptions: when it ended or was canceled (Unix seconds). */
  ended_at: z.number().int().nullish(),
  canceled_at: z.number().int().nullish(),
});
type StripeObject = z.infer<typeof objectSchema>;

/** A state's webhook event: its type and time (Unix seconds). */
type Implied = { type: string; created: number };

/** Each kind's object → the webhook events its current state implies (https://docs.stripe.com/api/events/types). */
const IMPLIED: Readonly<Record<StripeHistoryKind, (o: StripeObject) => Implied[]>> = {
  customer: (o) => [{ type: 'customer.updated', created: o.created }],
  // Its last change is no earlier than its creation, cancellation or end.
  subscription: (o) => [
    { type: 'customer.subscription.updated', created: Math.max(o.created, o.canceled_at ?? 0, o.ended_at ?? 0) },
  ],
  // Only a completed session was paid for; open and expired ones sent no completion.
  checkout_session: (o) =>
    o.status === 'complete' ? [{ type: 'checkout.session.completed', created: o.created }] : [],
  payment_intent: (o) =>
    o.status === 'succeeded'
      ? [{ type: 'payment_intent.succeeded', created: o.created }]
      : o.last_payment_error
        ? [{ type: 'payment_intent.payment_failed', created: o.created }]
        : [],
  invoice: (o) =>
    o.status === 'paid'
      ? [{ type: 'invoice.paid', created: o.status_transitions?.paid_at ?? o.created }]
      : (o.status === 'open' || o.status === 'uncollectible') && (o.attempt_count ?? 0) > 0
        ? [{ type: 'invoice.payment_failed', created: o.created }]
        : [],
  invoice_payment: (o) => (o.status === 'paid' ? [{ type: 'invoice_payment.paid', created: o.created }] : []),
  charge: (o) => [
    ...(o.status === 'succeeded' ? [{ type: 'charge.succeeded', created: o.created }] : []),
    ...(o.status === 'failed' ? [{ type: 'charge.failed', created: o.created }] : []),
    ...((o.amount_refunded ?? 0) > 0 ? [{ type: 'charge.refunded', created: o.created }] : []),
  ],
};

/**
 * The facts a listed Stripe object of `kind` stands for: the webhook events
 * its state implies (`IMPLIED`), each mapped by `stripeProvider.facts`.
 * Event ids are `history:<object id>:<event type>`. An object without an
 * id or creation time (not one the API returns) stands for nothing.
 * @throws WebhookPayloadError when the object lacks what its event's mapping reads
 */
export function stripeHistoryFacts(kind: StripeHistoryKind, object: unknown): ProviderFacts[] {
  const parsed = objectSchema.safeParse(object);
  if (!parsed.success) return [];
  return IMPLIED[kind](parsed.data).flatMap(
    ({ type, created }) =>
      stripeProvider.facts({ id: `history:${parsed.data.id}:${type}`, type, created, data: { object } }) ?? [],
  );
}
