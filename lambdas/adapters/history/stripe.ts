import { Stripe } from 'stripe';
import {
  STRIPE_HISTORY_KINDS,
  stripeHistoryFacts,
  type StripeHistoryKind,
} from '../../domain/payments/import-stripe.js';
import type { HistorySource } from '../../domain/payments/history-source.js';

/** Objects per list page: the most the Stripe API returns (https://docs.stripe.com/api/pagination). */
const PAGE = 100;

type ListParams = Stripe.PaginationParams & { created?: Stripe.RangeQueryParam };

/** Each kind's list call: one page (`starting_after` is the cursor) through the `stripe` package. */
const LISTS: Readonly<
  Record<
    StripeHistoryKind,
    (stripe: Stripe, params: ListParams) => Promise<{ data: { id: string }[]; has_more: boolean }>
  >
> = {
  customer: (s, p) => s.customers.list(p),
  subscription: (s, p) => s.subscriptions.list({ ...p, status: 'all' }),
  checkout_session: (s, p) => s.checkout.sessions.list(p),
  payment_intent: (s, p) => s.paymentIntents.list(p),
  invoice: (s, p) => s.invoices.list(p),
  invoice_payment: (s, p) => s.invoicePayments.list({ ...p, status: 'paid' }),
  charge: (s, p) => s.charges.list(p),
};

/**
 * A Stripe account's lists for `readHistory`: every list of
 * `STRIPE_HISTORY_KINDS` through the `stripe` package, 100 objects a page,
 * newest first, within `created[gte]`/`created[lt]`; the cursor is the last
 * object read (`starting_after`). The client retries what Stripe says to
 * (`maxNetworkRetries`); a 429 left after those is a rate limit to back off from
 * (https://docs.stripe.com/rate-limits).
 * @throws Stripe.errors.StripeError from `page` for an answer other than a rate limit (a key without read access: StripePermissionError)
 */
export function stripeSource(stripe: Stripe): HistorySource<StripeHistoryKind> {
  return {
    kinds: STRIPE_HISTORY_KINDS,
    async page(kind, cursor, range) {
      const created: Stripe.RangeQueryParam = {
        ...(range.since !== null ? { gte: range.since } : {}),
        ...(range.until !== null ? { lt: range.until } : {}),
      };
      const list = await LISTS[kind](stripe, {
        limit: PAGE,
        ...(Object.keys(created).length > 0 ? { created } : {}),
        ...(cursor ? { starting_after: cursor } : {}),
      });
      const last = list.data.at(-1);
      return { objects: list.data, next: list.has_more && last ? last.id : null };
    },
    facts: (kind, object) => stripeHistoryFacts(kind, object),
    retryAfterMs: (error) => (error instanceof Stripe.errors.StripeRateLimitError ? 0 : null),
  };
}
