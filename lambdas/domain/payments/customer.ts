import type { Provider } from './facts.js';
import type { FirstTouch, Touch } from './attribution.js';
import type { PaymentDimension } from '../rollup.js';
import { dict, own } from '../dict.js';

/** The credit of a customer's first attributed payment, which renewals inherit (`docs/payments.md` "Customers and attribution"). */
export interface CustomerCredit {
  payment_id: string;
  ts: number;
  visitor: string;
  touch: Touch;
  touch_dims: Record<PaymentDimension, string[]>;
  first_touch: FirstTouch | null;
}

/**
 * Event-time order of a customer's payments (`docs/payments.md`, "Customers
 * and attribution"): by time (ms since epoch, UTC), then by payment key
 * (`provider:id`), so two payments of the same millisecond have one first
 * whatever order they arrive in.
 */
export function paidBefore(a: { ts: number; key: string }, b: { ts: number; key: string }): boolean {
  return a.ts < b.ts || (a.ts === b.ts && a.key < b.key);
}

/** A subscription's last known status from the provider. */
export interface SubscriptionState {
  status: string;
  paying: boolean;
  /** When the status took effect, ms since epoch. */
  ts: number;
}

/** A payer at one provider (`customer_id`), per site. */
export interface Customer {
  site: string;
  provider: Provider;
  customer_id: string;
  /** The earliest countable payment. */
  first_payment: { id: string; ts: number } | null;
  /** The earliest attributed payment. */
  credit: CustomerCredit | null;
  /** A visitor id found in the customer's own metadata (Stripe customers). */
  metadata_visitor: string | null;
  /** By provider subscription id (provider text: a dict). */
  subscriptions: Record<string, SubscriptionState>;
  ver: number;
}

export function emptyCustomer(site: string, provider: Provider, customerId: string): Customer {
  return {
    site,
    provider,
    customer_id: customerId,
    first_payment: null,
    credit: null,
    metadata_visitor: null,
    subscriptions: dict(),
    ver: 0,
  };
}

/** Keeps the latest status per subscription (by the time it took effect); replays change nothing. */
export function withSubscription(customer: Customer, subscriptionId: string, state: SubscriptionState): Customer {
  const current = own(customer.subscriptions, subscriptionId);
  if (current && current.ts > state.ts) return customer;
  if (current && current.ts === state.ts && current.status === state.status) return customer;
  return { ...customer, subscriptions: dict([...Object.entries(customer.subscriptions), [subscriptionId, state]]) };
}
