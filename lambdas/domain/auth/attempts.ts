import { createHash } from 'node:crypto';

/**
 * Sign-in attempt limits (OWASP Authentication Cheat Sheet, "Protect Against
 * Automated Attacks"; docs/security.md): at most `limit` attempts per key in a
 * fixed window of `windowMs`, counted before the password is checked, so a
 * burst in parallel is limited as well as one in series. Per account (the
 * email, known or not, so an unknown email is limited like a known one) and
 * per client address (one address trying many emails).
 */
export const SIGN_IN_LIMITS = {
  email: { limit: 10, windowMs: 15 * 60_000 },
  address: { limit: 50, windowMs: 15 * 60_000 },
} as const;

export type AttemptScope = keyof typeof SIGN_IN_LIMITS;

/** One counter: its stored key (the scope and a SHA-256 of the value, so no email or IP is stored in clear), window start and expiry (ms). */
export interface AttemptWindow {
  key: string;
  windowStart: number;
  expiresAt: number;
}

/** The counter of `value` in `scope` for the window holding `now` (ms). */
export function attemptWindow(scope: AttemptScope, value: string, now: number): AttemptWindow {
  const { windowMs } = SIGN_IN_LIMITS[scope];
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const hash = createHash('sha256').update(value.toLowerCase(), 'utf8').digest('hex');
  return { key: `${scope}#${hash}`, windowStart, expiresAt: windowStart + windowMs };
}

/** True when the `count`-th attempt of a window (counting this one) is over the scope's limit. */
export function overLimit(scope: AttemptScope, count: number): boolean {
  return count > SIGN_IN_LIMITS[scope].limit;
}

/** Seconds until the window of `w` ends: the `Retry-After` of a refused attempt (RFC 9110 §10.2.3). */
export function retryAfterSeconds(w: AttemptWindow, now: number): number {
  return Math.max(1, Math.ceil((w.expiresAt - now) / 1000));
}
