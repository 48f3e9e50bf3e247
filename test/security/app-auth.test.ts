import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoSessionStore } from '../../lambdas/adapters/dynamo/session-store.js';
import { DynamoAttemptStore } from '../../lambdas/adapters/dynamo/attempt-store.js';
import { DynamoUserStore } from '../../lambdas/adapters/dynamo/user-store.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoAuthDeps } from '../../lambdas/wiring/app-deps.js';
import { SIGN_IN_LIMITS, attemptKey, bucketStart } from '../../lambdas/domain/auth/attempts.js';
import { hashToken, newToken } from '../../lambdas/domain/auth/token.js';
import { hashPassword, verifyPassword } from '../../lambdas/domain/auth/password.js';
import { signIn } from '../../lambdas/services/auth.js';
import { NOW, SITE, scenarioService } from '../reports/scenario.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';

/** The app's sign-in and roles (`docs/security.md` "App sign-in and sessions"): each attempt is denied, and nothing changes. */

const ANA = { email: 'ana@acme.test', password: 'ana-password-1' };
const RIV = { email: 'riv@rival.test', password: 'riv-password-1' };

describe('app sign-in and sessions: denied, nothing changed', () => {
  let s: Awaited<ReturnType<typeof scenarioService>>;
  const client = () => new AppClient(s.svc.url);
  const signedIn = async (who: { email: string; password: string }) => {
    const c = client();
    expect((await c.signIn(who.email, who.password)).status).toBe(200);
    return c;
  };

  beforeAll(async () => {
    s = await scenarioService();
    await addUser(s.svc.dynamo, ANA.email, 'acme', ANA.password);
    await addUser(s.svc.dynamo, RIV.email, 'rival', RIV.password, CHEAP_SCRYPT);
  });
  afterAll(async () => s.svc.cleanup());

  it('a wrong password and an unknown email get the same 401 and no cookie', async () => {
    const wrong = client();
    const unknown = client();
    const a = await wrong.signIn(ANA.email, 'not-the-password');
    const b = await unknown.signIn('nobody@acme.test', 'not-the-password');
    expect([a.status, b.status]).toEqual([401, 401]);
    expect(a.body).toEqual(b.body);
    expect(a.body).toEqual({ error: 'Wrong email or password.' });
    expect([wrong.cookie, unknown.cookie]).toEqual([null, null]);
    expect(a.headers.get('set-cookie')).toBeNull();
  });

  it('an unknown email costs the same scrypt work as a wrong password (one verification against a hash of the same parameters)', async () => {
    const calls: string[] = [];
    const deps = {
      ...dynamoAuthDeps(s.svc.dynamo, () => NOW),
      passwords: {
        hash: hashPassword,
        verify: async (p: string, stored: string) => (
          calls.push(stored.split('$').slice(0, 4).join('$')),
          verifyPassword(p, stored)
        ),
      },
    };
    await expect(signIn(deps, { email: 'ghost@acme.test', password: 'whatever-123' }, '198.51.100.1')).rejects.toThrow(
      'Wrong email or password.',
    );
    await expect(signIn(deps, { email: ANA.email, password: 'whatever-123' }, '198.51.100.1')).rejects.toThrow(
      'Wrong email or password.',
    );
    expect(calls).toEqual(['scrypt$17$8$1', 'scrypt$17$8$1']);
  });

  it('20 rapid attempts: past the limit of one email from one address every answer is 429 with Retry-After, even the right password', async () => {
    const email = 'bursty@acme.test';
    await addUser(s.svc.dynamo, email, 'acme', 'bursty-password', CHEAP_SCRYPT);
    const answers = await Promise.all(Array.from({ length: 20 }, () => client().signIn(email, 'guess-guess-guess')));
    const statuses = answers.map((a) => a.status).sort();
    // In a parallel burst, attempts that meet over the limit are all refused (and not counted): never more than the limit get through.
    const admitted = statuses.filter((x) => x === 401).length;
    expect(admitted).toBeLessThanOrEqual(SIGN_IN_LIMITS.pair.limit);
    expect(statuses.filter((x) => x === 429)).toHaveLength(20 - admitted);
    const limited = answers.find((a) => a.status === 429)!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // One at a time, exactly the rest of the limit gets through.
    for (let i = admitted; i < SIGN_IN_LIMITS.pair.limit; i++)
      expect((await client().signIn(email, 'guess-guess-guess')).status).toBe(401);
    expect((await client().signIn(email, 'guess-guess-guess')).status).toBe(429);
    const right = client();
    const last = await right.signIn(email, 'bursty-password');
    expect(last.status).toBe(429);
    expect(right.cookie).toBeNull();
  }, 120_000);

  const protectedCalls = ['/api/app/me', '/api/app/keys', '/api/v1/sites', `/api/v1/sites/${SITE}/overview`];

  it('a forged session cookie is refused everywhere, and cleared', async () => {
    for (const cookie of [newToken(), 'forged', `${newToken()}x`]) {
      const c = client();
      for (const path of protectedCalls) {
        c.cookie = cookie;
        const res = await c.call('GET', path);
        expect(res.status, `${path} ${cookie}`).toBe(401);
      }
      c.cookie = cookie;
      const me = await c.call('GET', '/api/app/me');
      expect(me.headers.get('set-cookie')).toMatch(/^ff_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/);
    }
  });

  it('an expired session cookie is refused', async () => {
    const token = newToken();
    await new DynamoSessionStore(s.svc.dynamo).create(hashToken(token), {
      email: ANA.email,
      account: 'acme',
      created: NOW - 20 * 86_400_000,
      expires: NOW - 1,
      epoch: 1,
    });
    for (const path of protectedCalls) {
      const c = client();
      c.cookie = token;
      expect((await c.call('GET', path)).status, path).toBe(401);
    }
  });

  it('a signed-out session cookie is refused on the next request', async () => {
    const c = await signedIn(ANA);
    const token = c.cookie!;
    expect((await c.call('GET', '/api/v1/sites')).status).toBe(200);
    const out = await c.call('POST', '/api/app/sign-out');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^ff_session=; .*Max-Age=0/);
    for (const path of protectedCalls) {
      c.cookie = token;
      expect((await c.call('GET', path)).status, path).toBe(401);
    }
  });

  it('a password change ends the other sessions; a removed user is signed out everywhere', async () => {
    await addUser(s.svc.dynamo, 'moe@acme.test', 'acme', 'moe-password-1', CHEAP_SCRYPT);
    const laptop = await signedIn({ email: 'moe@acme.test', password: 'moe-password-1' });
    const phone = await signedIn({ email: 'moe@acme.test', password: 'moe-password-1' });
    const change = await laptop.call('POST', '/api/app/password', {
      current_password: 'moe-password-1',
      new_password: 'moe-password-2',
    });
    expect(change.status).toBe(204);
    expect((await laptop.call('GET', '/api/app/me')).status).toBe(200);
    expect((await phone.call('GET', '/api/app/me')).status).toBe(401);
    const ana = await signedIn(ANA);
    expect((await ana.call('DELETE', '/api/app/users/moe%40acme.test')).status).toBe(204);
    expect((await laptop.call('GET', '/api/app/me')).status).toBe(401);
    expect((await laptop.call('GET', '/api/v1/sites')).status).toBe(401);
  });

  it('a cross-site POST without the right origin is refused (403) and changes nothing', async () => {
    const c = await signedIn(ANA);
    const before = await s.keys.list();
    const sites = await new DynamoConfigStore(s.svc.dynamo).listSites();
    const forged: Array<Record<string, string>> = [
      { origin: 'https://evil.test' },
      { origin: 'https://evil.test', 'sec-fetch-site': 'cross-site' },
      { origin: '', 'sec-fetch-site': 'cross-site' },
      { origin: 'null' },
      { origin: `${s.svc.url}.evil.test` },
    ];
    for (const headers of forged) {
      for (const [method, path, body] of [
        ['POST', '/api/app/keys', { name: 'csrf' }],
        ['POST', '/api/app/sites', { domain: 'csrf.test', timezone: 'UTC' }],
        ['PATCH', `/api/app/sites/${SITE}`, { timezone: 'UTC' }],
        ['POST', '/api/app/users', { email: 'csrf@evil.test' }],
        ['POST', '/api/app/password', { current_password: ANA.password, new_password: 'csrf-password' }],
        ['POST', '/api/app/sign-out', {}],
      ] as const) {
        const res = await c.call(method, path, body, headers);
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
      }
    }
    // No Origin and no Fetch Metadata at all: refused too (a non-browser client must send Origin).
    const bare = await fetch(`${s.svc.url}/api/app/keys`, {
      method: 'POST',
      headers: { cookie: `ff_session=${c.cookie}`, 'content-type': 'application/json' },
      body: '{"name":"x"}',
    });
    expect(bare.status).toBe(403);
    expect(await s.keys.list()).toEqual(before);
    expect(await new DynamoConfigStore(s.svc.dynamo).listSites()).toEqual(sites);
    expect(await new DynamoUserStore(s.svc.dynamo).get('csrf@evil.test')).toBeNull();
    expect((await c.call('GET', '/api/app/me')).status).toBe(200);
    expect((await c.signIn(ANA.email, ANA.password)).status).toBe(200);
  });

  it('a user of account A cannot open, change or delete anything of account B', async () => {
    const riv = await signedIn(RIV);
    const config = new DynamoConfigStore(s.svc.dynamo);
    const siteBefore = await config.getSite(SITE);
    const keysBefore = await s.keys.list();
    const acmeKey = keysBefore.find((k) => k.account === 'acme')!;
    const reads = [
      `/api/v1/sites/${SITE}/overview?range=30d`,
      `/api/v1/sites/${SITE}/breakdown/channel?range=30d`,
      `/api/v1/sites/${SITE}/payments?range=30d`,
      `/api/v1/sites/${SITE}/retention?range=30d`,
      `/api/v1/sites/${SITE}/visitors/alice-0001`,
      `/api/app/sites/${SITE}/providers`,
    ];
    for (const path of reads) expect((await riv.call('GET', path)).status, path).toBe(404);
    const sites = (await riv.call('GET', '/api/v1/sites')).body as { sites: Array<{ domain: string }> };
    expect(sites.sites.map((x) => x.domain)).toEqual(['rival.test']);
    expect(
      ((await riv.call('GET', '/api/app/sites')).body as { sites: Array<{ domain: string }> }).sites.map(
        (x) => x.domain,
      ),
    ).toEqual(['rival.test']);
    expect(
      ((await riv.call('GET', '/api/app/keys')).body as { keys: Array<{ id: string }> }).keys.map((k) => k.id),
    ).not.toContain(acmeKey.id);
    expect(
      ((await riv.call('GET', '/api/app/users')).body as { users: Array<{ email: string }> }).users.map((u) => u.email),
    ).toEqual([RIV.email]);
    const writes = [
      ['PATCH', `/api/app/sites/${SITE}`, { attribution: 'first_touch' }],
      ['PUT', `/api/app/sites/${SITE}/providers/paddle`, { webhook_secret: 'pdl_ntfset_secret' }],
      ['DELETE', `/api/app/sites/${SITE}/providers/stripe`, undefined],
      ['DELETE', `/api/app/keys/${acmeKey.id}`, undefined],
      ['DELETE', `/api/app/users/${encodeURIComponent(ANA.email)}`, undefined],
    ] as const;
    for (const [method, path, body] of writes)
      expect((await riv.call(method, path, body)).status, `${method} ${path}`).toBe(404);
    expect(await config.getSite(SITE)).toEqual(siteBefore);
    expect(await config.listProviders(SITE)).toEqual([]);
    expect(await s.keys.list()).toEqual(keysBefore);
    expect((await s.get('/api/v1/sites')).status).toBe(200);
    expect(await new DynamoUserStore(s.svc.dynamo).get(ANA.email)).not.toBeNull();
  });
  // Last: it uses up this address's window (the service's clock is fixed).
  it('one address trying many emails is limited too', async () => {
    const attempts = new DynamoAttemptStore(s.svc.dynamo);
    await attempts.add(attemptKey('address', '127.0.0.1'), bucketStart(NOW), SIGN_IN_LIMITS.address.limit);
    const c = client();
    const res = await c.signIn(RIV.email, RIV.password);
    expect(res.status).toBe(429);
    expect(c.cookie).toBeNull();
  });
});
