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

describe('report API authentication matrix: bearer keys, 401 and 404', () => {
  let s: Scenario;
  let revokedKey = '';
  beforeAll(async () => {
    s = await scenarioService();
    const revoked = await s.keys.create('acme', 'old', new Date());
    revokedKey = revoked.key;
    await s.keys.revoke(revoked.id, new Date());
  });
  afterAll(async () => s.svc.cleanup());

  const call = (path: string, authorization?: string) =>
    fetch(`${s.svc.url}${path}`, { headers: authorization === undefined ? {} : { authorization } });

  // RFC 6750 §3: every 401 carries the Bearer challenge; error="invalid_token" only when a bearer token was sent.
  const CHALLENGE = 'Bearer realm="footfall"';
  const INVALID =
    /^Bearer realm="footfall", error="invalid_token", error_description="the API key is not valid [^"]*"$/;

  it.each(ENDPOINTS)(
    '%s: 401 with WWW-Authenticate without a header, with another scheme, an unknown key, a revoked key; 200 with the key',
    async (path) => {
      const cases: Array<[string | undefined, number, string | RegExp | null, RegExp | null]> = [
        [undefined, 401, CHALLENGE, /missing Authorization header/],
        [`Basic ${Buffer.from('a:b').toString('base64')}`, 401, CHALLENGE, /must be "Bearer <API key>"/],
        [`Token ${s.key}`, 401, CHALLENGE, /must be "Bearer <API key>"/],
        [s.key, 401, CHALLENGE, /must be "Bearer <API key>"/],
        [`Bearer ${newApiKey()}`, 401, INVALID, /^the API key is not valid \(unknown or revoked\)$/],
        ['Bearer not-a-key', 401, INVALID, /^the API key is not valid/],
        ['Bearer ff_nope', 401, INVALID, /^the API key is not valid/],
        [`Bearer ${revokedKey}`, 401, INVALID, /^the API key is not valid \(unknown or revoked\)$/],
        [`Bearer ${s.key}`, 200, null, null],
        [`bearer ${s.key}`, 200, null, null],
      ];
      for (const [authorization, status, challenge, message] of cases) {
        const res = await call(path, authorization);
        expect(res.status, `${authorization}`).toBe(status);
        if (status !== 401) {
          expect(res.headers.get('www-authenticate')).toBeNull();
          continue;
        }
        if (typeof challenge === 'string')
          expect(res.headers.get('www-authenticate'), `${authorization}`).toBe(challenge);
        else expect(res.headers.get('www-authenticate'), `${authorization}`).toMatch(challenge ?? /never/);
        expect(await res.json()).toEqual({ error: expect.stringMatching(message ?? /never/) });
      }
    },
  );

  it.each(ENDPOINTS.slice(1))("%s: 404 for the other account's key", async (path) => {
    const res = await call(path, `Bearer ${s.rivalKey}`);
    expect(res.status).toBe(404);
  });

  it("lists only the rival's own sites for the rival's key", async () => {
    const res = await call('/api/v1/sites', `Bearer ${s.rivalKey}`);
    expect(await res.json()).toEqual({ sites: [{ domain: 'rival.test', timezone: 'UTC' }] });
  });

  it('fails a key on its very next request after revocation', async () => {
    expect((await call('/api/v1/sites', `Bearer ${s.rivalKey}`)).status).toBe(200);
    await s.keys.revoke(s.rivalId, new Date());
    expect((await call('/api/v1/sites', `Bearer ${s.rivalKey}`)).status).toBe(401);
  });
});
