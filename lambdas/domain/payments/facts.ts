/**
 * What a provider's webhook event tells us, in one vocabulary for every
 * provider. Each provider module turns a verified event into these facts; the
 * payment store merges them (`docs/payments.md` "One payment, many events"): one payment is
 * one row however many events describe it, and an event delivered twice
 * changes nothing the second time.
 */
export const PROVIDERS = ['stripe', 'lemonsqueezy', 'paddle', 'polar'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Payment statuses (`docs/payments.md`): a partial refund keeps `paid` with `refunded` > 0. */
export const PAYMENT_STATUSES = ['paid', 'failed', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * A fact about one payment. Every field but the ids is optional: an event
 * states what it knows, and the store keeps the union (later facts win field
 * by field, except that `refunded` only grows and `paid` never returns to a
 * payment already `refunded`).
 */
export interface PaymentFact {
  provider: Provider;
  /**
   * The id the payment row is known by (`provider_payment_id`): Stripe's
   * PaymentIntent id when the event has one, Lemon Squeezy's order id,
   * Paddle's transaction id, Polar's order id (Lemon Squeezy renewals:
   * `subscription-invoice:<id>`, as invoices and orders are numbered apart).
   */
  id: string;
  /**
   * Other ids of the same purchase that other events use instead (Stripe:
   * the Checkout Session, Charge and Invoice ids); the store maps each to `id`.
   */
  aliases: string[];
  /** Time of the payment, ms since epoch (UTC). */
  ts?: number;
  /**
   * Stand-ins for `ts` and `amount` from an event that does not state them,
   * typically a refund that arrives before its payment (`docs/payments.md` "One payment, many events"): the
   * payment time the refund object carries (Stripe's charge `created`,
   * Polar's order `created_at`), else the refund's own time (Paddle's
   * adjustment); the amount of a full refund. They make the payment show and
   * count until an event states the real values, which replace them
   * whatever the order of arrival (`mergePaymentFact`).
   */
  fallback?: { ts?: number; amount?: number };
  /** Amount in the currency's minor unit (ISO 4217 exponent: JPY 0, KWD 3). */
  amount?: number;
  /** ISO 4217 code, upper case. */
  currency?: string;
  /** The provider's own USD value of `amount`, when it gives one (decimal USD). */
  amount_usd?: number;
  /** Total refunded so far, minor unit of `currency` (cumulative, not this refund alone). */
  refunded?: number;
  /**
   * Single refunds by the provider's refund id, minor unit of `currency`, for
   * providers whose refund events state one refund rather than a running total
   * (Paddle adjustments); the store adds up the distinct ones.
   */
  refunds?: Array<{ id: string; amount: number }>;
  status?: PaymentStatus;
  customer_id?: string;
  /** `footfall_visitor_id` from the metadata/custom data of this event's objects. */
  visitor_id?: string;
  /** A subscription renewal (not the first payment of the subscription). */
  is_renewal?: boolean;
  subscription_id?: string;
}

/** Subscription statuses as each provider names them, mapped to whether the customer is still paying. */
export interface SubscriptionFact {
  provider: Provider;
  subscription_id: string;
  customer_id?: string;
  /** The provider's status word (`active`, `trialing`, `past_due`, `canceled`, `paused`, …). */
  status: string;
  /** True while the subscription is paying or will renew (active, trialing, past due). */
  paying: boolean;
  visitor_id?: string;
  /** When the status took effect, ms since epoch. */
  ts: number;
}

/** A customer with a visitor id: from its own metadata (Stripe customers) or from a checkout that names both. */
export interface CustomerFact {
  provider: Provider;
  customer_id: string;
  visitor_id: string;
}

export interface ProviderFacts {
  /** The provider's event id, for logs. */
  event_id: string;
  event_type: string;
  payments: PaymentFact[];
  subscriptions: SubscriptionFact[];
  customers: CustomerFact[];
}

/** A provider's id as one key (the key of `PaymentImportWrites.aliasTargets`' answer): NUL occurs in neither part. */
export const aliasRef = (provider: Provider, id: string) => `${provider}\u0000${id}`;
