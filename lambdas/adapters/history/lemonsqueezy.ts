import * as z from 'zod';
import {
  LEMONSQUEEZY_HISTORY_KINDS,
  lemonSqueezyCreatedMs,
  lemonSqueezyHistoryFacts,
  type LemonSqueezyHistoryKind,
} from '../../domain/payments/import-lemonsqueezy.js';
import { withinRange, type HistorySource } from '../../domain/payments/history-source.js';
import { getJson, rateLimitOf } from './api.js';

/** The API's address (https://docs.lemonsqueezy.com/api/getting-started). */
const API = 'https://api.lemonsqueezy.com';
/** Resources per page: the most `page[size]` takes (https://docs.lemonsqueezy.com/api/getting-started). */
const PAGE = 100;

/** A JSON:API list page: its resources and `meta.page` (https://docs.lemonsqueezy.com/api/getting-started). */
const pageSchema = z.object({
  data: z.array(z.unknown()),
  meta: z.object({ page: z.object({ currentPage: z.number().int(), lastPage: z.number().int() }) }),
});

/**
 * A Lemon Squeezy store's lists for `readHistory`, through the documented
 * list endpoints (`GET /v1/orders`, `/v1/subscription-invoices`,
 * `/v1/subscriptions`, JSON:API, `page[number]`/`page[size]`, optionally
 * `filter[store_id]`); the cursor is the next page number. The endpoints take
 * no date filter, so the range is applied to each resource's `created_at` as
 * it is read. A 429 is a rate limit to back off from: 300 requests a minute
 * (https://docs.lemonsqueezy.com/api/getting-started).
 * @throws HistoryApiError from `page` for an answer other than 2xx; ZodError for a page of another shape
 */
export function lemonSqueezySource(
  apiKey: string,
  api: URL | null,
  storeId?: string,
): HistorySource<LemonSqueezyHistoryKind> {
  return {
    kinds: LEMONSQUEEZY_HISTORY_KINDS,
    async page(kind, cursor, range) {
      const url = new URL(`/v1/${kind}`, api ?? API);
      url.searchParams.set('page[number]', cursor ?? '1');
      url.searchParams.set('page[size]', String(PAGE));
      if (storeId) url.searchParams.set('filter[store_id]', storeId);
      const page = pageSchema.parse(await getJson(url, apiKey, 'application/vnd.api+json'));
      const { currentPage, lastPage } = page.meta.page;
      return {
        objects: page.data.filter((r) => withinRange(lemonSqueezyCreatedMs(r), range)),
        next: currentPage < lastPage ? String(currentPage + 1) : null,
      };
    },
    facts: (kind, resource) => lemonSqueezyHistoryFacts(kind, resource),
    retryAfterMs: rateLimitOf,
  };
}
