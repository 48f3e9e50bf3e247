import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiKey } from '../../lambdas/domain/api-key.js';
import { scenarioService } from './scenario.js';

type Scenario = Awaited<ReturnType<typeof scenarioService>>;

const ENDPOINTS = [
  '/api/v1/sites',
  '/api/v1/sites/shop.test/overview',
  '/api/v1/sites/shop.test/breakdown/channel',
  '/api/v1/sites/shop.test/payments',
  '/api/v1/sites/shop.test/visitors/alice-0001',
];

describe('report API authentication matrix (spec §5, §7)', () => {
  let s: Scenario;
  let revokedKey = '';
  beforeAll(async () => {
    s = await scenarioService();
    const revoked = await s.keys.create('acme', 'old', new Date());
    revokedKey = revoked.key;
    await s.keys.revoke(revoked.id, new Date());
  }, 60_000);
  afterAll(async () => s.svc.cleanup());

  const call = (path: string, authorization?: string) => fetch(`${s.svc.url}${path}`, { headers: authorization === undefined ? {} : { authorization } });

  it.each(ENDPOINTS)('%s: 401 without a header, with another scheme, an unknown key, a revoked key; 200 with the key', async (path) => {
    const cases: Array<[string | undefined, number]> = [
      [undefined, 401],
      [`Basic ${Buffer.from('a:b').toString('base64')}`, 401],
      [`Token ${s.key}`, 401],
      [s.key, 401],
      [`Bearer ${newApiKey()}`, 401],
      ['Bearer not-a-key', 401],
      [`Bearer ${revokedKey}`, 401],
      [`Bearer ${s.key}`, 200],
      [`bearer ${s.key}`, 200],
    ];
    for (const [authorization, status] of cases) {
      const res = await call(path, authorization);
      expect(res.status, `${authorization}`).toBe(status);
      if (status === 401) expect(await res.json()).toEqual({ error: expect.any(String) });
    }
  });

  it.each(ENDPOINTS.slice(1))('%s: 404 for the other account\'s key', async (path) => {
    const res = await call(path, `Bearer ${s.rivalKey}`);
    expect(res.status).toBe(404);
  });

  it('lists only the rival\'s own sites for the rival\'s key', async () => {
    const res = await call('/api/v1/sites', `Bearer ${s.rivalKey}`);
    expect(await res.json()).toEqual({ sites: [{ domain: 'rival.test', timezone: 'UTC' }] });
  });

  it('fails a key on its very next request after revocation', async () => {
    expect((await call('/api/v1/sites', `Bearer ${s.rivalKey}`)).status).toBe(200);
    await s.keys.revoke(s.rivalId, new Date());
    expect((await call('/api/v1/sites', `Bearer ${s.rivalKey}`)).status).toBe(401);
  });
});
