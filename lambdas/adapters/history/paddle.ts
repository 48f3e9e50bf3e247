import * as z from 'zod';
import {
  PADDLE_HISTORY_KINDS,
  paddleCreatedMs,
  paddleHistoryFacts,
  type PaddleHistoryKind,
} from '../../domain/payments/import-paddle.js';
import { withinRange, type HistorySource } from '../../domain/payments/history-source.js';
import { getJson, rateLimitOf } from './api.js';

/** The API's addresses, live and sandbox (https://developer.paddle.com/api-reference/overview). */
const API = 'https://api.paddle.com';
const SANDBOX_API = 'https://sandbox-api.paddle.com';
/** Entities per page: the most `per_page` takes; the API answers with fewer where a list's maximum is lower (https://developer.paddle.com/api-reference/about/pagination). */
const PAGE = 200;

/** Each list's filters: completed transactions (the only ones `transaction.completed` reports), refund adjustments. */
const FILTERS: Readonly<Record<PaddleHistoryKind, Readonly<Record<string, string>>>> = {
  transactions: { status: 'completed' },
  adjustments: { action: 'refund' },
  subscriptions: {},
};

/** A list page (https://developer.paddle.com/api-reference/about/pagination). */
const pageSchema = z.object({
  data: z.array(z.object({ id: z.string() }).passthrough()),
  meta: z.object({ pagination: z.object({ has_more: z.boolean() }) }),
});

/**
 * A Paddle Billing account's lists for `readHistory`, through the documented
 * list endpoints (`GET /transactions`, `/adjustments`, `/subscriptions`,
 * oldest id first, `per_page` 200); the cursor is the last entity's id
 * (`after`), as Paddle's pagination is. Transactions are filtered by
 * `created_at[GTE]`/`[LT]` at the API; the other lists take no date filter,
 * so the range is applied to each entity's `created_at` as it is read. A 429
 * is a rate limit to back off from, at least its `Retry-After` (240 requests
 * a minute an IP: https://developer.paddle.com/api-reference/about/rate-limiting).
 * @throws HistoryApiError from `page` for an answer other than 2xx; ZodError for a page of another shape
 */
export function paddleSource(apiKey: string, api: URL | null): HistorySource<PaddleHistoryKind> {
  const base = api ?? (apiKey.startsWith('pdl_sdbx_') ? SANDBOX_API : API);
  return {
    kinds: PADDLE_HISTORY_KINDS,
    async page(kind, cursor, range) {
      const url = new URL(`/${kind}`, base);
      url.searchParams.set('per_page', String(PAGE));
      for (const [k, v] of Object.entries(FILTERS[kind])) url.searchParams.set(k, v);
      if (kind === 'transactions' && range.since !== null)
        url.searchParams.set('created_at[GTE]', new Date(range.since * 1000).toISOString());
      if (kind === 'transactions' && range.until !== null)
        url.searchParams.set('created_at[LT]', new Date(range.until * 1000).toISOString());
      if (cursor) url.searchParams.set('after', cursor);
      const page = pageSchema.parse(await getJson(url, apiKey));
      const last = page.data.at(-1);
      return {
        objects: page.data.filter((e) => withinRange(paddleCreatedMs(e), range)),
        next: page.meta.pagination.has_more && last ? last.id : null,
      };
    },
    facts: (kind, entity) => paddleHistoryFacts(kind, entity),
    retryAfterMs: rateLimitOf,
  };
}
