/**
 * A Polar organization's history as the webhooks would have told it
 * (`footfall import polar`, `docs/payments.md` "Importing a provider's
 * history"): each object the API lists, in the state it is in now, stands for
 * the webhook events that state implies, and those go through the webhook's
 * own mapping (`polarProvider.facts`). A webhook's `data` is the object as the
 * API returns it (https://polar.sh/docs/integrate/webhooks/events), with its
 * `metadata` and its customer's, where the visitor id travels.
 */
import * as z from 'zod';
import type { ProviderFacts } from './facts.js';
import { polarProvider } from './providers/polar.js';

/** The list endpoints a history import reads (`/v1/<kind>/`), in the order it reads them. */
export const POLAR_HISTORY_KINDS = ['orders', 'subscriptions'] as const;
export type PolarHistoryKind = (typeof POLAR_HISTORY_KINDS)[number];

/** The fields that say which events an object's state implies (https://polar.sh/docs/api-reference). */
const objectSchema = z.object({
  id: z.string(),
  status: z.string(),
  refunded_amount: z.number().nullish(),
  created_at: z.string(),
  modified_at: z.string().nullish(),
});
type PolarObject = z.infer<typeof objectSchema>;

/** Orders that were paid (`pending` and `void` ones moved no money). */
const PAID = new Set(['paid', 'partially_refunded', 'refunded']);

/** A state's webhook event: its type and time (ISO 8601). */
type Implied = { type: string; timestamp: string };

/** Each kind's object → the webhook events its state implies (https://polar.sh/docs/integrate/webhooks/events). */
const IMPLIED: Readonly<Record<PolarHistoryKind, (o: PolarObject) => Implied[]>> = {
  // Paid as it was created; `refunded_amount` is cumulative, so one refund event states every refund.
  orders: (o) =>
    PAID.has(o.status)
      ? [
          { type: 'order.paid', timestamp: o.created_at },
          ...((o.refunded_amount ?? 0) > 0
            ? [{ type: 'order.refunded', timestamp: o.modified_at ?? o.created_at }]
            : []),
        ]
      : [],
  subscriptions: (o) => [{ type: 'subscription.updated', timestamp: o.modified_at ?? o.created_at }],
};

/** When a listed object was created, ms since epoch (UTC); null when it states no readable `created_at`. */
export function polarCreatedMs(object: unknown): number | null {
  const parsed = objectSchema.safeParse(object);
  const ms = parsed.success ? Date.parse(parsed.data.created_at) : NaN;
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The facts a listed object of `kind` stands for: the webhook events its
 * state implies (`IMPLIED`), each mapped by `polarProvider.facts`. An object
 * without an id, status or creation time (not one the API returns) stands for
 * nothing.
 * @throws WebhookPayloadError when the object lacks what its event's mapping reads
 */
export function polarHistoryFacts(kind: PolarHistoryKind, object: unknown): ProviderFacts[] {
  const parsed = objectSchema.safeParse(object);
  if (!parsed.success) return [];
  return IMPLIED[kind](parsed.data).flatMap(
    ({ type, timestamp }) => polarProvider.facts({ type, timestamp, data: object }) ?? [],
  );
}
