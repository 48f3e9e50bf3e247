import { createHash } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Sign-in attempt limits (OWASP Authentication Cheat Sheet, "Login
 * Throttling" and "Account Lockout"; the rules and their reasons are in
 * docs/security.md). Three counters, each over a sliding window of
 * `WINDOW_MS`:
 *
 * - `pair`: one email from one address group; the lowest limit, so one
 *   attacker who knows an email can use up only this, never the owner's
 *   sign-ins from elsewhere;
 * - `email`: every address together, higher (a brute force spread over many
 *   addresses); a successful sign-in resets it and the pair's;
 * - `address`: one address group over every email (password spraying).
 *
 * An attempt is counted before the password is checked (a parallel burst is
 * limited like a serial one); a refused attempt is not counted, so hammering
 * while limited does not extend the limit.
 */
export const SIGN_IN_LIMITS = {
  pair: { limit: 10 },
  email: { limit: 100 },
  address: { limit: 100 },
  /** A shared link's password, over every address (its pair is the link's id with one address group). */
  link: { limit: 100 },
} as const;

export type AttemptScope = keyof typeof SIGN_IN_LIMITS;

/** The sliding window every limit counts over: 15 minutes (ms). */
export const WINDOW_MS = 15 * 60_000;
/** Counters are kept per minute; a window sums the buckets that overlap it (ms). */
export const BUCKET_MS = 60_000;

/** One bucket of a counter as stored: its start (ms) and the attempts counted in it. */
export interface AttemptBucket {
  start: number;
  n: number;
}

/**
 * The stored key of a counter: the scope and a SHA-256 of the value
 * (lowercase), so no email or address is stored in clear.
 */
export function attemptKey(scope: AttemptScope, value: string): string {
  return `${scope}#${createHash('sha256').update(value.toLowerCase(), 'utf8').digest('hex')}`;
}

/** The start of the bucket holding `now` (ms). */
export const bucketStart = (now: number) => Math.floor(now / BUCKET_MS) * BUCKET_MS;

/** When a bucket starting at `start` can no longer count toward any window: its TTL (ms). */
export const bucketExpiry = (start: number) => start + BUCKET_MS + WINDOW_MS;

/**
 * The first bucket a window ending at `now` sums (ms). Buckets are counted
 * whole, so the sum covers at least the last `WINDOW_MS`: no span of
 * `WINDOW_MS` ever admits more than the limit, wherever it starts (a
 * clock-aligned fixed window admits twice the limit across its boundary).
 */
export const countedFrom = (now: number) => bucketStart(now - WINDOW_MS);

/** The attempts of `buckets` in the window ending at `now`. */
export function attemptsIn(buckets: readonly AttemptBucket[], now: number): number {
  const from = countedFrom(now);
  return buckets.reduce((sum, b) => (b.start >= from ? sum + b.n : sum), 0);
}

/** True when the `count`-th attempt of a window (counting this one) is over the scope's limit. */
export function overLimit(scope: AttemptScope, count: number): boolean {
  return count > SIGN_IN_LIMITS[scope].limit;
}

/**
 * Seconds until enough of the counted attempts (this refused one excluded)
 * leave the window for one more to be admitted: the `Retry-After` of a 429
 * (RFC 9110 §10.2.3), at least 1.
 */
export function retryAfterSeconds(scope: AttemptScope, buckets: readonly AttemptBucket[], now: number): number {
  const from = countedFrom(now);
  const counted = [...buckets].filter((b) => b.start >= from && b.n > 0).sort((a, b) => a.start - b.start);
  const excess = counted.reduce((s, b) => s + b.n, 0) - SIGN_IN_LIMITS[scope].limit;
  let aged = 0;
  for (const b of counted) {
    aged += b.n;
    // The bucket leaves the sum once countedFrom(t) passes its start.
    if (aged >= excess) return Math.max(1, Math.ceil((bucketExpiry(b.start) - now) / 1000));
  }
  return Math.max(1, Math.ceil(WINDOW_MS / 1000));
}

/**
 * The group an address is limited by: an IPv4 address itself; for IPv6, its
 * /64 (`2001:db8:1:2::/64`), the prefix one subscriber is usually given
 * (RFC 6177 §3), so the 2^64 addresses of one network count as one; an
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as its IPv4 address. A value
 * that is no IP address is its own group.
 */
export function addressGroup(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return address;
  const hextets = expandIPv6(bare);
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    return [hextets[6]! >> 8, hextets[6]! & 255, hextets[7]! >> 8, hextets[7]! & 255].join('.');
  }
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` and a dotted IPv4 tail expanded). */
function expandIPv6(address: string): number[] {
  const groups = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number);
          return [(a! << 8) | b!, (c! << 8) | d!];
        });
  const [head = '', tail] = address.split('::');
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
