import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoAttemptStore } from '../../lambdas/adapters/dynamo/attempt-store.js';
import { SIGN_IN_LIMITS, attemptKey, bucketStart } from '../../lambdas/domain/auth/attempts.js';
import { NOW, SITE, scenarioService } from '../reports/scenario.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';

/**
 * Shared links through the local server (docs/security.md "Shared links"), isolated as API keys are:
 * a link's token reads its own site's dashboard reports through the report API's code, and nothing
 * else: no other site, no site list, payments, visitor timelines, retention, settings, keys, users
 * or write; a revoked link is refused on its next request; a protected link reads only once unlocked.
 */

const ANA = { email: 'ana@acme.test', password: 'ana-password-1' };
const LINK_PASSWORD = 'board-meeting-2026';
const tokenOf = (url: string) => /#auth=(ffs_[A-Za-z0-9_-]{43})$/.exec(url)?.[1] ?? '';

describe('shared links: isolation (local server)', () => {
  let s: Awaited<ReturnType<typeof scenarioService>>;
  let ana: AppClient;
  let link: { id: string; url: string };
  const shared = (token: string, path: string, headers: Record<string, string> = {}, method = 'GET') =>
    fetch(`${s.svc.url}${path}`, { method, headers: { 'x-footfall-share': token, ...headers } });

  beforeAll(async () => {
    s = await scenarioService();
    await addUser(s.svc.dynamo, ANA.email, 'acme', ANA.password, CHEAP_SCRYPT);
    ana = new AppClient(s.svc.url);
    expect((await ana.signIn(ANA.email, ANA.password)).status).toBe(200);
    const created = await ana.call('POST', `/api/app/sites/${SITE}/shares`, { name: 'Investors' });
    expect(created.status).toBe(201);
    link = created.body as typeof link;
  });
  afterAll(async () => s.svc.cleanup());

  it('creating answers the link once, with the token in the fragment; listing never shows it', async () => {
    expect(link).toMatchObject({ name: 'Investors', has_password: false });
    expect(link.url).toMatch(new RegExp(`^${s.svc.url}/share/${SITE}#auth=ffs_[A-Za-z0-9_-]{43}$`));
    const listed = await ana.call('GET', `/api/app/sites/${SITE}/shares`);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(tokenOf(link.url));
    expect((listed.body as { links: unknown[] }).links).toEqual([
      { id: link.id, name: 'Investors', created: new Date(NOW).toISOString(), has_password: false },
    ]);
  });

  it('reads the dashboard’s reports of its site through the same code as a key: equal bodies', async () => {
    const token = tokenOf(link.url);
    for (const path of [
      `/api/v1/sites/${SITE}/overview?range=30d`,
      `/api/v1/sites/${SITE}/timeseries?range=7d`,
      `/api/v1/sites/${SITE}/breakdown/channel?range=30d`,
      `/api/v1/sites/${SITE.toUpperCase()}/breakdown/page?range=30d&limit=5`,
      `/api/v1/sites/${SITE}/goals?range=30d`,
      `/api/v1/sites/${SITE}/realtime`,
    ]) {
      const viaLink = await shared(token, path);
      expect(viaLink.status, path).toBe(200);
      expect(await viaLink.json(), path).toEqual(await (await s.get(path)).json());
    }
  });

  it('reads nothing else: other sites, the site list, payments, visitors, retention (404), settings, keys, users (401)', async () => {
    const token = tokenOf(link.url);
    for (const path of [
      '/api/v1/sites',
      `/api/v1/sites/${SITE}/payments?range=30d`,
      `/api/v1/sites/${SITE}/payments?range=30d&format=csv`,
      `/api/v1/sites/${SITE}/visitors/alice-0001`,
      `/api/v1/sites/${SITE}/retention?range=12m`,
      '/api/v1/sites/empty.test/overview?range=30d',
      '/api/v1/sites/rival.test/overview?range=30d',
      `/api/v1/sites/${SITE}%2F..%2Fempty.test/overview?range=30d`,
    ]) {
      const res = await shared(token, path);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).not.toMatch(/alice|@|cus_/);
    }
    // The app's endpoints take a session cookie, never a link's token.
    for (const [method, path] of [
      ['GET', '/api/app/me'],
      ['GET', '/api/app/sites'],
      ['GET', `/api/app/sites/${SITE}/providers`],
      ['GET', `/api/app/sites/${SITE}/shares`],
      ['GET', '/api/app/keys'],
      ['GET', '/api/app/users'],
      ['POST', '/api/app/keys'],
      ['POST', `/api/app/sites/${SITE}/shares`],
      ['DELETE', `/api/app/sites/${SITE}/shares/${link.id}`],
      ['PATCH', `/api/app/sites/${SITE}`],
    ] as const) {
      const res = await shared(token, path, { origin: s.svc.url, 'content-type': 'application/json' }, method);
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    // No write on the report API, with or without the link (the gateway routes GET only).
    for (const method of ['POST', 'PUT', 'DELETE'])
      expect([404, 405], method).toContain((await shared(token, `/api/v1/sites/${SITE}/overview`, {}, method)).status);
  });

  it('the link’s header wins over a signed-in session: the shared view shows what the link shows', async () => {
    const token = tokenOf(link.url);
    const cookie = `ff_session=${ana.cookie}`;
    expect((await shared(token, '/api/v1/sites', { cookie })).status).toBe(404);
    expect((await shared(token, `/api/v1/sites/${SITE}/payments?range=30d`, { cookie })).status).toBe(404);
    expect((await shared('ffs_' + 'x'.repeat(43), `/api/v1/sites/${SITE}/overview`, { cookie })).status).toBe(401);
  });

  it('a revoked link is refused on its very next request (401), and opening it answers 404', async () => {
    const created = await ana.call('POST', `/api/app/sites/${SITE}/shares`, { name: 'Short-lived' });
    const { id, url } = created.body as { id: string; url: string };
    const token = tokenOf(url);
    expect((await shared(token, `/api/v1/sites/${SITE}/overview?range=7d`)).status).toBe(200);
    expect((await ana.call('POST', '/api/app/shared', { token })).status).toBe(200);
    expect((await ana.call('DELETE', `/api/app/sites/${SITE}/shares/${id}`)).status).toBe(204);
    const refused = await shared(token, `/api/v1/sites/${SITE}/overview?range=7d`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'the shared link is not valid (unknown or revoked)' });
    expect(await ana.call('POST', '/api/app/shared', { token })).toMatchObject({
      status: 404,
      body: { error: 'This shared link does not exist or was revoked.' },
    });
    expect((await ana.call('DELETE', `/api/app/sites/${SITE}/shares/${id}`)).status).toBe(404);
  });

  it('a protected link reads once unlocked by its password, with a cookie scoped to its site’s reports', async () => {
    const created = await ana.call('POST', `/api/app/sites/${SITE}/shares`, {
      name: 'Board',
      password: LINK_PASSWORD,
    });
    const { id, url } = created.body as { id: string; url: string };
    const token = tokenOf(url);
    const visitor = new AppClient(s.svc.url);
    expect((await shared(token, `/api/v1/sites/${SITE}/overview?range=7d`)).status).toBe(401);
    expect((await visitor.call('POST', '/api/app/shared', { token })).body).toEqual({
      site: { domain: SITE, timezone: 'Europe/Berlin' },
      name: 'Board',
      password_required: true,
      unlocked: false,
      capabilities: { filtered_reports: true },
    });
    expect(await visitor.call('POST', '/api/app/shared', { token, password: 'not the password' })).toMatchObject({
      status: 400,
      body: { error: 'Wrong password.', field: 'password' },
    });
    const opened = await visitor.call('POST', '/api/app/shared', { token, password: LINK_PASSWORD });
    expect(opened.status).toBe(200);
    const set = opened.headers.getSetCookie();
    expect(set).toHaveLength(1);
    expect(set[0]).toMatch(
      new RegExp(
        `^ff_share_${id.slice(4)}=[A-Za-z0-9_-]{43}; Path=/api/v1/sites/${SITE}/; Max-Age=86400; HttpOnly; SameSite=Strict$`,
      ),
    );
    const cookie = set[0]!.split(';')[0]!;
    expect((await shared(token, `/api/v1/sites/${SITE}/overview?range=7d`, { cookie })).status).toBe(200);
    // The unlock opens this link only: not the site list, not another link.
    expect((await shared(token, '/api/v1/sites', { cookie })).status).toBe(404);
    expect((await shared(tokenOf(link.url), `/api/v1/sites/${SITE}/overview?range=7d`, { cookie })).status).toBe(200);
    const other = (
      await ana.call('POST', `/api/app/sites/${SITE}/shares`, { name: 'Board 2', password: LINK_PASSWORD })
    ).body as { id: string; url: string };
    const forged = `ff_share_${other.id.slice(4)}=${cookie.split('=')[1]}`;
    expect((await shared(tokenOf(other.url), `/api/v1/sites/${SITE}/overview`, { cookie: forged })).status).toBe(401);
    // Revoking ends the unlocked view too.
    expect((await ana.call('DELETE', `/api/app/sites/${SITE}/shares/${id}`)).status).toBe(204);
    expect((await shared(token, `/api/v1/sites/${SITE}/overview?range=7d`, { cookie })).status).toBe(401);
  });

  it('wrong passwords are limited like sign-ins: past the link’s limit, 429 with Retry-After and no check', async () => {
    const created = await ana.call('POST', `/api/app/sites/${SITE}/shares`, {
      name: 'Guarded',
      password: LINK_PASSWORD,
    });
    const { id, url } = created.body as { id: string; url: string };
    // The link's counter at its limit (as many wrong guesses from many addresses would leave it).
    await new DynamoAttemptStore(s.svc.dynamo).add(attemptKey('link', id), bucketStart(NOW), SIGN_IN_LIMITS.link.limit);
    const refused = await new AppClient(s.svc.url).call('POST', '/api/app/shared', {
      token: tokenOf(url),
      password: LINK_PASSWORD,
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.getSetCookie()).toEqual([]);
  });

  it('only an owner creates or revokes a link (a member may list)', async () => {
    await addUser(s.svc.dynamo, 'milo@acme.test', 'acme', ANA.password, CHEAP_SCRYPT, 'member');
    const milo = new AppClient(s.svc.url);
    await milo.signIn('milo@acme.test', ANA.password);
    expect((await milo.call('GET', `/api/app/sites/${SITE}/shares`)).status).toBe(200);
    expect((await milo.call('POST', `/api/app/sites/${SITE}/shares`, { name: 'Mine' })).status).toBe(403);
    expect((await milo.call('DELETE', `/api/app/sites/${SITE}/shares/${link.id}`)).status).toBe(403);
    expect((await ana.call('GET', '/api/app/sites/rival.test/shares')).status).toBe(404);
    expect((await ana.call('POST', '/api/app/sites/rival.test/shares', { name: 'x' })).status).toBe(404);
  });
});
