import type { HttpResult } from './http.js';

/** `GET /health` (`docs/tracking.md`): 200 `ok` while the server runs. */
export async function healthHandler(): Promise<HttpResult> {
  return {
    statusCode: 200,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    body: 'ok',
  };
}
