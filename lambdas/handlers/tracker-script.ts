import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { HttpEvent, HttpResult } from './http.js';

/**
 * `GET /v.js` (spec §4.4): the tracking script, with an ETag, a day of
 * caching plus a week of stale-while-revalidate (the URL carries no version,
 * so a new tracker must reach pages within a day), and brotli or gzip when
 * the client takes them.
 *
 * @param script the built tracker (`buildTrackerSync()`), compressed once here
 */
export function createTrackerScriptHandler(script: string): (event: HttpEvent) => Promise<HttpResult> {
  const raw = Buffer.from(script, 'utf8');
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
    if (header('if-none-match')?.split(',').some((tag) => tag.trim() === etag)) {
      return { statusCode: 304, headers: common, body: '' };
    }
    const accept = header('accept-encoding') ?? '';
    const encoding = /\bbr\b/.test(accept) ? 'br' : /\bgzip\b/.test(accept) ? 'gzip' : undefined;
    if (!encoding) return { statusCode: 200, headers: common, body: script };
    return {
      statusCode: 200,
      headers: { ...common, 'content-encoding': encoding },
      body: variants[encoding].toString('base64'),
      isBase64Encoded: true,
    };
  };
}
