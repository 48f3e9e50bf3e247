/**
 * A Paddle Billing account's history as the webhooks would have told it
 * (`footfall import paddle`, `docs/payments.md` "Importing a provider's
 * history"): each entity the API lists, in the state it is in now, stands for
 * the webhook events that state implies, and those go through the webhook's
 * own mapping (`paddleProvider.facts`). A notification's `data` is the entity
 * as the API returns it (https://developer.paddle.com/webhooks/overview), so
 * `custom_data`, where the visitor id travels, comes back from the API too.
 */
import * as z from 'zod';
import type { ProviderFacts } from './facts.js';
import { paddleProvider } from './providers/paddle.js';

/** The list endpoints a history import reads (`/<kind>`), in the order it reads them. */
export const PADDLE_HISTORY_KINDS = ['transactions', 'adjustments', 'subscriptions'] as const;
export type PaddleHistoryKind = (typeof PADDLE_HISTORY_KINDS)[number];

/** The fields that say which events an entity's state implies (https://developer.paddle.com/api-reference/overview). */
const entitySchema = z.object({
  id: z.string(),
  status: z.string(),
  action: z.string().nullish(),
  created_at: z.string(),
  updated_at: z.string().nullish(),
  billed_at: z.string().nullish(),
});
type Entity = z.infer<typeof entitySchema>;

/** A state's notification: its type and time (ISO 8601). */
type Implied = { type: string; at: string };

/** Each kind's entity → the notifications its state implies (https://developer.paddle.com/webhooks/overview). */
const IMPLIED: Readonly<Record<PaddleHistoryKind, (e: Entity) => Implied[]>> = {
  // Completed: paid and processed; the mapping takes the capture time from `payments`.
  transactions: (e) =>
    e.status === 'completed' ? [{ type: 'transaction.completed', at: e.billed_at ?? e.created_at }] : [],
  // The mapping keeps approved refunds only; `adjustment.updated` is sent when one is approved.
  adjustments: (e) => [{ type: 'adjustment.updated', at: e.updated_at ?? e.created_at }],
  subscriptions: (e) => [{ type: 'subscription.updated', at: e.updated_at ?? e.created_at }],
};

/** When a listed entity was created, ms since epoch (UTC); null when it states no readable `created_at`. */
export function paddleCreatedMs(entity: unknown): number | null {
  const parsed = entitySchema.safeParse(entity);
  const ms = parsed.success ? Date.parse(parsed.data.created_at) : NaN;
  return Number.isNaN(ms) ? null : ms;
}

/**
 * The facts a listed entity of `kind` stands for: the notifications its state
 * implies (`IMPLIED`), each mapped by `paddleProvider.facts`. Event ids are
 * `history:<entity id>:<event type>`. An entity without an id, status or
 * creation time (not one the API returns) stands for nothing.
 * @throws WebhookPayloadError when the entity lacks what its event's mapping reads
 */
export function paddleHistoryFacts(kind: PaddleHistoryKind, entity: unknown): ProviderFacts[] {
  const parsed = entitySchema.safeParse(entity);
  if (!parsed.success) return [];
  return IMPLIED[kind](parsed.data).flatMap(
    ({ type, at }) =>
      paddleProvider.facts({
        event_id: `history:${parsed.data.id}:${type}`,
        event_type: type,
        occurred_at: at,
        data: entity,
      }) ?? [],
  );
}
