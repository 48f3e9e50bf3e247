import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import * as z from 'zod';
import type { HttpEvent, HttpResult } from './http.js';

/**
 * The tracker's default event endpoint as it appears in the built script: the
 * string literal of `new URL('/api/event', script.src)` (tracker/src/v.ts),
 * resolved against the script's own URL in the browser.
 */
export const TRACKER_DEFAULT_ENDPOINT = '/api/event';

/** An absolute http(s) URL: a Lambda function URL (`https://<url-id>.lambda-url.<region>.on.aws/…`) in AWS. */
const eventUrlSchema = z.url({ protocol: /^https?$/ });

/**
 * The built tracker with its default event endpoint replaced by `eventUrl`,
 * so that a script served from one origin (the tracker's function URL, or the
 * HTTP API's `/v.js` for snippets installed before) posts its events to
 * another (the event function's URL). `new URL(absolute, base)` ignores the
 * base, so nothing else in the script changes, and `data-api` still wins.
 *
 * @throws Error when `eventUrl` is not an absolute http(s) URL, or when the
 *   script does not hold the default endpoint's literal exactly once (a tracker
 *   build this function no longer understands: refuse to serve rather than
 *   post events nowhere)
 */
export function withEventEndpoint(script: string, eventUrl: string): string {
  const url = eventUrlSchema.parse(eventUrl);
  const literal = JSON.stringify(TRACKER_DEFAULT_ENDPOINT);
  const parts = script.split(literal);
  if (parts.length !== 2)
    throw new Error(`the built tracker holds ${parts.length - 1} copies of ${literal}; expected exactly one`);
  return parts.join(JSON.stringify(url));
}

/**
 * `GET /v.js` (`docs/tracking.md`): the tracking script, with an ETag, a day of
 * caching plus a week of stale-while-revalidate (the URL carries no version,
 * so a new tracker must reach pages within a day), and brotli or gzip when
 * the client takes them. Answers API Gateway's and Lambda function URLs'
 * events alike (both payload format 2.0, headers lower-cased).
 *
 * @param script the built tracker (`buildTrackerSync()`), compressed once here
 * @param options.eventUrl where the script posts by default (`withEventEndpoint`);
 *   absent (`npm start`, tests): the script's own origin + `/api/event`
 * @throws Error at construction, as `withEventEndpoint` does
 */
export function createTrackerScriptHandler(
  script: string,
  options: { eventUrl?: string } = {},
): (event: HttpEvent) => Promise<HttpResult> {
  const served = options.eventUrl ? withEventEndpoint(script, options.eventUrl) : script;
  const raw = Buffer.from(served, 'utf8');
  const variants = { br: brotliCompressSync(raw), gzip: gzipSync(raw, { level: 9 }) };
  const etag = `"${createHash('sha256').update(raw).digest('base64url').slice(0, 27)}"`;
  const common = {
    'content-type': 'application/javascript; charset=utf-8',
    'cache-control': 'public, max-age=86400, stale-while-revalidate=604800',
    'access-control-allow-origin': '*',
    etag,
    vary: 'Accept-Encoding',
  };
  return async (event) => {
    const header = (name: string) => event.headers?.[name] ?? event.headers?.[name.toLowerCase()];
    if (
      header('if-none-match')
        ?.split(',')
        .some((tag) => tag.trim() === etag)
    ) {
      return { statusCode: 304, headers: common, body: '' };
    }
    const accept = header('accept-encoding') ?? '';
    const encoding = /\bbr\b/.test(accept) ? 'br' : /\bgzip\b/.test(accept) ? 'gzip' : undefined;
    if (!encoding) return { statusCode: 200, headers: common, body: served };
    return {
      statusCode: 200,
      headers: { ...common, 'content-encoding': encoding },
      body: variants[encoding].toString('base64'),
      isBase64Encoded: true,
    };
  };
}
