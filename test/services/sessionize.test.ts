import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { readRollups } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { sessionizeBatch, type SessionizeDeps } from '../../lambdas/services/sessionize.js';
import { countVisitors, deserializeSketch } from '../../lambdas/domain/visitor-sketch.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';

const MIN = 60_000;
// 2026-03-10 10:00 in Europe/Berlin (UTC+1) is 09:00Z.
const T0 = Date.UTC(2026, 2, 10, 9, 0);

function ev(minutes: number, overrides: Partial<TrackedEvent> = {}): TrackedEvent {
  return trackedEvent({
    ts: T0 + minutes * MIN,
    event_id: `e${minutes}-${overrides.visitor_id ?? 'a'}-${overrides.path ?? '/'}`,
    visitor_id: 'visitor-a',
    ...overrides,
  });
}

describe('sessionizeBatch against dynalite', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let deps: SessionizeDeps;
  let seq = 0;

  beforeEach(async () => {
    ({ conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }]));
    deps = {
      sites: new DynamoConfigStore(conn),
      visits: new DynamoVisitStore(conn),
      rollups: new DynamoRollupStore(conn),
    };
    seq = 0;
  });
  afterEach(async () => close());

  const run = (events: TrackedEvent[], sequence = String(++seq * 100)) =>
    sessionizeBatch(
      deps,
      { shard: 'shard-1', sequence },
      events.map((e) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(e)) })),
    );
  const visits = (visitor = 'visitor-a') =>
    new DynamoVisitStore(conn).visitsAround('example.com', visitor, 0, Number.MAX_SAFE_INTEGER);
  async function day(dayStr: string) {
    const [item] = await readRollups(conn, 'example.com', 'visits', 'D', dayStr, dayStr);
    return item
      ? { visits: item.visits, pageviews: item.pageviews, visitors: countVisitors(deserializeSketch(item)) }
      : undefined;
  }
  async function counts(metric: 'channel' | 'page' | 'landing_page' | 'country', dayStr: string) {
    const items = await readRollups(conn, 'example.com', metric, 'D', dayStr, dayStr);
    return Object.assign({}, ...items.map((i) => i.counts));
  }

  it("groups a visitor's events into one visit with first-event attributes", async () => {
    await run([
      ev(0, { path: '/', channel: 'Search', source: 'Google', referrer_host: 'www.google.com' }),
      ev(5, { path: '/pricing' }),
      ev(20, { type: 'goal', goal: 'Signup', path: '/pricing' }),
    ]);
    const [visit, ...rest] = await visits();
    expect(rest).toEqual([]);
    expect(visit).toMatchObject({
      start: T0,
      end: T0 + 20 * MIN,
      landing_page: '/',
      attrs: { channel: 'Search', source: 'Google', referrer_host: 'www.google.com' },
    });
    expect(visit?.events.map((e) => [e.type, e.path, e.goal])).toEqual([
      ['pageview', '/', null],
      ['pageview', '/pricing', null],
      ['goal', '/pricing', 'Signup'],
    ]);
    expect(await day('2026-03-10')).toEqual({ visits: 1, pageviews: 2, visitors: 1 });
    expect(await counts('channel', '2026-03-10')).toEqual({ Search: 1 });
    expect(await counts('page', '2026-03-10')).toEqual({ '/': 1, '/pricing': 1 });
  });

  it('starts a new visit after 30 minutes without events, not before', async () => {
    await run([ev(0), ev(29), ev(59), ev(89, { path: '/x' })]);
    // 29 → 59 is 30 minutes: a new visit; 59 → 89 likewise.
    expect((await visits()).map((v) => v.events.length)).toEqual([2, 1, 1]);
    expect(await day('2026-03-10')).toEqual({ visits: 3, pageviews: 4, visitors: 1 });
  });

  it('merges two visits when a late event closes the gap, across batches', async () => {
    await run([ev(0), ev(40)]);
    expect(await day('2026-03-10')).toMatchObject({ visits: 2 });
    await run([ev(20, { path: '/late' })]);
    expect((await visits()).map((v) => v.events.map((e) => e.path))).toEqual([['/', '/late', '/']]);
    expect(await day('2026-03-10')).toEqual({ visits: 1, pageviews: 3, visitors: 1 });
    expect(await counts('page', '2026-03-10')).toEqual({ '/': 1, '/late': 1 });
  });

  it('re-attributes a visit when an earlier event arrives late', async () => {
    await run([ev(10, { channel: 'Direct', path: '/b' })]);
    expect(await counts('channel', '2026-03-10')).toEqual({ Direct: 1 });
    await run([ev(0, { channel: 'AI', source: 'ChatGPT', path: '/a' })]);
    const [visit] = await visits();
    expect(visit).toMatchObject({ landing_page: '/a', attrs: { channel: 'AI', source: 'ChatGPT' } });
    expect(await counts('channel', '2026-03-10')).toEqual({ AI: 1 });
    expect(await counts('landing_page', '2026-03-10')).toEqual({ '/a': 1 });
  });

  it('counts a visit on its local start day and the visitor on every local day with an event', async () => {
    // 23:50 and 00:10 Berlin time on 2026-03-10/11.
    const late = Date.UTC(2026, 2, 10, 22, 50);
    await run([trackedEvent({ ts: late, event_id: 'n1' }), trackedEvent({ ts: late + 20 * MIN, event_id: 'n2' })]);
    expect(await day('2026-03-10')).toEqual({ visits: 1, pageviews: 2, visitors: 1 });
    expect(await day('2026-03-11')).toEqual({ visits: 0, pageviews: 0, visitors: 1 });
    const [month] = await readRollups(conn, 'example.com', 'visits', 'M', '2026-03', '2026-03');
    expect(month?.visits).toBe(1);
  });

  it('keeps visitors apart and counts distinct visitors', async () => {
    await run([
      ev(0),
      ev(1, { visitor_id: 'visitor-b' }),
      ev(2, { visitor_id: 'visitor-b', path: '/b' }),
      ev(3, { visitor_id: 'visitor-c', country: 'FR' }),
    ]);
    expect(await day('2026-03-10')).toEqual({ visits: 3, pageviews: 4, visitors: 3 });
    expect(await counts('country', '2026-03-10')).toEqual({ DE: 2, FR: 1 });
  });

  it('changes nothing for a duplicated batch, replayed events, or the halves of a bisected batch', async () => {
    const batch = [ev(0), ev(5, { visitor_id: 'visitor-b' }), ev(50), ev(52, { path: '/p' })];
    await run(batch, '500');
    const before = {
      day: await day('2026-03-10'),
      channel: await counts('channel', '2026-03-10'),
      visits: await visits(),
      b: await visits('visitor-b'),
    };
    await run(batch, '500');
    await run(batch.slice(0, 2), '300');
    await run(batch.slice(2), '500');
    await run(batch, '900');
    expect({
      day: await day('2026-03-10'),
      channel: await counts('channel', '2026-03-10'),
      visits: await visits(),
      b: await visits('visitor-b'),
    }).toEqual(before);
  });

  it('skips malformed records and events of unknown sites', async () => {
    const outcome = await sessionizeBatch(deps, { shard: 's', sequence: '1' }, [
      { sequenceNumber: '1', data: Buffer.from('not json') },
      { sequenceNumber: '1', data: Buffer.from(JSON.stringify(ev(0, { site: 'gone.com' }))) },
      { sequenceNumber: '1', data: Buffer.from(JSON.stringify(ev(1))) },
    ]);
    expect(outcome).toMatchObject({ events: 2, malformed: 1, orphaned: 1, visitsWritten: 1 });
  });
});
