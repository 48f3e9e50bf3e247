import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoAuthDeps } from '../../lambdas/wiring/app-deps.js';
import { DynamoUserStore } from '../../lambdas/adapters/dynamo/user-store.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { SIGN_IN_LIMITS, WINDOW_MS, BUCKET_MS } from '../../lambdas/domain/auth/attempts.js';
import { hashPassword, verifyPassword } from '../../lambdas/domain/auth/password.js';
import { TooManyRequestsError } from '../../lambdas/domain/errors.js';
import { signIn } from '../../lambdas/services/auth.js';
import { memoryTable } from '../support/dynamo.js';
import { CHEAP_SCRYPT } from '../support/app-client.js';

/**
 * The sign-in limits (OWASP Authentication Cheat Sheet, docs/security.md)
 * through the real service and store on dynalite, with a clock the test
 * moves: success resets, /64 grouping, the window boundary, and no lockout
 * of an owner by someone who only knows the email.
 */
const PAIR = SIGN_IN_LIMITS.pair.limit;
const PASSWORD = 'right-password-1';

describe('sign-in limits', () => {
  let db: { conn: DynamoConnection; close(): Promise<void> };
  let now = Date.UTC(2026, 10, 23, 10, 0);
  let users = 0;
  beforeAll(async () => {
    db = await memoryTable();
  });
  afterAll(async () => db.close());

  const deps = () => ({
    ...dynamoAuthDeps(db.conn, () => now),
    passwords: { hash: (p: string) => hashPassword(p, CHEAP_SCRYPT), verify: verifyPassword },
  });
  const newUser = async () => {
    const email = `user${++users}@acme.test`;
    const store = new DynamoUserStore(db.conn);
    await store.add(email, 'acme', new Date(now), 'owner');
    await store.setPassword(email, await hashPassword(PASSWORD, CHEAP_SCRYPT));
    return email;
  };
  /** One attempt: 200, 401 or 429. */
  const attempt = async (email: string, password: string, address: string) => {
    try {
      await signIn(deps(), { email, password }, address);
      return 200;
    } catch (e) {
      if (e instanceof TooManyRequestsError) return 429;
      return 401;
    }
  };
  const wrong = (email: string, address: string, n: number) =>
    (async () => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push(await attempt(email, `wrong-${i}-password`, address));
      return out;
    })();

  it('success resets the email: a normal click-through of many sign-ins never locks the right password out', async () => {
    const email = await newUser();
    for (let i = 0; i < 3 * PAIR; i++) expect(await attempt(email, PASSWORD, '192.0.2.1'), `sign-in ${i}`).toBe(200);
    // Nine typos, then the right password, again and again: each success starts the count over.
    for (let round = 0; round < 3; round++) {
      expect(await wrong(email, '192.0.2.1', PAIR - 1)).toEqual(Array(PAIR - 1).fill(401));
      expect(await attempt(email, PASSWORD, '192.0.2.1')).toBe(200);
    }
    // Without the success, the next attempt past the limit is refused, the right password included.
    expect(await wrong(email, '192.0.2.1', PAIR)).toEqual(Array(PAIR).fill(401));
    expect(await attempt(email, PASSWORD, '192.0.2.1')).toBe(429);
  });

  it.each([
    ['another address in the same IPv6 /64', '2001:db8:7:8::1', '2001:db8:7:8:ffff:1:2:3', 429],
    ['the same /64 written in full', '2001:db8:7:9::1', '2001:0db8:0007:0009:0000:0000:0000:0002', 429],
    ['the next /64', '2001:db8:7:a::1', '2001:db8:7:b::1', 401],
    ['an IPv4-mapped IPv6 address and its IPv4 address', '::ffff:198.51.100.7', '198.51.100.7', 429],
    ['the next IPv4 address', '198.51.100.8', '198.51.100.9', 401],
  ])('%s: after the limit from %s, %s answers %i', async (_case, first, second, expected) => {
    const email = await newUser();
    // Each failure from a different address of the first's group (or the address itself for IPv4).
    const addresses = Array.from({ length: PAIR }, (_, i) =>
      first.includes(':') && !first.includes('.') ? first.replace(/1$/, String(i + 1)) : first,
    );
    for (const a of addresses) expect(await attempt(email, 'wrong-password-x', a)).toBe(401);
    expect(await attempt(email, 'wrong-password-y', second)).toBe(expected);
  });

  it('the window slides: the limit spent just before a clock-aligned boundary still holds just after it, until a full window has passed', async () => {
    const email = await newUser();
    const boundary = Math.ceil(now / WINDOW_MS) * WINDOW_MS + WINDOW_MS;
    now = boundary - 1_000;
    expect(await wrong(email, '192.0.2.20', PAIR)).toEqual(Array(PAIR).fill(401));
    now = boundary + 1_000; // a fixed window would start counting again here
    expect(await attempt(email, PASSWORD, '192.0.2.20')).toBe(429);
    now = boundary - 1_000 + WINDOW_MS - BUCKET_MS; // still within 15 minutes of the failures
    expect(await attempt(email, PASSWORD, '192.0.2.20')).toBe(429);
    now = boundary - 1_000 + WINDOW_MS + BUCKET_MS; // every failure is now more than 15 minutes old
    expect(await attempt(email, PASSWORD, '192.0.2.20')).toBe(200);
  });

  it('refused attempts are not counted: hammering while limited does not extend the limit', async () => {
    const email = await newUser();
    const start = now;
    expect(await wrong(email, '192.0.2.30', PAIR)).toEqual(Array(PAIR).fill(401));
    for (let i = 0; i < 5; i++) {
      now = start + i * 3 * 60_000;
      expect(await wrong(email, '192.0.2.30', 10)).toEqual(Array(10).fill(429));
    }
    now = start + WINDOW_MS + BUCKET_MS;
    expect(await attempt(email, PASSWORD, '192.0.2.30')).toBe(200);
  });

  it('lockout resistance: someone who knows the email cannot lock its owner out', async () => {
    const email = await newUser();
    // The attacker spends the pair's limit from nine networks (IPv4 and IPv6 /64s) and keeps hammering.
    const attackers = [
      ...Array.from({ length: 5 }, (_, i) => `203.0.113.${i + 1}`),
      ...Array.from({ length: 4 }, (_, i) => `2001:db8:66:${i}::1`),
    ];
    for (const a of attackers) {
      expect(await wrong(email, a, PAIR)).toEqual(Array(PAIR).fill(401));
      expect(await wrong(email, a, 20)).toEqual(Array(20).fill(429));
    }
    // The owner, from their own address, gets in with the right password and a few typos first.
    expect(await wrong(email, '192.0.2.40', 3)).toEqual([401, 401, 401]);
    expect(await attempt(email, PASSWORD, '192.0.2.40')).toBe(200);
    // Spread over enough networks, the per-email limit (ten times the pair's) still stops a brute force.
    const many = Array.from({ length: SIGN_IN_LIMITS.email.limit / PAIR + 1 }, (_, i) => `2001:db8:99:${i}::1`);
    const answers: number[] = [];
    for (const a of many) answers.push(...(await wrong(email, a, PAIR)));
    expect(answers.filter((s) => s === 401)).toHaveLength(SIGN_IN_LIMITS.email.limit);
    expect(answers.filter((s) => s === 429)).toHaveLength(PAIR);
  });
});
