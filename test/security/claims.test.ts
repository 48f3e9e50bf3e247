import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { startTestService } from '../support/local.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';

/** One domain, one account (docs/security.md): the 409s of sites and users say nothing of another account. */

const PASSWORD = 'a-password-123';

describe('domains and users of another account: refused without saying whose', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let ana: AppClient;
  beforeAll(async () => {
    svc = await startTestService([{ domain: 'acme-shop.test', timezone: 'UTC' }], { app: true });
    const config = new DynamoConfigStore(svc.dynamo);
    await config.addAccount('rival', new Date());
    await config.addSite({
      domain: 'rival.test',
      timezone: 'UTC',
      account: 'rival',
      attribution: 'last_non_direct',
      lookback_days: 30,
      rate_limit: 1000,
      created: new Date().toISOString(),
    });
    await addUser(svc.dynamo, 'ana@acme.test', 'acme', PASSWORD, CHEAP_SCRYPT);
    await addUser(svc.dynamo, 'riv@rival.test', 'rival', PASSWORD, CHEAP_SCRYPT);
    ana = new AppClient(svc.url);
    expect((await ana.signIn('ana@acme.test', PASSWORD)).status).toBe(200);
  });
  afterAll(async () => svc.cleanup());

  const addSite = (domain: string) => ana.call('POST', '/api/app/sites', { domain, timezone: 'UTC' });

  it('another account’s domain and any subdomain of it get one answer that names no account; nothing is added', async () => {
    const answers = await Promise.all(['rival.test', 'blog.rival.test', 'a.b.rival.test'].map(addSite));
    for (const a of answers) {
      expect(a.status).toBe(409);
      expect(JSON.stringify(a.body)).not.toContain('rival"');
      expect(JSON.stringify(a.body)).not.toMatch(/riv@|account rival/);
    }
    const bodies = answers.map((a) => (a.body as { error: string }).error.replace(/^\S+/, '<domain>'));
    expect(new Set(bodies).size).toBe(1);
    expect(answers[0]!.body).toMatchObject({ field: 'domain' });
    const sites = (await ana.call('GET', '/api/app/sites')).body as { sites: Array<{ domain: string }> };
    expect(sites.sites.map((s) => s.domain)).toEqual(['acme-shop.test']);
    // Not a subdomain: a name that merely ends the same way.
    expect((await addSite('notrival.test')).status).toBe(201);
  });

  it('a subdomain of one’s own site may be added; one’s own domain again says so', async () => {
    expect((await addSite('blog.acme-shop.test')).status).toBe(201);
    expect((await addSite('acme-shop.test')).body).toEqual({
      error: 'This account tracks acme-shop.test already.',
      field: 'domain',
    });
  });

  it('an email of another account’s user gets a 409 that names no account; one’s own user says so', async () => {
    const other = await ana.call('POST', '/api/app/users', { email: 'riv@rival.test' });
    expect(other).toMatchObject({ status: 409, body: { field: 'email' } });
    expect(JSON.stringify(other.body)).not.toMatch(/account rival|"rival/);
    expect((other.body as { error: string }).error).toContain('cannot be invited');
    const own = await ana.call('POST', '/api/app/users', { email: 'ana@acme.test' });
    expect(own.body).toEqual({ error: 'ana@acme.test is a user of this account already.', field: 'email' });
    const users = (await ana.call('GET', '/api/app/users')).body as { users: Array<{ email: string }> };
    expect(users.users.map((u) => u.email)).toEqual(['ana@acme.test']);
  });
});
