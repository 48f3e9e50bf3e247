import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRebuildStore } from '../../lambdas/adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { readRollups } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { dynamoPaymentDeps } from '../../lambdas/adapters/dynamo/payment-deps.js';
import { rebuildSite } from '../../lambdas/services/rebuild.js';
import { localPaths } from '../../local/service.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';
import { scanAll } from '../support/dynamo.js';

const T = Date.UTC(2026, 9, 14, 9);

describe('rebuild from the archive', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  beforeAll(async () => {
    svc = await startTestService([{ domain: 'example.com', timezone: 'UTC' }], { sessionizeIntervalMs: 0 });
    // Events classified by an older rule set: chatgpt.com as a plain Referral.
    const events = [
      trackedEvent({ event_id: 'r1', visitor_id: 'visitor-0001', ts: T, referrer_host: 'chatgpt.com', channel: 'Referral', source: 'chatgpt.com', path: '/' }),
      trackedEvent({ event_id: 'r2', visitor_id: 'visitor-0001', ts: T + 60_000, path: '/pricing' }),
      trackedEvent({ event_id: 'r3', visitor_id: 'visitor-0002', ts: T + 3_600_000, referrer_host: 'news.ycombinator.com', channel: 'Communities', source: 'Hacker News', path: '/blog' }),
      trackedEvent({ event_id: 'r4', visitor_id: 'visitor-0002', ts: T + 86_400_000 * 3, path: '/' }),
    ];
    const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
    await stream.put(events);
    await stream.close();
    await svc.sessionize();
    await svc.archive();
  }, 60_000);
  afterAll(async () => svc.cleanup());

  const deps = () => ({
    archive: new DuckDbArchiveReader(localPaths(svc.dataDir).archive),
    clear: new DynamoRebuildStore(svc.dynamo),
    sessionize: { sites: new DynamoConfigStore(svc.dynamo), visits: new DynamoVisitStore(svc.dynamo), rollups: new DynamoRollupStore(svc.dynamo) },
    payments: dynamoPaymentDeps(svc.dynamo),
  });
  const channels = async () => Object.assign({}, ...(await readRollups(svc.dynamo, 'example.com', 'channel', 'M', '2026-10', '2026-10')).map((i) => i.counts));
  const month = async () => (await readRollups(svc.dynamo, 'example.com', 'visits', 'M', '2026-10', '2026-10'))[0];

  it('replays today\'s channel rules over history and keeps every other number', async () => {
    expect(await channels()).toEqual({ Referral: 1, Communities: 1, Direct: 1 });
    const before = await month();
    const site = (await new DynamoConfigStore(svc.dynamo).getSite('example.com'))!;
    const outcome = await rebuildSite(deps(), site, '2026-10-10', '2026-10-20');
    expect(outcome).toMatchObject({ from: '2026-10-01', to: '2026-10-31', events: 4, visitors: 2 });
    expect(await channels()).toEqual({ AI: 1, Communities: 1, Direct: 1 });
    const after = await month();
    expect({ visits: after?.visits, pageviews: after?.pageviews, ids: after?.ids }).toEqual({ visits: before?.visits, pageviews: before?.pageviews, ids: before?.ids });
    const [visit] = await new DynamoVisitStore(svc.dynamo).visitsAround('example.com', 'visitor-0001', 0, Date.now());
    expect(visit?.attrs).toMatchObject({ channel: 'AI', source: 'ChatGPT' });
  });

  it('is idempotent: a second rebuild leaves the same visits and counts', async () => {
    const site = (await new DynamoConfigStore(svc.dynamo).getSite('example.com'))!;
    const snapshot = async () => (await scanAll(svc.dynamo, ['seq', 'ver'])).filter((i) => String(i.pk).startsWith('R#') || String(i.pk).startsWith('VIS#'));
    const before = await snapshot();
    await rebuildSite(deps(), site, '2026-10-01', '2026-10-31');
    expect(await snapshot()).toEqual(before);
  });

  it('changes nothing when the archive query fails', async () => {
    const site = (await new DynamoConfigStore(svc.dynamo).getSite('example.com'))!;
    const before = await scanAll(svc.dynamo);
    const failing = { ...deps(), archive: { events: async () => Promise.reject(new Error('Athena query failed: TABLE_NOT_FOUND')) } };
    await expect(rebuildSite(failing, site, '2026-10-01', '2026-10-31')).rejects.toThrow(/TABLE_NOT_FOUND/);
    expect(await scanAll(svc.dynamo)).toEqual(before);
  });
});
