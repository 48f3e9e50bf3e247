/**
 * A GET of a provider's list endpoint with the API key as a Bearer token, for
 * the history imports that read an API through its documented endpoints
 * rather than an SDK (`docs/payments.md` "Importing a provider's history" says
 * why).
 */

/** An answer other than 2xx: its status, the provider's words, and a 429's `Retry-After` in ms (RFC 9110 §10.2.3). */
export class HistoryApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }
}

/** `Retry-After` as ms: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * GETs `url` with `Authorization: Bearer <apiKey>` and `accept`, and returns its JSON body.
 * @throws HistoryApiError for an answer other than 2xx (a 401/403: the key; a 429: `retryAfterMs`)
 */
export async function getJson(url: URL, apiKey: string, accept = 'application/json'): Promise<unknown> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}`, accept } });
  if (!res.ok) {
    const body = (await res.text()).slice(0, 300);
    throw new HistoryApiError(
      res.status,
      `${url.hostname} answered ${res.status} to GET ${url.pathname}: ${body}`,
      retryAfterMs(res.headers.get('retry-after'), Date.now()),
    );
  }
  return (await res.json()) as unknown;
}

/** A source's `retryAfterMs`: a 429's hint (0 without one), null for any other error. */
export function rateLimitOf(error: unknown): number | null {
  return error instanceof HistoryApiError && error.status === 429 ? (error.retryAfterMs ?? 0) : null;
}
