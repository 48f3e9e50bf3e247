import { describe, expect, it } from 'vitest';
import { originProblem } from '../../lambdas/domain/auth/origin.js';
import {
  cookieIsSecure,
  clearedSessionCookie,
  sessionCookie,
  sessionTokenOf,
} from '../../lambdas/domain/auth/cookie.js';
import {
  SIGN_IN_LIMITS,
  addressGroup,
  attemptKey,
  attemptsIn,
  bucketExpiry,
  bucketStart,
  countedFrom,
  overLimit,
  retryAfterSeconds,
} from '../../lambdas/domain/auth/attempts.js';
import { hashPassword, passwordSchema, SCRYPT_PARAMS, verifyPassword } from '../../lambdas/domain/auth/password.js';
import { hashToken, looksLikeToken, newToken } from '../../lambdas/domain/auth/token.js';
import { periodStart } from '../../lambdas/services/account-settings.js';
import { clientAddress } from '../../lambdas/handlers/app.js';
import { httpApiEvent } from '../../local/api-gateway.js';

describe('origin check (CSRF, OWASP: standard headers and Fetch Metadata)', () => {
  const hosts = ['app.example.com', 'localhost:8787'];
  const cases: Array<[string, string | undefined, string | undefined, boolean]> = [
    // method, Origin, Sec-Fetch-Site, passes
    ['GET', undefined, undefined, true],
    ['GET', 'https://evil.test', 'cross-site', true],
    ['HEAD', 'https://evil.test', undefined, true],
    ['POST', 'https://app.example.com', 'same-origin', true],
    ['POST', 'http://localhost:8787', undefined, true],
    ['DELETE', undefined, 'same-origin', true],
    // Behind CloudFront the Host is the API's: the browser's Fetch Metadata decides.
    ['POST', 'https://d111.cloudfront.net', 'same-origin', true],
    ['POST', 'https://evil.test', undefined, false],
    ['POST', 'https://evil.test', 'cross-site', false],
    ['POST', 'https://app.example.com', 'cross-site', false],
    ['PUT', 'https://sub.app.example.com', 'same-site', false],
    ['PATCH', 'https://app.example.com.evil.test', undefined, false],
    ['POST', 'http://localhost:9999', undefined, false],
    ['POST', 'null', undefined, false],
    ['POST', 'file:///x', undefined, false],
    ['POST', undefined, undefined, false],
    ['DELETE', undefined, 'none', false],
  ];
  it.each(cases)('%s Origin=%s Sec-Fetch-Site=%s → passes %s', (method, origin, secFetchSite, passes) => {
    expect(originProblem({ method, origin, secFetchSite, hosts }) === null).toBe(passes);
  });
});

describe('session cookie', () => {
  it('is HttpOnly, SameSite=Lax, Path=/, with Max-Age in seconds; Secure as asked', () => {
    expect(sessionCookie('tok', 1209600, true)).toBe(
      'ff_session=tok; Path=/; Max-Age=1209600; HttpOnly; Secure; SameSite=Lax',
    );
    expect(sessionCookie('tok', 10.9, false)).toBe('ff_session=tok; Path=/; Max-Age=10; HttpOnly; SameSite=Lax');
    expect(clearedSessionCookie(true)).toBe('ff_session=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax');
  });
  it.each([
    ['always', undefined, true],
    ['always', 'http', true],
    ['local', undefined, false],
    ['local', 'http', false],
    ['local', 'https', true],
    ['local', 'https, http', true],
  ] as const)('Secure with %s and X-Forwarded-Proto %s: %s', (security, proto, secure) => {
    expect(cookieIsSecure(security, proto)).toBe(secure);
  });
  it.each([
    [['a=1', 'ff_session=abc'], undefined, 'abc'],
    [undefined, 'a=1; ff_session=xyz; b=2', 'xyz'],
    [['ff_session='], undefined, null],
    [['ff_sessionx=abc'], 'xff_session=abc', null],
    [undefined, undefined, null],
  ] as const)('token from cookies %j and header %s: %s', (cookies, header, token) => {
    expect(sessionTokenOf(cookies, header)).toBe(token);
  });
});

describe('sign-in attempt counters', () => {
  const now = Date.UTC(2026, 10, 23, 10, 7, 30);
  it('are kept per scope and value, lowercase, hashed', () => {
    expect(attemptKey('email', 'Ana@Example.com')).toBe(attemptKey('email', 'ana@example.com'));
    expect(attemptKey('email', 'ana@example.com')).toMatch(/^email#[0-9a-f]{64}$/);
    expect(attemptKey('address', 'ana@example.com')).not.toBe(attemptKey('email', 'ana@example.com'));
  });
  it('sum whole minute buckets covering at least the last 15 minutes, and no older one', () => {
    const at = (minutesAgo: number, n = 1) => ({ start: bucketStart(now - minutesAgo * 60_000), n });
    expect(countedFrom(now)).toBe(Date.UTC(2026, 10, 23, 9, 52));
    expect(attemptsIn([at(0, 2), at(14), at(15, 3)], now)).toBe(6);
    expect(attemptsIn([at(16, 5)], now)).toBe(0);
    expect(bucketExpiry(bucketStart(now))).toBe(Date.UTC(2026, 10, 23, 10, 23));
  });
  it('the limit-th attempt passes, the next one does not', () => {
    expect(overLimit('pair', SIGN_IN_LIMITS.pair.limit)).toBe(false);
    expect(overLimit('pair', SIGN_IN_LIMITS.pair.limit + 1)).toBe(true);
    expect(SIGN_IN_LIMITS.email.limit).toBeGreaterThan(SIGN_IN_LIMITS.pair.limit);
  });
  it('Retry-After: until enough of the oldest attempts leave the window', () => {
    const limit = SIGN_IN_LIMITS.pair.limit;
    // limit attempts 10 minutes ago and this refused one now: the old ones leave 6 minutes from the start of their minute.
    const buckets = [
      { start: bucketStart(now - 10 * 60_000), n: limit },
      { start: bucketStart(now), n: 1 },
    ];
    expect(retryAfterSeconds('pair', buckets, now)).toBe((bucketExpiry(buckets[0]!.start) - now) / 1000);
  });
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['[2001:db8:1:2::1]', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['::ffff:198.51.100.7', '198.51.100.7'],
    ['64:ff9b::198.51.100.7', '64:ff9b:0:0::/64'],
    ['not an address', 'not an address'],
  ])('address %s is limited as %s', (address, group) => {
    expect(addressGroup(address)).toBe(group);
  });
});

