import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService } from '../support/local.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';
import { LOCAL_SITE_CACHE_TTL_MS } from '../../local/consumers.js';

/** `POST|GET /api/app/sites/{domain}/erasures` (docs/app.md; docs/security.md, "Erasing a person") on the local twin. */

const SITE = 'erase.test';
const PASSWORD = 'a-password-123';
const OWNER = 'olga@acme.test';
const MEMBER = 'milo@acme.test';

describe('the app erases a person: owners ask, scheduled runs carry it out, the app shows the progress', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let now = Date.UTC(2026, 10, 5, 12);
  let owner: AppClient;
  let member: AppClient;
  const path = `/api/app/sites/${SITE}/erasures`;

  beforeAll(async () => {
    svc = await startTestService([{ domain: SITE, timezone: 'UTC' }], {
      app: true,
      clock: () => now,
      sessionizeIntervalMs: 0,
    });
    await addUser(svc.dynamo, OWNER, 'acme', PASSWORD, CHEAP_SCRYPT, 'owner');
    await addUser(svc.dynamo, MEMBER, 'acme', PASSWORD, CHEAP_SCRYPT, 'member');
    owner = new AppClient(svc.url);
    member = new AppClient(svc.url);
    expect((await owner.signIn(OWNER, PASSWORD)).status).toBe(200);
    expect((await member.signIn(MEMBER, PASSWORD)).status).toBe(200);
  });
  afterAll(async () => svc.cleanup());

  it('bad input is 400 naming the field; an email is refused with the way to a customer id; a member gets 403', async () => {
    const cases: Array<[unknown, string]> = [
      [{ kind: 'visitor', confirm: SITE }, 'id'],
      [{ kind: 'visitor', id: '   ', confirm: SITE }, 'id'],
      [{ kind: 'person', id: 'v', confirm: SITE }, 'kind'],
      [{ kind: 'visitor', id: 'x'.repeat(257), confirm: SITE }, 'id'],
      [{ kind: 'visitor', id: 'v' }, 'confirm'],
      [{ kind: 'visitor', id: 'v', confirm: 'other.test' }, 'confirm'],
      [{ kind: 'email', id: 'jo@example.com', confirm: SITE }, 'kind'],
    ];
    for (const [body, field] of cases) {
      const res = await owner.call('POST', path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toMatchObject({ field, error: expect.any(String) });
    }
    expect(((await owner.call('POST', path, cases[6]![0])).body as { error: string }).error).toMatch(/customer id/);
    const refused = await member.call('POST', path, { kind: 'visitor', id: 'v-1', confirm: SITE });
    expect(refused).toMatchObject({ status: 403, body: { error: expect.any(String) } });
    expect((await owner.call('POST', '/api/app/sites/nope.test/erasures', cases[0]![0])).status).toBe(400);
    expect(
      (await owner.call('POST', '/api/app/sites/nope.test/erasures', { kind: 'visitor', id: 'v', confirm: 'x' }))
        .status,
    ).toBe(404);
    expect((await owner.call('GET', path)).body).toEqual({ pending: [], done: [] });
  });

  it('an owner asks: 202 and the request, progress on each scheduled run, then the audit record; no id in any answer', async () => {
    const asked = await owner.call('POST', path, { kind: 'visitor', id: 'visitor-to-erase', confirm: ` ${SITE} ` });
    expect(asked).toMatchObject({ status: 202, body: { kind: 'visitor', status: 'pending', percent: 0 } });
    const id = (asked.body as { id: string }).id;
    const status = async () => {
      const res = await member.call('GET', path);
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain('visitor-to-erase');
      return res.body as { pending: Array<{ id: string; phase: string }>; done: Array<{ kind: string }> };
    };
    expect((await status()).pending).toMatchObject([{ id, phase: 'queued' }]);
    for (let run = 0; run < 8 && (await status()).pending.length > 0; run++) {
      await svc.scheduled();
      now += LOCAL_SITE_CACHE_TTL_MS + 1001;
    }
    const done = await status();
    expect(done.pending).toEqual([]);
    expect(done.done).toMatchObject([{ kind: 'visitor', visitors: 1, payments: 0, generation: 1 }]);
  });
});
