import { setTimeout as sleep } from 'node:timers/promises';
import type { HistoryPage, HistoryRange, HistorySource } from '../domain/payments/history-source.js';

/** Times one page is asked again in a row after a rate-limit answer the client's own retries did not absorb. */
export const RATE_LIMIT_RESUMES = 8;

export interface PageReadOptions {
  /** ms before the n-th ask in a row after a rate limit (1-based), at least the API's hint; default 1 s doubling to 32 s. */
  backoffMs?: (attempt: number) => number;
  /** Waits `ms` (tests pass a recording one); default a timer. */
  wait?: (ms: number) => Promise<unknown>;
}

/** The default back-off: 1 s, doubling, at most 32 s. */
export const defaultBackoffMs = (attempt: number): number => Math.min(32_000, 1000 * 2 ** (attempt - 1));

/**
 * One page of `kind` at `cursor` within `range`, shared by `footfall import <provider>` and the app's
 * import jobs (`docs/payments.md`, "Importing a provider's history"): after an error that
 * `source.retryAfterMs` calls a rate limit, the page is asked again after the longer of the API's
 * hint (`Retry-After`) and `backoffMs`, up to `RATE_LIMIT_RESUMES` times in a row.
 * @throws whatever `source.page` throws for an answer other than a rate limit, or the last rate limit
 */
export async function readPage<K extends string>(
  source: HistorySource<K>,
  kind: K,
  cursor: string | null,
  range: HistoryRange,
  options: PageReadOptions = {},
): Promise<HistoryPage> {
  const backoff = options.backoffMs ?? defaultBackoffMs;
  const wait = options.wait ?? sleep;
  for (let resumes = 0; ;) {
    try {
      return await source.page(kind, cursor, range);
    } catch (error) {
      const hint = source.retryAfterMs(error);
      if (hint === null || ++resumes > RATE_LIMIT_RESUMES) throw error;
      await wait(Math.max(hint, backoff(resumes)));
    }
  }
}
