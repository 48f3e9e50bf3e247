/**
 * A Lemon Squeezy store's history as the webhooks would have told it
 * (`footfall import lemonsqueezy`, `docs/payments.md` "Importing a provider's
 * history"): each resource the API lists, in the state it is in now, stands
 * for the webhook events that state implies, and those go through the
 * webhook's own mapping (`lemonSqueezyProvider.facts`). A webhook delivers the
 * same JSON:API resource object the API lists (`data` of the event,
 * https://docs.lemonsqueezy.com/help/webhooks/webhook-requests).
 *
 * What the API cannot give back: the checkout's custom data, which Lemon
 * Squeezy puts only in a webhook's `meta.custom_data`
 * (https://docs.lemonsqueezy.com/help/checkout/passing-custom-data), so an
 * imported payment carries no visitor id.
 */
import * as z from 'zod';
import type { ProviderFacts } from './facts.js';
import { lemonSqueezyProvider } from './providers/lemonsqueezy.js';

/** The list endpoints a history import reads (`/v1/<kind>`), in the order it reads them. */
export const LEMONSQUEEZY_HISTORY_KINDS = ['orders', 'subscription-invoices', 'subscriptions'] as const;
export type LemonSqueezyHistoryKind = (typeof LEMONSQUEEZY_HISTORY_KINDS)[number];

/** The fields that say which events a resource's state implies (https://docs.lemonsqueezy.com/api). */
const resourceSchema = z.object({
  id: z.union([z.string(), z.number()]),
  attributes: z.object({
    status: z.string(),
    refunded_amount: z.number().nullish(),
    created_at: z.string(),
  }),
});
type Resource = z.infer<typeof resourceSchema>;

/** Orders and subscription invoices that moved money (`pending`, `void`, `failed` charged nothing we count). */
const CHARGED = new Set(['paid', 'partial_refund', 'refunded']);

/** A refund's event after the payment's: `refunded_amount` is cumulative, so one event states them all. */
const refunded = (r: Resource, event: string) => ((r.attributes.refunded_amount ?? 0) > 0 ? [event] : []);

/** Each kind's resource → the webhook events its state implies (https://docs.lemonsqueezy.com/help/webhooks/event-types). */
const IMPLIED: Readonly<Record<LemonSqueezyHistoryKind, (r: Resource) => string[]>> = {
  orders: (r) => (CHARGED.has(r.attributes.status) ? ['order_created', ...refunded(r, 'order_refunded')] : []),
  'subscription-invoices': (r) =>
    CHARGED.has(r.attributes.status)
      ? ['subscription_payment_success', ...refunded(r, 'subscription_payment_refunded')]
      : [],
  subscriptions: () => ['subscription_updated'],
};

/** When a listed resource was created, ms since epoch (UTC); null when it states no readable `created_at`. */
export function lemonSqueezyCreatedMs(resource: unknown): number | null {
  const parsed = resourceSchema.safeParse(resource);
  const ms = parsed.success ? Date.parse(parsed.data.attributes.created_at) : NaN;
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The facts a listed resource of `kind` stands for: the webhook events its
 * state implies (`IMPLIED`), each mapped by `lemonSqueezyProvider.facts` with
 * no custom data. A resource without an id, status or creation time (not one
 * the API returns) stands for nothing.
 * @throws WebhookPayloadError when the resource lacks what its event's mapping reads
 */
export function lemonSqueezyHistoryFacts(kind: LemonSqueezyHistoryKind, resource: unknown): ProviderFacts[] {
  const parsed = resourceSchema.safeParse(resource);
  if (!parsed.success) return [];
  return IMPLIED[kind](parsed.data).flatMap(
    (event_name) => lemonSqueezyProvider.facts({ meta: { event_name, custom_data: null }, data: resource }) ?? [],
  );
}
