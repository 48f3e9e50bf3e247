import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoShareLinkStore } from '../../lambdas/adapters/dynamo/share-link-store.js';
import { DynamoAttemptStore } from '../../lambdas/adapters/dynamo/attempt-store.js';
import { SIGN_IN_LIMITS } from '../../lambdas/domain/auth/attempts.js';
import { hashPassword, verifyPassword } from '../../lambdas/domain/auth/password.js';
import { FieldError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../../lambdas/domain/errors.js';
import { SHARE_SESSION_TTL_MS, hashShareToken } from '../../lambdas/domain/share-link.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import {
  createShareLink,
  listShareLinks,
  openShareLink,
  revokeShareLink,
  shareAccess,
  type OpenShareDeps,
} from '../../lambdas/services/share-links.js';
import { site } from '../support/events.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { CHEAP_SCRYPT } from '../support/app-client.js';

/** Shared links' use cases on dynalite (docs/security.md "Shared links"): create, list, revoke, password, token hashing. */

const SITE = 'example.com';
const T0 = Date.UTC(2026, 4, 1, 9);
const PASSWORD = 'correct horse battery';
const tokenOf = (path: string) => /#auth=(ffs_[A-Za-z0-9_-]{43})$/.exec(path)?.[1] ?? '';

describe('shared links (service, dynalite)', () => {
  let db: Awaited<ReturnType<typeof memoryTable>>;
  let deps: OpenShareDeps;
  let now = T0;
  const sites = new Map<string, SiteConfig>();
  let kdfCalls = 0;

  beforeAll(async () => {
    db = await memoryTable([]);
    sites.set(SITE, site({ domain: SITE }));
    sites.set('other.com', site({ domain: 'other.com' }));
    sites.set('rival.com', site({ domain: 'rival.com', account: 'rival' }));
    deps = {
      links: new DynamoShareLinkStore(db.conn),
      sites: { getSite: async (d) => sites.get(d) ?? null },
      attempts: new DynamoAttemptStore(db.conn),
      clock: () => now,
      // The users' KDF with cheap parameters (the hash records them); calls counted.
      passwords: {
        hash: (p) => hashPassword(p, CHEAP_SCRYPT),
        verify: (p, stored) => (kdfCalls++, verifyPassword(p, stored)),
      },
    };
  });
  afterAll(async () => db.close());

  it('creates a link whose 256-bit token exists only in the answer: the table holds its SHA-256', async () => {
    const a = await createShareLink(deps, 'acme', 'Example.com', { name: 'Investors' });
    const b = await createShareLink(deps, 'acme', SITE, { name: 'Team' });
    expect(a).toMatchObject({ name: 'Investors', has_password: false, created: new Date(T0).toISOString() });
    expect(a.id).toMatch(/^shr_[0-9a-f]{12}$/);
    expect(a.path).toMatch(/^\/share\/example\.com#auth=ffs_[A-Za-z0-9_-]{43}$/);
    // 43 base64url characters are 32 bytes: 256 random bits, and two links never share one.
    expect(Buffer.from(tokenOf(a.path).slice(4), 'base64url')).toHaveLength(32);
    expect(tokenOf(a.path)).not.toBe(tokenOf(b.path));
    const dump = JSON.stringify(await scanAll(db.conn));
    expect(dump).not.toContain(tokenOf(a.path).slice(4));
    expect(dump).toContain(hashShareToken(tokenOf(a.path)));
    expect(await shareAccess(deps, tokenOf(a.path), () => null)).toEqual({ account: 'acme', site: SITE });
  });

  it('lists a site’s links newest first with no token, hash or password; names are unique per site', async () => {
    now = T0 + 60_000;
    await createShareLink(deps, 'acme', SITE, { name: 'Board', password: PASSWORD });
    const { links } = await listShareLinks(deps, 'acme', SITE);
    expect(links.map((l) => [l.name, l.has_password])).toEqual([
      ['Board', true],
      ['Investors', false],
      ['Team', false],
    ]);
    expect(Object.keys(links[0]!).sort()).toEqual(['created', 'has_password', 'id', 'name']);
    await expect(createShareLink(deps, 'acme', SITE, { name: 'board' })).rejects.toThrow(FieldError);
    // The same name on another site is fine; another account's site is as unknown as none.
    await createShareLink(deps, 'acme', 'other.com', { name: 'Board' });
    await expect(listShareLinks(deps, 'acme', 'rival.com')).rejects.toThrow(NotFoundError);
    await expect(createShareLink(deps, 'acme', 'rival.com', { name: 'x' })).rejects.toThrow(NotFoundError);
    await expect(createShareLink(deps, 'acme', SITE, { name: 'Short', password: 'short' })).rejects.toMatchObject({
      field: 'password',
    });
  });

  it('stores a password only as the users’ scrypt hash', async () => {
    const dump = JSON.stringify(await scanAll(db.conn));
    expect(dump).not.toContain(PASSWORD);
    expect(dump).toMatch(/"password_hash":"scrypt\$10\$8\$1\$/);
  });

  it('revoking refuses the very next request; an unknown id or another site’s link is 404', async () => {
    const link = await createShareLink(deps, 'acme', SITE, { name: 'Temp' });
    const token = tokenOf(link.path);
    expect((await shareAccess(deps, token, () => null)).site).toBe(SITE);
    await expect(revokeShareLink(deps, 'acme', 'other.com', link.id)).rejects.toThrow(NotFoundError);
    await expect(revokeShareLink(deps, 'rival', SITE, link.id)).rejects.toThrow(NotFoundError);
    await revokeShareLink(deps, 'acme', SITE, link.id);
    await expect(shareAccess(deps, token, () => null)).rejects.toThrow(UnauthorizedError);
    await expect(openShareLink(deps, { token }, '203.0.113.9')).rejects.toThrow(NotFoundError);
    await expect(revokeShareLink(deps, 'acme', SITE, link.id)).rejects.toThrow(NotFoundError);
    expect((await listShareLinks(deps, 'acme', SITE)).links.map((l) => l.name)).not.toContain('Temp');
    await expect(shareAccess(deps, 'ff_notashare', () => null)).rejects.toThrow(UnauthorizedError);
  });

  it('a link dies with its site: the domain deleted and added again does not revive it', async () => {
    const link = await createShareLink(deps, 'acme', 'other.com', { name: 'Old' });
    sites.set('other.com', site({ domain: 'other.com', created: '2026-06-01T00:00:00.000Z' }));
    await expect(shareAccess(deps, tokenOf(link.path), () => null)).rejects.toThrow(UnauthorizedError);
    expect((await listShareLinks(deps, 'acme', 'other.com')).links).toEqual([]);
    sites.set('other.com', site({ domain: 'other.com', account: 'rival' }));
    await expect(shareAccess(deps, tokenOf(link.path), () => null)).rejects.toThrow(UnauthorizedError);
  });

  it('a protected link reads nothing until unlocked; the unlock is the link’s own and ends after a day', async () => {
    const link = await createShareLink(deps, 'acme', SITE, { name: 'Locked', password: PASSWORD });
    const other = await createShareLink(deps, 'acme', SITE, { name: 'Locked too', password: PASSWORD });
    const token = tokenOf(link.path);
    expect((await openShareLink(deps, { token }, '203.0.113.1')).opened).toEqual({
      site: { domain: SITE, timezone: 'Europe/Berlin' },
      name: 'Locked',
      password_required: true,
      unlocked: false,
    });
    await expect(shareAccess(deps, token, () => null)).rejects.toThrow(UnauthorizedError);
    await expect(openShareLink(deps, { token, password: 'wrong password!' }, '203.0.113.1')).rejects.toMatchObject({
      field: 'password',
    });
    const { opened, unlock } = await openShareLink(deps, { token, password: PASSWORD }, '203.0.113.1');
    expect(opened.unlocked).toBe(true);
    expect(unlock).toMatchObject({ id: link.id, expires: now + SHARE_SESSION_TTL_MS });
    expect(JSON.stringify(await scanAll(db.conn))).not.toContain(unlock!.token);
    const cookies = (id: string) => (id === link.id ? unlock!.token : null);
    expect(await shareAccess(deps, token, cookies)).toEqual({ account: 'acme', site: SITE });
    // Another protected link is not opened by this link's unlock.
    await expect(shareAccess(deps, tokenOf(other.path), () => unlock!.token)).rejects.toThrow(UnauthorizedError);
    now += SHARE_SESSION_TTL_MS;
    await expect(shareAccess(deps, token, cookies)).rejects.toThrow(UnauthorizedError);
  });

  it('wrong passwords are limited like sign-ins: per link and address group, then refused before the KDF runs', async () => {
    const link = await createShareLink(deps, 'acme', SITE, { name: 'Guarded', password: PASSWORD });
    const token = tokenOf(link.path);
    for (let i = 0; i < SIGN_IN_LIMITS.pair.limit; i++)
      await expect(openShareLink(deps, { token, password: `guess number ${i}` }, '198.51.100.7')).rejects.toThrow(
        FieldError,
      );
    const calls = kdfCalls;
    const refused = openShareLink(deps, { token, password: PASSWORD }, '198.51.100.7');
    await expect(refused).rejects.toThrow(TooManyRequestsError);
    await expect(refused).rejects.toMatchObject({ status: 429, retryAfterS: expect.any(Number) });
    expect(kdfCalls).toBe(calls);
    // The owner's reader elsewhere still gets in: one address cannot lock the link out.
    expect((await openShareLink(deps, { token, password: PASSWORD }, '192.0.2.44')).opened.unlocked).toBe(true);
  });
});
