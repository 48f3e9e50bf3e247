import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Stripe } from 'stripe';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { NOW, SITE, scenarioService } from '../reports/scenario.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';

/** Every `/api/app/*` endpoint as app/src/api.ts calls it (docs/app.md). */

const ANA = { email: 'ana@acme.test', password: 'ana-password-1' };

describe('/api/app endpoints', () => {
  let s: Awaited<ReturnType<typeof scenarioService>>;
  let ana: AppClient;

  beforeAll(async () => {
    s = await scenarioService();
    await addUser(s.svc.dynamo, ANA.email, 'acme', ANA.password, CHEAP_SCRYPT);
    ana = new AppClient(s.svc.url);
    const res = await ana.signIn(ANA.email, ANA.password);
    expect(res.status).toBe(200);
  });
  afterAll(async () => s.svc.cleanup());

  it('sign-in answers who signed in and sets the session cookie; me answers the same', async () => {
    const c = new AppClient(s.svc.url);
    const res = await c.signIn('  ANA@acme.test ', ANA.password);
    expect(res.body).toEqual({
      user: { email: ANA.email, created: expect.any(String), role: 'owner' },
      account: { id: 'acme', name: 'acme' },
      capabilities: { filtered_reports: true },
    });
    expect(res.headers.get('set-cookie')).toMatch(
      /^ff_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=1209600; HttpOnly; SameSite=Lax$/,
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect((await c.call('GET', '/api/app/me')).body).toEqual(res.body);
  });

  it('bad input gets 400 with the field and a message, and unknown paths 404 or 405', async () => {
    const c = new AppClient(s.svc.url);
    expect((await c.signIn('', 'x')).body).toEqual({ error: 'Enter your email address.', field: 'email' });
    expect((await c.call('POST', '/api/app/sign-in', { email: ANA.email })).body).toEqual({
      error: 'Enter your password.',
      field: 'password',
    });
    expect(await c.call('POST', '/api/app/sign-in', '{not json')).toMatchObject({
      status: 400,
      body: { error: 'body: must be a JSON object' },
    });
    expect((await ana.call('GET', '/api/app/nope')).status).toBe(404);
    expect((await ana.call('PUT', '/api/app/me')).status).toBe(405);
    expect((await ana.call('PATCH', `/api/app/sites/${SITE}`, { timezone: 'UTC', admin: true })).body).toEqual({
      error: 'unknown field admin',
      field: 'body',
    });
  });

  it('the report API takes the session cookie and reads through the same code as with a key', async () => {
    for (const path of [
      '/api/v1/sites',
      `/api/v1/sites/${SITE}/overview?range=30d`,
      `/api/v1/sites/${SITE}/breakdown/channel?range=30d`,
      `/api/v1/sites/${SITE}/visitors/alice-0001`,
    ]) {
      const viaCookie = await ana.call('GET', path);
      const viaKey = await s.get(path);
      expect(viaCookie.status, path).toBe(200);
      expect(viaCookie.body, path).toEqual(await viaKey.json());
    }
  });

  it('sites: list with the event status, add with a timezone, change settings; bad input names the field and changes nothing', async () => {
    const list = (await ana.call('GET', '/api/app/sites')).body as {
      sites: Array<{ domain: string; last_event_ts: string | null }>;
    };
    expect(list.sites.map((x) => x.domain)).toEqual(['empty.test', SITE]);
    // The last event of the scenario is 2026-03-25T… in Berlin; the hour it fell in, as an instant.
    expect(list.sites.find((x) => x.domain === 'empty.test')?.last_event_ts).toBeNull();
    expect(Date.parse(list.sites.find((x) => x.domain === SITE)!.last_event_ts!)).toBeLessThanOrEqual(NOW);

    const added = await ana.call('POST', '/api/app/sites', { domain: 'New.Example.com', timezone: 'America/New_York' });
    expect(added).toMatchObject({
      status: 201,
      body: {
        domain: 'new.example.com',
        timezone: 'America/New_York',
        attribution: 'last_non_direct',
        lookback_days: 30,
        last_event_ts: null,
      },
    });
    expect(
      ((await ana.call('GET', '/api/v1/sites')).body as { sites: Array<{ domain: string }> }).sites.map(
        (x) => x.domain,
      ),
    ).toContain('new.example.com');
    expect((await ana.call('POST', '/api/app/sites', { domain: 'new.example.com', timezone: 'UTC' })).body).toEqual({
      error: 'This account tracks new.example.com already.',
      field: 'domain',
    });
    expect((await ana.call('POST', '/api/app/sites', { domain: 'rival.test', timezone: 'UTC' })).status).toBe(409);
    expect(
      (await ana.call('POST', '/api/app/sites', { domain: 'https://x.com/a', timezone: 'UTC' })).body,
    ).toMatchObject({ field: 'domain' });
    expect(
      (await ana.call('POST', '/api/app/sites', { domain: 'ok.example.com', timezone: 'Mars/Olympus' })).body,
    ).toEqual({ error: 'Choose an IANA timezone such as Europe/Berlin.', field: 'timezone' });
    expect(await new DynamoConfigStore(s.svc.dynamo).getSite('ok.example.com')).toBeNull();

    const patched = await ana.call('PATCH', '/api/app/sites/new.example.com', {
      timezone: 'Europe/Paris',
      attribution: 'first_touch',
      lookback_days: 90,
    });
    expect(patched).toMatchObject({
      status: 200,
      body: { domain: 'new.example.com', timezone: 'Europe/Paris', attribution: 'first_touch', lookback_days: 90 },
    });
    for (const [body, field] of [
      [{ lookback_days: 0 }, 'lookback_days'],
      [{ attribution: 'linear' }, 'attribution'],
      [{ rate_limit: 5 }, 'body'],
    ] as const) {
      expect(
        (await ana.call('PATCH', '/api/app/sites/new.example.com', body)).body,
        JSON.stringify(body),
      ).toMatchObject({ field });
    }
    expect(await new DynamoConfigStore(s.svc.dynamo).getSite('new.example.com')).toMatchObject({
      timezone: 'Europe/Paris',
      attribution: 'first_touch',
      lookback_days: 90,
      rate_limit: 1000,
    });
    expect((await ana.call('PATCH', '/api/app/sites/nosuch.example.com', { timezone: 'UTC' })).status).toBe(404);
  });

  it("a new attribution model credits the site's payments again", async () => {
    const before = (await ana.call('GET', `/api/v1/sites/${SITE}/payments?range=90d&limit=50`)).body as {
      rows: Array<{ provider_payment_id: string; touch: { ts: string } | null }>;
    };
    expect((await ana.call('PATCH', `/api/app/sites/${SITE}`, { attribution: 'last_touch' })).status).toBe(200);
    const after = (await ana.call('GET', `/api/v1/sites/${SITE}/payments?range=90d&limit=50`)).body as typeof before;
    const touch = (b: typeof before, id: string) => b.rows.find((r) => r.provider_payment_id === id)?.touch?.ts;
    // Alice paid during a direct visit after a search visit: last non-direct credits the search, last touch the direct one.
    expect(touch(before, 'pi_1')).toBe('2026-03-05T10:00:00.000Z');
    expect(touch(after, 'pi_1')).toBe('2026-03-20T09:00:00.000Z');
    expect((await ana.call('PATCH', `/api/app/sites/${SITE}`, { attribution: 'last_non_direct' })).status).toBe(200);
    expect(
      touch((await ana.call('GET', `/api/v1/sites/${SITE}/payments?range=90d&limit=50`)).body as typeof before, 'pi_1'),
    ).toBe(touch(before, 'pi_1'));
  });

  it('providers: the webhook URL, connect with a secret, the last webhook and its result, disconnect', async () => {
    const list = (await ana.call('GET', `/api/app/sites/${SITE}/providers`)).body as {
      providers: Array<Record<string, unknown>>;
    };
    expect(list.providers.map((p) => p.provider)).toEqual(['stripe', 'lemonsqueezy', 'paddle', 'polar']);
    expect(list.providers[0]).toEqual({
      provider: 'stripe',
      connected: false,
      webhook_url: `${s.svc.url}/api/webhooks/stripe/${SITE}`,
      connected_at: null,
      last_webhook: null,
      rejected_webhooks: null,
    });
    expect(
      (await ana.call('PUT', `/api/app/sites/${SITE}/providers/stripe`, { webhook_secret: 'short' })).body,
    ).toMatchObject({ field: 'webhook_secret' });
    expect(
      (await ana.call('PUT', `/api/app/sites/${SITE}/providers/venmo`, { webhook_secret: 'whsec_long_enough' })).status,
    ).toBe(404);
    // A Stripe API key pasted where the signing secret goes is refused with a clear message, and nothing is stored.
    const notWhsec = await ana.call('PUT', `/api/app/sites/${SITE}/providers/stripe`, {
      webhook_secret: 'sk_live_51HxxxxxxxxxxxxxxxxxxX',
    });
    expect(notWhsec.status).toBe(400);
    expect(notWhsec.body).toMatchObject({ field: 'webhook_secret', error: expect.stringContaining('whsec_') });
    expect(
      ((await ana.call('GET', `/api/app/sites/${SITE}/providers`)).body as { providers: Array<{ connected: boolean }> })
        .providers[0]!.connected,
    ).toBe(false);
    const secret = 'whsec_test_secret_of_the_app';
    const connected = await ana.call('PUT', `/api/app/sites/${SITE}/providers/stripe`, { webhook_secret: secret });
    expect(connected.body).toMatchObject({ provider: 'stripe', connected: true, last_webhook: null });
    expect(JSON.stringify(connected.body)).not.toContain(secret);

    const payload = JSON.stringify({
      id: 'evt_app_1',
      object: 'event',
      type: 'balance.available',
      created: NOW / 1000,
      data: { object: {} },
    });
    const hook = (signature: string) =>
      fetch(`${s.svc.url}/api/webhooks/stripe/${SITE}`, {
        method: 'POST',
        headers: { 'stripe-signature': signature, 'content-type': 'application/json' },
        body: payload,
      });
    expect(
      (await hook(Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: NOW / 1000 }))).status,
    ).toBe(200);
    const good = (
      (await ana.call('GET', `/api/app/sites/${SITE}/providers`)).body as {
        providers: Array<{ last_webhook: unknown }>;
      }
    ).providers[0]!.last_webhook;
    expect(good).toEqual({ ts: new Date(NOW).toISOString(), status: 200, result: expect.stringContaining('ignored') });
    expect(
      (await hook(Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_wrong', timestamp: NOW / 1000 })))
        .status,
    ).toBe(400);
    // Anyone can post to the URL: a delivery that fails the signature check (wrong secret, none, garbage) is
    // counted apart and leaves the last verified webhook as it was.
    expect((await hook('t=1,v1=00')).status).toBe(400);
    const afterBad = (
      (await ana.call('GET', `/api/app/sites/${SITE}/providers`)).body as {
        providers: Array<{ last_webhook: unknown; rejected_webhooks: unknown }>;
      }
    ).providers[0]!;
    expect(afterBad.last_webhook).toEqual(good);
    expect(afterBad.rejected_webhooks).toEqual({ count: 2, last_ts: new Date(NOW).toISOString() });
    // A signed delivery whose body Footfall cannot read is a verified delivery: it is the last webhook, with its 400.
    const unreadable = JSON.stringify({
      id: 'evt_app_2',
      type: 'charge.succeeded',
      created: NOW / 1000,
      data: { object: {} },
    });
    const signed = Stripe.webhooks.generateTestHeaderString({ payload: unreadable, secret, timestamp: NOW / 1000 });
    expect(
      (
        await fetch(`${s.svc.url}/api/webhooks/stripe/${SITE}`, {
          method: 'POST',
          headers: { 'stripe-signature': signed, 'content-type': 'application/json' },
          body: unreadable,
        })
      ).status,
    ).toBe(400);
    const bad = (
      (await ana.call('GET', `/api/app/sites/${SITE}/providers`)).body as {
        providers: Array<{ last_webhook: { status: number } }>;
      }
    ).providers[0]!.last_webhook;
    expect(bad.status).toBe(400);

    expect((await ana.call('DELETE', `/api/app/sites/${SITE}/providers/stripe`)).status).toBe(204);
    expect(
      ((await ana.call('GET', `/api/app/sites/${SITE}/providers`)).body as { providers: Array<{ connected: boolean }> })
        .providers[0]!.connected,
    ).toBe(false);
    expect(
      (await hook(Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: NOW / 1000 }))).status,
    ).toBe(404);
  });

  it('keys: created with a name and shown once, listed without the key, revoked with the next request refused', async () => {
    const created = await ana.call('POST', '/api/app/keys', { name: 'Claude Code' });
    const key = created.body as { id: string; key: string; name: string; created: string; last_used: null };
    expect(created.status).toBe(201);
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^ff_/),
      name: 'Claude Code',
      last_used: null,
    });
    const bearer = (k: string) => fetch(`${s.svc.url}/api/v1/sites`, { headers: { authorization: `Bearer ${k}` } });
    expect((await bearer(key.key)).status).toBe(200);
    const listed = (await ana.call('GET', '/api/app/keys')).body as { keys: Array<Record<string, unknown>> };
    // The report function records the key's use (its one write, `docs/security.md` "IAM: least privilege": last_used of a KEYS item).
    const used = listed.keys.find((k) => k.id === key.id);
    expect(used).toEqual({
      id: key.id,
      name: 'Claude Code',
      created: key.created,
      last_used: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(Date.parse(used!.last_used as string)).toBeGreaterThanOrEqual(Date.parse(key.created));
    expect(JSON.stringify(listed)).not.toContain(key.key);
    expect((await ana.call('POST', '/api/app/keys', { name: '   ' })).body).toEqual({
      error: 'Give the key a name.',
      field: 'name',
    });
    // A bearer key reads; it writes nothing.
    const withKey = await fetch(`${s.svc.url}/api/app/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, origin: s.svc.url, 'content-type': 'application/json' },
      body: '{"name":"k"}',
    });
    expect(withKey.status).toBe(401);
    expect((await ana.call('DELETE', `/api/app/keys/${key.id}`)).status).toBe(204);
    expect((await bearer(key.key)).status).toBe(401);
    expect(
      ((await ana.call('GET', '/api/app/keys')).body as { keys: Array<{ id: string }> }).keys.map((k) => k.id),
    ).not.toContain(key.id);
    expect((await ana.call('DELETE', `/api/app/keys/${key.id}`)).status).toBe(404);
  });

  it('users: invite by email with a one-time link that sets a password and signs in; remove; never oneself', async () => {
    const invited = await ana.call('POST', '/api/app/users', { email: 'Ben@Acme.test' });
    const { invite_url } = invited.body as { email: string; invite_url: string };
    expect(invited).toMatchObject({
      status: 201,
      body: {
        email: 'ben@acme.test',
        role: 'member',
        invite_url: expect.stringMatching(new RegExp(`^${s.svc.url}/invite/[A-Za-z0-9_-]{43}$`)),
      },
    });
    expect((await ana.call('POST', '/api/app/users', { email: 'ben@acme.test' })).body).toMatchObject({
      field: 'email',
    });
    expect((await ana.call('POST', '/api/app/users', { email: 'not-an-email' })).body).toMatchObject({
      field: 'email',
    });
    expect(((await ana.call('GET', '/api/app/users')).body as { users: unknown[] }).users).toContainEqual({
      email: 'ben@acme.test',
      created: expect.any(String),
      status: 'invited',
      role: 'member',
    });

    const token = invite_url.split('/').pop()!;
    const ben = new AppClient(s.svc.url);
    expect((await ben.call('GET', `/api/app/invites/${token}`)).body).toEqual({
      email: 'ben@acme.test',
      account: { id: 'acme', name: 'acme' },
    });
    expect((await ben.call('POST', `/api/app/invites/${token}`, { password: 'short' })).body).toEqual({
      error: 'Use at least 10 characters.',
      field: 'password',
    });
    const accepted = await ben.call('POST', `/api/app/invites/${token}`, { password: 'ben-password-1' });
    expect(accepted.body).toEqual({
      user: { email: 'ben@acme.test', created: expect.any(String), role: 'member' },
      account: { id: 'acme', name: 'acme' },
      capabilities: { filtered_reports: true },
    });
    expect((await ben.call('GET', '/api/app/me')).status).toBe(200);
    expect((await ben.call('POST', `/api/app/invites/${token}`, { password: 'ben-password-2' })).status).toBe(404);
    expect((await new AppClient(s.svc.url).call('GET', `/api/app/invites/${token}`)).status).toBe(404);
    expect(((await ana.call('GET', '/api/app/users')).body as { users: unknown[] }).users).toContainEqual({
      email: 'ben@acme.test',
      created: expect.any(String),
      status: 'active',
      role: 'member',
    });

    expect((await ana.call('DELETE', `/api/app/users/${encodeURIComponent(ANA.email)}`)).status).toBe(403);
    expect((await ana.call('DELETE', '/api/app/users/ben%40acme.test')).status).toBe(204);
    expect((await ben.call('GET', '/api/app/me')).status).toBe(401);
    expect((await ana.call('DELETE', '/api/app/users/ben%40acme.test')).status).toBe(404);
  });

  it('change password: the current one must match, the new one must be long enough; then the old one fails', async () => {
    await addUser(s.svc.dynamo, 'cy@acme.test', 'acme', 'cy-password-1', CHEAP_SCRYPT);
    const cy = new AppClient(s.svc.url);
    await cy.signIn('cy@acme.test', 'cy-password-1');
    expect(
      (await cy.call('POST', '/api/app/password', { current_password: 'wrong-one-1', new_password: 'cy-password-2' }))
        .body,
    ).toEqual({ error: 'The current password is wrong.', field: 'current_password' });
    expect(
      (await cy.call('POST', '/api/app/password', { current_password: 'cy-password-1', new_password: 'short' })).body,
    ).toMatchObject({ field: 'new_password' });
    expect(
      (await cy.call('POST', '/api/app/password', { current_password: 'cy-password-1', new_password: 'cy-password-2' }))
        .status,
    ).toBe(204);
    expect((await cy.call('GET', '/api/app/me')).status).toBe(200);
    expect((await new AppClient(s.svc.url).signIn('cy@acme.test', 'cy-password-1')).status).toBe(401);
    expect((await new AppClient(s.svc.url).signIn('cy@acme.test', 'cy-password-2')).status).toBe(200);
  });

  it('delete a site: only with its domain typed, only its own account; the site is gone from the app, the API and the CLI', async () => {
    const domain = 'doomed.example.com';
    expect((await ana.call('POST', '/api/app/sites', { domain, timezone: 'UTC' })).status).toBe(201);
    expect((await ana.call('DELETE', `/api/app/sites/${domain}`, { confirm: 'other.example.com' })).body).toEqual({
      error: `Type ${domain} to confirm.`,
      field: 'confirm',
    });
    expect((await ana.call('DELETE', `/api/app/sites/${domain}`, {})).body).toMatchObject({ field: 'confirm' });
    expect((await ana.call('DELETE', '/api/app/sites/rival.test', { confirm: 'rival.test' })).status).toBe(404);
    expect(await new DynamoConfigStore(s.svc.dynamo).getSite('rival.test')).not.toBeNull();
    const deleted = await ana.call('DELETE', `/api/app/sites/${domain}`, { confirm: ` ${domain.toUpperCase()} ` });
    expect(deleted).toMatchObject({
      status: 202,
      body: { domain, generations: 1, command: `footfall sites delete ${domain} --yes` },
    });
    const sites = (await ana.call('GET', '/api/app/sites')).body as { sites: Array<{ domain: string }> };
    expect(sites.sites.map((x) => x.domain)).not.toContain(domain);
    expect((await ana.call('GET', `/api/v1/sites/${domain}/overview?range=7d`)).status).toBe(404);
    // Recorded for the CLI to finish; the domain cannot be added again until then.
    expect((await ana.call('POST', '/api/app/sites', { domain, timezone: 'UTC' })).status).toBe(409);
  });
});

describe("links and webhook URLs behind CloudFront, where the Host is the API's", () => {
  it('name the app origin the browser sends, not the API host', async () => {
    const { createAppHandler } = await import('../../lambdas/handlers/app.js');
    const { Logger } = await import('@aws-lambda-powertools/logger');
    const { Metrics } = await import('@aws-lambda-powertools/metrics');
    const { httpApiEvent, localContext } = await import('../../local/api-gateway.js');
    const s = await scenarioService();
    try {
      await addUser(s.svc.dynamo, ANA.email, 'acme', ANA.password, CHEAP_SCRYPT);
      const { dynamoAuthDeps, dynamoSettingsDeps, dynamoShareDeps } = await import('../../lambdas/wiring/app-deps.js');
      const handler = createAppHandler({
        logger: new Logger({ serviceName: 'app', logLevel: 'SILENT' }),
        metrics: new Metrics({ namespace: 'Test', serviceName: 'app' }),
        auth: dynamoAuthDeps(s.svc.dynamo, () => NOW),
        settings: dynamoSettingsDeps(s.svc.dynamo, s.svc.secrets, () => NOW),
        shares: dynamoShareDeps(s.svc.dynamo, () => NOW),
        cookieSecurity: 'always',
        capabilities: { filtered_reports: false },
      });
      const app = 'https://d111111abcdef8.cloudfront.net';
      const base = {
        host: 'abc123.execute-api.eu-west-1.amazonaws.com',
        'x-forwarded-proto': 'https',
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/json',
      };
      const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
        handler(
          httpApiEvent({
            method,
            path,
            headers: { ...base, ...headers },
            body: body === undefined ? undefined : JSON.stringify(body),
          }),
          localContext('app'),
        );
      const signIn = await call(
        'POST',
        '/api/app/sign-in',
        { origin: app },
        { email: ANA.email, password: ANA.password },
      );
      expect(signIn.statusCode).toBe(200);
      expect(signIn.cookies?.[0]).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
      const cookie = signIn.cookies![0]!.split(';')[0]!;
      const invited = await call('POST', '/api/app/users', { origin: app, cookie }, { email: 'dee@acme.test' });
      expect(JSON.parse(invited.body!).invite_url).toMatch(new RegExp(`^${app}/invite/`));
      const providers = await call('GET', `/api/app/sites/${SITE}/providers`, {
        referer: `${app}/settings/sites/${SITE}`,
        cookie,
      });
      expect(JSON.parse(providers.body!).providers[0].webhook_url).toBe(`${app}/api/webhooks/stripe/${SITE}`);
    } finally {
      await s.svc.cleanup();
    }
  });
});

describe('the per-address sign-in limit behind CloudFront and on the public execute-api URL', () => {
  it('takes the viewer address only from requests that carry the origin secret CloudFront adds', async () => {
    const { createAppHandler } = await import('../../lambdas/handlers/app.js');
    const { Logger } = await import('@aws-lambda-powertools/logger');
    const { Metrics } = await import('@aws-lambda-powertools/metrics');
    const { httpApiEvent, localContext } = await import('../../local/api-gateway.js');
    const { dynamoAuthDeps, dynamoSettingsDeps, dynamoShareDeps } = await import('../../lambdas/wiring/app-deps.js');
    const { SIGN_IN_LIMITS, addressGroup, attemptKey, bucketStart } =
      await import('../../lambdas/domain/auth/attempts.js');
    const s = await scenarioService();
    try {
      // Counters in memory, the source address (a CloudFront edge, or the attacker on execute-api) already at its limit.
      const addressKey = (address: string) => attemptKey('address', addressGroup(address));
      const counts = new Map<string, number>([[addressKey('130.176.1.2'), SIGN_IN_LIMITS.address.limit]]);
      const secret = '0d6f1c2e-5b8a-4e7f-9a3d-2c1b0e9f8a7d';
      const handler = createAppHandler({
        logger: new Logger({ serviceName: 'app', logLevel: 'SILENT' }),
        metrics: new Metrics({ namespace: 'Test', serviceName: 'app' }),
        auth: {
          ...dynamoAuthDeps(s.svc.dynamo, () => NOW),
          // One bucket per counter is enough here: every attempt happens at NOW.
          attempts: {
            add: async (key: string, _start: number, delta: number) => {
              counts.set(key, (counts.get(key) ?? 0) + delta);
            },
            buckets: async (key: string) => (counts.has(key) ? [{ start: bucketStart(NOW), n: counts.get(key)! }] : []),
            clear: async (key: string) => {
              counts.delete(key);
            },
          },
        },
        settings: dynamoSettingsDeps(s.svc.dynamo, s.svc.secrets, () => NOW),
        shares: dynamoShareDeps(s.svc.dynamo, () => NOW),
        cookieSecurity: 'always',
        originSecret: secret,
        capabilities: { filtered_reports: false },
      });
      let n = 0;
      const signIn = async (headers: Record<string, string>) => {
        const res = await handler(
          httpApiEvent({
            method: 'POST',
            path: '/api/app/sign-in',
            sourceIp: '130.176.1.2',
            headers: {
              host: 'abc123.execute-api.eu-west-1.amazonaws.com',
              origin: 'https://abc123.execute-api.eu-west-1.amazonaws.com',
              'x-forwarded-proto': 'https',
              'sec-fetch-site': 'same-origin',
              'content-type': 'application/json',
              'cloudfront-viewer-address': `203.0.113.${++n}:40000`,
              ...headers,
            },
            body: JSON.stringify({ email: `nobody${n}@acme.test`, password: 'wrong-password-1' }),
          }),
          localContext('app'),
        );
        return res.statusCode;
      };
      // Straight to execute-api with a made-up viewer address: counted against the connection's address.
      expect(await signIn({})).toBe(429);
      expect(await signIn({ 'x-footfall-origin-secret': 'guessed' })).toBe(429);
      // Through CloudFront (the secret header present and equal): the viewer's own address, under its limit.
      expect(await signIn({ 'x-footfall-origin-secret': secret })).toBe(401);
      expect(counts.get(addressKey(`203.0.113.${n}`))).toBe(1);
    } finally {
      await s.svc.cleanup();
    }
  });
});
