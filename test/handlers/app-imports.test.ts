import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService } from '../support/local.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';
import { ApiStandIn } from '../support/api-stand-in.js';
import { paddleApi } from '../support/paddle-stand-in.js';

/**
 * `POST|GET /api/app/sites/{domain}/imports/{provider}` on the twin (docs/app.md): who may, what the
 * body must hold (each field's message), one job at a time, and what the GET shows (never the key).
 */

const SITE = 'imports-endpoint.test';
const PATH = `/api/app/sites/${SITE}/imports/paddle`;
const OWNER = { email: 'olga@acme.test', password: 'a-password-123' };
const MEMBER = { email: 'max@acme.test', password: 'a-password-456' };
const KEY = 'pdl_sdbx_apikey_01h8c6tbrkpdd7vx61w7b1endpoint';

describe('the app endpoints of provider history imports', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let api: ApiStandIn;
  let owner: AppClient;
  let member: AppClient;

  beforeAll(async () => {
    api = new ApiStandIn(paddleApi);
    process.env.FOOTFALL_PADDLE_API = (await api.start()).href;
    svc = await startTestService([{ domain: SITE, timezone: 'UTC' }], { app: true, sessionizeIntervalMs: 0 });
    await addUser(svc.dynamo, OWNER.email, 'acme', OWNER.password, CHEAP_SCRYPT, 'owner');
    await addUser(svc.dynamo, MEMBER.email, 'acme', MEMBER.password, CHEAP_SCRYPT, 'member');
    owner = new AppClient(svc.url);
    member = new AppClient(svc.url);
    expect((await owner.signIn(OWNER.email, OWNER.password)).status).toBe(200);
    expect((await member.signIn(MEMBER.email, MEMBER.password)).status).toBe(200);
  });
  afterAll(async () => {
    delete process.env.FOOTFALL_PADDLE_API;
    await svc?.cleanup();
    await api?.close();
  });

  it.each([
    ['no key', {}, 'api_key', 'Paste the API key.'],
    ['a blank key', { api_key: '   ' }, 'api_key', 'Paste the API key.'],
    ["another provider's key", { api_key: 'rk_live_abc' }, 'api_key', 'expected a Paddle API key pdl_live_apikey_….'],
    ['a key of 513 characters', { api_key: 'x'.repeat(513) }, 'api_key', 'At most 512 characters.'],
    ['month 13', { api_key: KEY, since: '2026-13-01' }, 'since', 'Enter a day as YYYY-MM-DD.'],
    ['a word for a day', { api_key: KEY, until: 'yesterday' }, 'until', 'Enter a day as YYYY-MM-DD.'],
    [
      'an empty range',
      { api_key: KEY, since: '2026-03-01', until: '2026-03-01' },
      'until',
      'The end must be after the start.',
    ],
    ['a scope Paddle has not', { api_key: KEY, scope: '123' }, 'scope', 'Paddle imports take no scope.'],
    ['an unknown field', { api_key: KEY, admin: true }, 'body', 'unknown field admin'],
  ])('refuses %s with 400 naming %s', async (_what, body, field, error) => {
    expect(await owner.call('POST', PATH, body)).toMatchObject({ status: 400, body: { error, field } });
    expect((await owner.call('GET', PATH)).body).toEqual({ job: null });
  });

  it('owners only; unknown providers and sites 404; the imports function of the twin runs the job; the GET never shows the key', async () => {
    expect((await new AppClient(svc.url).call('POST', PATH, { api_key: KEY })).status).toBe(401);
    expect((await member.call('POST', PATH, { api_key: KEY })).status).toBe(403);
    expect((await owner.call('POST', `/api/app/sites/${SITE}/imports/gumroad`, { api_key: KEY })).status).toBe(404);
    expect((await owner.call('POST', '/api/app/sites/other.test/imports/paddle', { api_key: KEY })).status).toBe(404);

    const started = await owner.call('POST', PATH, { api_key: KEY, since: '2020-01-01', until: '' });
    expect(started).toMatchObject({
      status: 202,
      body: { job: { provider: 'paddle', status: 'running', since: '2020-01-01', until: null, by: OWNER.email } },
    });
    expect(JSON.stringify(started.body)).not.toContain(KEY);
    await svc.importsIdle();
    const seen = await member.call('GET', PATH);
    expect(seen).toMatchObject({
      status: 200,
      body: { job: { status: 'done', counts: { read: expect.any(Number) } } },
    });
    expect(JSON.stringify(seen.body)).not.toContain(KEY);
  });
});