describe('tokens', () => {
  it('are 256 random bits, base64url, stored as SHA-256', () => {
    const t = newToken();
    expect(looksLikeToken(t)).toBe(true);
    expect(Buffer.from(t, 'base64url')).toHaveLength(32);
    expect(newToken()).not.toBe(t);
    expect(hashToken(t)).toMatch(/^[0-9a-f]{64}$/);
    expect(looksLikeToken(`${t}x`)).toBe(false);
    expect(looksLikeToken('abc')).toBe(false);
  });
});

describe('password hashing (scrypt, OWASP parameters)', () => {
  it('uses at least N=2^17, r=8, p=1 and verifies only the right password', async () => {
    expect(SCRYPT_PARAMS.N).toBeGreaterThanOrEqual(2 ** 17);
    expect(SCRYPT_PARAMS.r).toBeGreaterThanOrEqual(8);
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$17\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain('correct');
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
    // A fresh salt each time.
    expect(await hashPassword('correct horse battery', { N: 2 ** 10, r: 8, p: 1 })).not.toBe(
      await hashPassword('correct horse battery', { N: 2 ** 10, r: 8, p: 1 }),
    );
  });
  it('never matches a malformed stored hash', async () => {
    for (const stored of ['', 'scrypt$17$8$1$', 'bcrypt$x', 'scrypt$40$8$1$c2FsdA$a2V5'])
      expect(await verifyPassword('x', stored)).toBe(false);
  });
  it.each([
    ['short', false],
    ['ten chars!', true],
    ['x'.repeat(256), true],
    ['x'.repeat(257), false],
  ])('accepts %s as a new password: %s', (pw, ok) => {
    expect(passwordSchema.safeParse(pw).success).toBe(ok);
  });
});

describe('when a site last saw a visitor: the start of a local hour or day', () => {
  it.each([
    ['2026-03-10', 'UTC', '2026-03-10T00:00:00.000Z'],
    ['2026-03-10T15', 'UTC', '2026-03-10T15:00:00.000Z'],
    ['2026-11-23T10', 'Europe/Berlin', '2026-11-23T09:00:00.000Z'],
    // The day clocks spring forward: 03:00 CEST is 01:00 UTC.
    ['2026-03-29T03', 'Europe/Berlin', '2026-03-29T01:00:00.000Z'],
    ['2026-11-23T10', 'Asia/Kathmandu', '2026-11-23T04:15:00.000Z'],
    ['2026-11-23', 'America/New_York', '2026-11-23T05:00:00.000Z'],
  ])('%s in %s starts at %s', (period, tz, iso) => {
    expect(new Date(periodStart(period, tz)).toISOString()).toBe(iso);
  });
});

describe('the client address of the per-address sign-in limit', () => {
  const event = (headers: Record<string, string>) =>
    httpApiEvent({ method: 'POST', path: '/api/app/sign-in', headers, sourceIp: '130.176.1.2' });
  const secret = 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6';
  const viaCloudFront = { 'x-footfall-origin-secret': secret };
  it.each([
    [{}, secret, '130.176.1.2'],
    [{ ...viaCloudFront, 'cloudfront-viewer-address': '203.0.113.9:51234' }, secret, '203.0.113.9'],
    [{ ...viaCloudFront, 'cloudfront-viewer-address': '2001:db8::7:443' }, secret, '2001:db8::7'],
    // On the public execute-api URL a client sets the header itself: without CloudFront's secret it is ignored.
    [{ 'cloudfront-viewer-address': '203.0.113.9:51234' }, secret, '130.176.1.2'],
    [{ 'x-footfall-origin-secret': 'guess', 'cloudfront-viewer-address': '203.0.113.9:51234' }, secret, '130.176.1.2'],
    [{ 'x-footfall-origin-secret': '', 'cloudfront-viewer-address': '203.0.113.9:51234' }, secret, '130.176.1.2'],
    // Locally (no secret configured) nothing sets the header, so a client's own is ignored.
    [{ ...viaCloudFront, 'cloudfront-viewer-address': '203.0.113.9:51234' }, undefined, '130.176.1.2'],
  ])('headers %j, origin secret %s: %s', (headers, originSecret, address) => {
    expect(clientAddress(event(headers), originSecret)).toBe(address);
  });
});
