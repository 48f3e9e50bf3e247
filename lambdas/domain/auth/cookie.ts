/** The session cookie's name (docs/app.md). */
export const SESSION_COOKIE = 'ff_session';

/** A session lasts 14 days from sign-in, then the user signs in again (docs/app.md "Sessions"). */
export const SESSION_TTL_MS = 14 * 86_400_000;

/**
 * Whether the cookie carries `Secure`: `always` in AWS (HTTPS only). `local`
 * (the local server): as the request came, so over HTTPS (a TLS proxy that
 * sends `X-Forwarded-Proto: https`) and not over the loopback's plain http.
 * Chromium and Firefox would accept a Secure cookie from http://localhost,
 * but Safari drops it (WebKit bug 281149; MDN browser-compat-data #28461);
 * docs/app.md "The cookie on http://localhost".
 */
export type CookieSecurity = 'always' | 'local';

export function cookieIsSecure(security: CookieSecurity, forwardedProto: string | undefined): boolean {
  return security === 'always' || forwardedProto?.split(',')[0]?.trim().toLowerCase() === 'https';
}

/**
 * The `Set-Cookie` value of a session (RFC 6265 §4.1): `HttpOnly` (no script
 * reads it), `SameSite=Lax` (not sent on cross-site POSTs), `Path=/`, and
 * `Max-Age` in seconds; an empty token with `maxAgeS` 0 deletes it.
 */
export function sessionCookie(token: string, maxAgeS: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${token}`,
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(maxAgeS))}`,
    'HttpOnly',
    ...(secure ? ['Secure'] : []),
    'SameSite=Lax',
  ].join('; ');
}

/** The `Set-Cookie` value that removes the session cookie. */
export const clearedSessionCookie = (secure: boolean): string => sessionCookie('', 0, secure);

/**
 * The session token from the request's cookies: API Gateway's payload 2.0
 * `cookies` array, or a raw `Cookie` header (RFC 6265 §5.4). The first
 * `ff_session` wins; null when there is none.
 */
export function sessionTokenOf(cookies: readonly string[] | undefined, header: string | undefined): string | null {
  return cookieValue(SESSION_COOKIE, cookies, header);
}

/** A cookie's value from API Gateway's `cookies` array or a raw `Cookie` header (RFC 6265 §5.4); the first wins, null for none. */
export function cookieValue(
  name: string,
  cookies: readonly string[] | undefined,
  header: string | undefined,
): string | null {
  for (const pair of [...(cookies ?? []), ...(header ?? '').split(';')]) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim() || null;
  }
  return null;
}
