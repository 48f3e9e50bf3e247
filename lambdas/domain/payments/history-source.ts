import * as z from 'zod';
import { WebhookPayloadError } from './providers/index.js';
import type { ProviderFacts } from './facts.js';

/** The created range asked for, Unix seconds: at or after `since`, before `until`; null is unbounded. */
export interface HistoryRange {
  since: number | null;
  until: number | null;
}

/** One page of a list: its objects within the range and the cursor of the next page (null: the list ended). */
export interface HistoryPage {
  objects: readonly unknown[];
  next: string | null;
}

/**
 * A provider's history as lists of objects (`footfall import <provider>`): what `readHistory` pages through.
 * `K` names the lists, read in the order of `kinds`.
 */
export interface HistorySource<K extends string> {
  kinds: readonly K[];
  /** The page of `kind` at `cursor` (null: the first page), only objects created within `range`. */
  page(kind: K, cursor: string | null, range: HistoryRange): Promise<HistoryPage>;
  /**
   * The facts the webhooks of an object's current state would have stated.
   * @throws WebhookPayloadError when the object lacks what its event's mapping reads
   */
  facts(kind: K, object: unknown): ProviderFacts[];
  /** ms to wait before asking a page again after `error` when it is a rate limit (0: no hint, back off); null otherwise. */
  retryAfterMs(error: unknown): number | null;
}

/** Whether a time (ms since epoch, null: unknown) falls within `range` (Unix seconds); an unknown time is kept. */
export function withinRange(ms: number | null, range: HistoryRange): boolean {
  if (ms === null) return true;
  return (range.since === null || ms >= range.since * 1000) && (range.until === null || ms < range.until * 1000);
}

/** What a page's objects map to: the facts in order, objects that carry none, and the objects a mapping refused. */
export interface MappedPage {
  facts: ProviderFacts[];
  /** Objects whose state states nothing to import (an unpaid checkout session, a customer without a visitor). */
  skipped: number;
  /** One line per refused object: `<kind> <id>: <event type>: <what it lacks>`. */
  invalid: string[];
}

const idSchema = z.object({ id: z.union([z.string(), z.number()]) });

/**
 * Maps a page's objects through `source.facts` (the provider's webhook mapping), keeping going past an
 * object the mapping refuses (`WebhookPayloadError`): it is named in `invalid`, and the rest imported.
 * @throws whatever else `source.facts` throws
 */
export function mapPage<K extends string>(
  source: Pick<HistorySource<K>, 'facts'>,
  kind: K,
  objects: readonly unknown[],
): MappedPage {
  const out: MappedPage = { facts: [], skipped: 0, invalid: [] };
  for (const object of objects) {
    try {
      const facts = source.facts(kind, object);
      const carries = facts.some((f) => f.payments.length + f.customers.length + f.subscriptions.length > 0);
      if (!carries) out.skipped++;
      out.facts.push(...facts);
    } catch (error) {
      if (!(error instanceof WebhookPayloadError)) throw error;
      const id = idSchema.safeParse(object);
      out.invalid.push(`${kind} ${id.success ? id.data.id : '?'}: ${error.eventType}: ${error.detail}`);
    }
  }
  return out;
}
