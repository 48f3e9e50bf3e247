import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { CHUNK_BYTES, DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { itemBytes, readRollups } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { sessionizeBatch, type SessionizeDeps } from '../../lambdas/services/sessionize.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { inputSize } from '../support/suite.js';

const T0 = Date.UTC(2026, 2, 10, 9, 0);
/** A VISIT item's summary (keys, attributes, landing page, counts) is well under this for these events. */
const SUMMARY_BYTES = 1024;
/**
 * A long visit's events, written in batches of 5,000: two batches and some 170 chunks in `npm test`, the scale of
 * a bot's visit in the reliability suite (`inputSize`).
 */
const LONG = inputSize(10_000, 50_000);
/**
 * One batch of one visitor: large enough in the reliability suite that spreading its events into one call's
 * arguments would throw RangeError (V8's limit is near 120,000 arguments); `npm test` keeps the one-batch visit.
 */
const FLOOD = inputSize(20_000, 200_000);

/** Events of one visitor `gapMs` apart, ids in time order. */
const stream = (
  visitor: string,
  from: number,
  count: number,
  gapMs: number,
  path = (i: number) => `/p/${i % 40}`,
): TrackedEvent[] =>
  Array.from({ length: count }, (_, i) =>
    trackedEvent({
      ts: T0 + (from + i) * gapMs,
      event_id: `${visitor}-${String(from + i).padStart(7, '0')}`,
      visitor_id: visitor,
      path: path(from + i),
      type: i % 10 === 9 ? 'goal' : 'pageview',
      goal: i % 10 === 9 ? 'Click' : null,
    }),
  );

describe('bounded VISIT items', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let deps: SessionizeDeps;
  let seq = 0;

  beforeEach(async () => {
    // Parsing 200,000 records keeps the event loop busy past the server's keep-alive: let the SDK retry a reset socket.
    ({ conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }], { maxAttempts: 3 }));
    deps = {
      sites: new DynamoConfigStore(conn),
      visits: new DynamoVisitStore(conn),
      rollups: new DynamoRollupStore(conn),
    };
    seq = 0;
  });
  afterEach(async () => close());

  const run = (events: readonly TrackedEvent[]) => {
    const sequence = String(++seq * 100);
    return sessionizeBatch(
      deps,
      { shard: 'shard-1', sequence },
      events.map((e) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(e)) })),
    );
  };

  /** Every visit item read back from dynalite, with its size as DynamoDB counts it. */
  async function visitItemSizes(): Promise<Array<{ type: string; bytes: number }>> {
    return (await scanAll(conn))
      .filter((i) => i.type === 'VISIT' || i.type === 'VISIT_CHUNK')
      .map((i) => ({ type: String(i.type), bytes: itemBytes(i) }));
  }

  it('stores a visit of 50,000 events (10,000 in npm test) in bounded items and reads it back whole, in order', async () => {
    const events = stream('bot', 0, LONG, 1000);
    for (let i = 0; i < events.length; i += 5000) await run(events.slice(i, i + 5000));
    const [visit, ...rest] = await deps.visits.visitsAround('example.com', 'bot', 0, Number.MAX_SAFE_INTEGER);
    expect(rest).toEqual([]);
    expect(visit?.events.length).toBe(LONG);
    expect(visit?.events.map((e) => e.id)).toEqual(events.map((e) => e.event_id));
    const sizes = await visitItemSizes();
    expect(sizes.filter((s) => s.type === 'VISIT')).toHaveLength(1);
    // About 58 form-1 rows of these events in 2 KB: some 870 chunks for 50,000 events.
    expect(sizes.filter((s) => s.type === 'VISIT_CHUNK').length).toBeGreaterThan(LONG / 100);
    expect(Math.max(...sizes.filter((s) => s.type === 'VISIT_CHUNK').map((s) => s.bytes))).toBeLessThanOrEqual(
      CHUNK_BYTES + 200,
    );
    expect(Math.max(...sizes.filter((s) => s.type === 'VISIT').map((s) => s.bytes))).toBeLessThanOrEqual(
      CHUNK_BYTES + SUMMARY_BYTES,
    );
    const [day] = await readRollups(conn, 'example.com', 'visits', 'D', '2026-03-10', '2026-03-10');
    expect(day).toMatchObject({ visits: 1, pageviews: LONG * 0.9 });
    // The timeline reads the same visit, chunks included.
    const timeline = await new DynamoReportStore(conn).visitor('example.com', 'bot');
    expect(timeline.visits.map((v) => v.events.length)).toEqual([LONG]);
  }, 120_000);

  it('takes 200,000 events (20,000 in npm test) of one visitor in one batch (no RangeError from argument spreads)', async () => {
    const events = stream('flood', 0, FLOOD, 100);
    const outcome = await run(events);
    expect(outcome).toMatchObject({ events: FLOOD, visitors: 1, visitsWritten: 1 });
    const [visit] = await deps.visits.visitsAround('example.com', 'flood', 0, Number.MAX_SAFE_INTEGER);
    expect(visit?.events.length).toBe(FLOOD);
    for (const s of await visitItemSizes()) expect(s.bytes).toBeLessThanOrEqual(CHUNK_BYTES + SUMMARY_BYTES);
  }, 120_000);

  it('rewrites only the end of a visit that grows, and moves a visit whole to a new chunk generation when a late event lands inside it', async () => {
    const events = stream('v', 0, 300, 1000);
    await run(events.slice(0, 200));
    const before = new Map(
      (await scanAll(conn)).filter((i) => i.type === 'VISIT_CHUNK').map((i) => [String(i.sk), i.z]),
    );
    await run(events.slice(200));
    const after = (await scanAll(conn)).filter((i) => i.type === 'VISIT_CHUNK');
    // Every chunk written by the first batch is still there, unchanged.
    for (const [sk, z] of before) expect(after.find((i) => i.sk === sk)?.z).toEqual(z);
    expect(after.length).toBeGreaterThan(before.size);

    // A late event between two early events: every chunk moves to generation 1, generation 0 is gone.
    const late = trackedEvent({ ts: T0 + 1500, event_id: 'v-late', visitor_id: 'v', path: '/late' });
    await run([late]);
    const chunks = (await scanAll(conn)).filter((i) => i.type === 'VISIT_CHUNK');
    expect(chunks.every((i) => String(i.sk).includes('#1#'))).toBe(true);
    const [visit] = await deps.visits.visitsAround('example.com', 'v', 0, Number.MAX_SAFE_INTEGER);
    expect(visit?.events.map((e) => e.id)).toEqual(
      [events[0], events[1], late, ...events.slice(2)].map((e) => e?.event_id),
    );

    // An earlier event moves the visit's start: the old VISIT item and its chunks are deleted.
    await run([trackedEvent({ ts: T0 - 60_000, event_id: 'v-early', visitor_id: 'v', path: '/early' })]);
    const items = (await scanAll(conn)).filter((i) => i.type === 'VISIT' || i.type === 'VISIT_CHUNK');
    expect(items.filter((i) => i.type === 'VISIT').map((i) => String(i.sk).slice(16))).toEqual(['v-early']);
    expect(items.every((i) => String(i.sk).includes('v-early'))).toBe(true);
    const [moved] = await deps.visits.visitsAround('example.com', 'v', 0, Number.MAX_SAFE_INTEGER);
    expect(moved?.events.length).toBe(302);
    expect(moved?.landing_page).toBe('/early');
  });
});
