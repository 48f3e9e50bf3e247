import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { realtimeResponse } from '../../lambdas/domain/reports/schemas.js';
import { localPaths } from '../../local/service.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';

const SITE = 'live.test';
let now = Date.UTC(2026, 10, 23, 14, 0, 30);
const ev = (id: string, visitor: string, agoMs: number, o: Parameters<typeof trackedEvent>[0] = {}) =>
  trackedEvent({ event_id: id, site: SITE, hostname: SITE, visitor_id: visitor, ts: now - agoMs, ...o });

describe('GET /api/v1/sites/{domain}/realtime through the sessionizer', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let key: string;
  beforeAll(async () => {
    svc = await startTestService([{ domain: SITE, timezone: 'Europe/Berlin' }], { app: true, clock: () => now });
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'tests', new Date(now))).key;
  });
  afterAll(async () => svc.cleanup());

  const send = async (events: ReturnType<typeof ev>[]) => {
    const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
    await stream.put(events);
    await stream.close();
    await svc.sessionize();
  };
  const get = async (path = '') => {
    const res = await fetch(`${svc.url}/api/v1/sites/${SITE}/realtime${path}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    return realtimeResponse.parse(await res.json());
  };

  it('counts visitors with an event in the last 5 minutes, their pages, referrers and goals; history is not current', async () => {
    await send([
      ev('a1', 'alice-0001', 4 * 60_000, { path: '/', referrer_host: 'news.ycombinator.com', channel: 'Communities' }),
      ev('a2', 'alice-0001', 60_000, { path: '/pricing' }),
      ev('a3', 'alice-0001', 50_000, { path: '/pricing', type: 'goal', goal: 'Signup' }),
      ev('c2', 'carol-000001', 7 * 60_000, { path: '/old', type: 'goal', goal: 'Old goal' }),
      ev('b1', 'bob-00000001', 30_000, { path: '/' }),
      ev('c1', 'carol-000001', 7 * 60_000, { path: '/old' }), // recorded (under 10 min) but not current
      ev('d1', 'dave-0000001', 3 * 3600_000, { path: '/history' }), // too old to record
    ]);
    const r = await get();
    expect(r).toMatchObject({ site: SITE, as_of: new Date(now).toISOString(), window_seconds: 300, visitors: 2 });
    expect(r.pages).toEqual([
      { page: '/', visitors: 2 },
      { page: '/pricing', visitors: 1 },
    ]);
    expect(r.referrers).toEqual([
      { referrer: null, visitors: 1 },
      { referrer: 'news.ycombinator.com', visitors: 1 },
    ]);
    expect(r.goals).toEqual([{ goal: 'Signup', visitors: 1 }]);
  });

  it('lets visitors go 5 minutes after their last event, and a replayed batch counts nothing twice', async () => {
    now += 2 * 60_000; // alice's last event 3 min ago (her '/' 6 min ago: out of the window), bob's 2.5 min ago
    const before = await get();
    expect(before.visitors).toBe(2);
    expect(before.pages).toEqual([
      { page: '/', visitors: 1 },
      { page: '/pricing', visitors: 1 },
    ]);
    await send([ev('b1', 'bob-00000001', 2.5 * 60_000, { path: '/' })]);
    expect(await get()).toEqual(before);
    now += 150_000; // alice 5.5 min, bob 5 min
    expect(await get('?limit=1')).toMatchObject({ visitors: 0, pages: [], referrers: [], goals: [] });
  });

  it('answers 400 for a bad limit and 404 for another site, as JSON', async () => {
    const bad = await fetch(`${svc.url}/api/v1/sites/${SITE}/realtime?limit=101`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect([bad.status, (await bad.json()).error]).toEqual([400, expect.stringMatching(/^limit: /)]);
    const other = await fetch(`${svc.url}/api/v1/sites/nope.test/realtime`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(other.status).toBe(404);
  });
});
