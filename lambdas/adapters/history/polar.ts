import * as z from 'zod';
import {
  POLAR_HISTORY_KINDS,
  polarCreatedMs,
  polarHistoryFacts,
  type PolarHistoryKind,
} from '../../domain/payments/import-polar.js';
import { withinRange, type HistorySource } from '../../domain/payments/history-source.js';
import { getJson, rateLimitOf } from './api.js';

/** The API's address (https://polar.sh/docs/api-reference/introduction). */
const API = 'https://api.polar.sh';
/** Objects per page: the most `limit` takes (https://polar.sh/docs/api-reference/orders/list). */
const PAGE = 100;

/** Each list's order: orders oldest first, so that orders made during the import land on later pages. */
const SORTING: Readonly<Record<PolarHistoryKind, string | null>> = { orders: 'created_at', subscriptions: null };

/** A list page (https://polar.sh/docs/api-reference/orders/list): its items and page count. */
const pageSchema = z.object({
  items: z.array(z.unknown()),
  pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }),
});

/**
 * A Polar organization's lists for `readHistory`, through the documented
 * list endpoints (`GET /v1/orders/`, `/v1/subscriptions/`, `page`/`limit`
 * 100); the cursor is the next page number. The endpoints take no creation
 * date filter, so the range is applied to each object's `created_at` as it is
 * read. A 429 is a rate limit to back off from, at least its `Retry-After`
 * (https://polar.sh/docs/api-reference/rate-limits).
 * @throws HistoryApiError from `page` for an answer other than 2xx; ZodError for a page of another shape
 */
export function polarSource(token: string, api: URL | null): HistorySource<PolarHistoryKind> {
  return {
    kinds: POLAR_HISTORY_KINDS,
    async page(kind, cursor, range) {
      const url = new URL(`/v1/${kind}/`, api ?? API);
      const number = Number(cursor ?? '1');
      url.searchParams.set('page', String(number));
      url.searchParams.set('limit', String(PAGE));
      const sorting = SORTING[kind];
      if (sorting) url.searchParams.set('sorting', sorting);
      const page = pageSchema.parse(await getJson(url, token));
      return {
        objects: page.items.filter((o) => withinRange(polarCreatedMs(o), range)),
        next: number < page.pagination.max_page ? String(number + 1) : null,
      };
    },
    facts: (kind, object) => polarHistoryFacts(kind, object),
    retryAfterMs: rateLimitOf,
  };
}
