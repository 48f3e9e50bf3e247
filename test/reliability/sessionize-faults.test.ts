import { describe, expect, it } from 'vitest';
import { BatchWriteCommand, PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import { batchWrite } from '../../lambdas/adapters/dynamo/batch.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { ROLLUP_PART_BYTES, valueBytes } from '../../lambdas/adapters/dynamo/rollup-fold.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { sessionizeBatch } from '../../lambdas/services/sessionize.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { bucketOf } from '../../lambdas/domain/rollup.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 10, 22, 40); // 23:40 in Berlin: visits cross local midnight

const e = (id: string, minutes: number, visitor: string, overrides: Partial<TrackedEvent> = {}) =>
  trackedEvent({ event_id: id, ts: T0 + minutes * MIN, visitor_id: visitor, path: `/${id}`, ...overrides });

/** Three batches: new visits, a late event that merges two visits and re-attributes one, a second day. */
const BATCHES: TrackedEvent[][] = [
  [
    e('a1', 0, 'visitor-a', { channel: 'Search' }),
    e('a2', 45, 'visitor-a'),
    e('b1', 5, 'visitor-b'),
    e('c1', 10, 'visitor-c', { type: 'goal', goal: 'Signup' }),
  ],
  [
    e('a0', -5, 'visitor-a', { channel: 'AI' }),
    e('a3', 20, 'visitor-a'),
    e('b2', 15, 'visitor-b', { country: 'FR' }),
    e('d1', 30, 'visitor-d'),
  ],
  [
    e('c2', 24 * 60, 'visitor-c'),
    e('b3', 24 * 60 + 1, 'visitor-b'),
    e('a4', 46, 'visitor-a', { type: 'goal', goal: 'Outbound Link: Click', link: 'https://x.org' }),
  ],
];

class Crash extends Error {}

/** Makes the k-th write (0-based) of the connection throw, as a process dying at that point would. */
function crashAt(conn: DynamoConnection, k: number): { writes: () => number; disarm: () => void } {
  const send = conn.doc.send.bind(conn.doc);
  let writes = 0;
  let armed = true;
  conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
    if (command instanceof PutCommand || command instanceof BatchWriteCommand) {
      if (armed && writes === k) throw new Crash(`crash at write ${k}`);
      writes++;
    }
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as typeof conn.doc.send;
  return { writes: () => writes, disarm: () => void ((armed = false), (conn.doc.send = send)) };
}

/**
 * Page paths of 2,000 characters that all hash to bucket 0 of `page` (and so
 * of `landing_page`, whose 4 buckets divide page's 8): 16 fill an item's
 * `ROLLUP_PART_BYTES`, so one bucket splits into many parts with few events.
 */
const LONG_PATHS = Array.from({ length: 2000 }, (_, i) => `/${String(i).padStart(4, '0')}/${'p'.repeat(1994)}`).filter(
  (p) => bucketOf('page', p) === 0,
);
const longPath = (i: number) => LONG_PATHS[i] ?? '/';

/**
 * Batches whose page and landing-page buckets outgrow one item: 50 distinct
 * long pages viewed in one visit over two batches, 24 visitors landing on
 * others, and a late event that moves a visit's landing page (a −1 on a
 * value in one part, a +1 on a value in another).
 */
const SPLIT_BATCHES: TrackedEvent[][] = [
  [
    ...Array.from({ length: 30 }, (_, i) => e(`s${i}`, i * 0.5, 'visitor-s', { path: longPath(i) })),
    ...Array.from({ length: 12 }, (_, i) => e(`l${i}`, i, `visitor-l${i}`, { path: longPath(100 + i) })),
  ],
  [
    ...Array.from({ length: 20 }, (_, i) => e(`s${30 + i}`, 16 + i * 0.5, 'visitor-s', { path: longPath(30 + i) })),
    ...Array.from({ length: 12 }, (_, i) => e(`m${i}`, 5 + i, `visitor-m${i}`, { path: longPath(150 + i) })),
    e('l0-late', -1, 'visitor-l0', { path: longPath(199) }),
  ],
];

async function runBatch(conn: DynamoConnection, index: number, batches: TrackedEvent[][] = BATCHES) {
  const deps = {
    sites: new DynamoConfigStore(conn),
    visits: new DynamoVisitStore(conn),
    rollups: new DynamoRollupStore(conn, 1),
  };
  const sequence = String((index + 1) * 1000);
  const batch = batches[index] ?? [];
  await sessionizeBatch(
    deps,
    { shard: 'shard-1', sequence },
    batch.map((ev) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(ev)) })),
  );
}

/** Every batch once, without faults, counting each batch's writes (its crash points). */
async function cleanRun() {
  const clean = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }]);
  const writesPerBatch: number[] = [];
  for (let i = 0; i < BATCHES.length; i++) {
    const counter = crashAt(clean.conn, Number.POSITIVE_INFINITY);
    await runBatch(clean.conn, i);
    writesPerBatch.push(counter.writes());
    counter.disarm();
  }
  return { clean, writesPerBatch };
}

/**
 * The table with each dimension bucket's parts taken together: the sum of its
 * values' counts (each value must be in exactly one part, and each part's
 * values within `ROLLUP_PART_BYTES`). Which part a value went to may differ
 * after a crash (the retry can place a value whose part was never written in
 * a later part); what the bucket counts may not.
 */
function byBucket(items: Record<string, unknown>[]): Record<string, unknown>[] {
  const buckets = new Map<string, { pk: unknown; sk: string; counts: Record<string, number> }>();
  const out: Record<string, unknown>[] = [];
  for (const item of items) {
    const metric = String(item.pk).split('#').at(-1);
    if (item.type !== 'ROLLUP' || metric === 'visits' || metric === 'goal') {
      out.push(item);
      continue;
    }
    const [g, period, b] = String(item.sk).split('#');
    const id = `${item.pk}|${g}#${period}#${b}`;
    const counts = JSON.parse(String(item.counts)) as Record<string, number>;
    expect(
      Object.keys(counts).reduce((n, v) => n + valueBytes(v), 0),
      `${item.pk} ${item.sk}`,
    ).toBeLessThanOrEqual(ROLLUP_PART_BYTES);
    const bucket = buckets.get(id) ?? { pk: item.pk, sk: `${g}#${period}#${b}`, counts: {} };
    const merged = bucket.counts;
    for (const [v, n] of Object.entries(counts)) {
      expect(v in merged, `${id}: ${v.slice(0, 8)} in two parts`).toBe(false);
      merged[v] = n;
    }
    buckets.set(id, bucket);
  }
  const merged = [...buckets.values()].map(
    (b) =>
      ({ ...b, counts: Object.fromEntries(Object.entries(b.counts).sort(([a], [c]) => (a < c ? -1 : 1))) }) as Record<
        string,
        unknown
      >,
  );
  return [...out, ...merged].sort((a, b) =>
    `${String(a.pk)}|${String(a.sk)}`.localeCompare(`${String(b.pk)}|${String(b.sk)}`),
  );
}

describe('sessionizer fault injection: a crash at any write point, then a retry, ends as a clean run', () => {
  it('matches the clean run item for item, for every write point of every batch', async () => {
    const { clean, writesPerBatch } = await cleanRun();
    const expected = await scanAll(clean.conn, ['created']);
    await clean.close();
    // A delta part, the shard's log state, the visits: each a crash point.
    expect(writesPerBatch.every((n) => n >= 3)).toBe(true);

    let scenarios = 0;
    for (let i = 0; i < BATCHES.length; i++) {
      for (let k = 0; k < (writesPerBatch[i] ?? 0); k++) {
        const db = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }]);
        for (let j = 0; j < i; j++) await runBatch(db.conn, j);
        const fault = crashAt(db.conn, k);
        await expect(runBatch(db.conn, i)).rejects.toBeInstanceOf(Crash);
        fault.disarm();
        await runBatch(db.conn, i); // the retry
        await runBatch(db.conn, i); // and a duplicate delivery for good measure
        for (let j = i + 1; j < BATCHES.length; j++) await runBatch(db.conn, j);
        expect(await scanAll(db.conn, ['created']), `batch ${i}, crash at write ${k}`).toEqual(expected);
        await db.close();
        scenarios++;
      }
    }
    expect(scenarios).toBe(writesPerBatch.reduce((a, b) => a + b, 0));
  }, 180_000);

  it('with the delta log compacted between batches, after a crash, and crashing itself, ends as a clean run', async () => {
    const compact = (conn: DynamoConnection) => new DynamoRollupStore(conn, 1).compact('example.com');
    const { clean, writesPerBatch } = await cleanRun();
    const counter = crashAt(clean.conn, Number.POSITIVE_INFINITY);
    expect((await compact(clean.conn)).parts).toBe(BATCHES.length);
    const compactionWrites = counter.writes();
    counter.disarm();
    // `ver` counts compactions, which differ between the runs; everything else must not.
    const expected = await scanAll(clean.conn, ['created', 'ver']);
    await clean.close();
    expect(expected.filter((i) => i.type === 'ROLLUP_DELTA')).toEqual([]);
    expect(expected.filter((i) => i.type === 'ROLLUP').length).toBeGreaterThan(20);

    // A crash in batch i at write k, with compactions before the retry (which folds and deletes what the
    // failed attempt logged, so the retry logs it again) and after every batch.
    for (let i = 0; i < BATCHES.length; i++) {
      for (let k = 0; k < (writesPerBatch[i] ?? 0); k++) {
        const db = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }]);
        for (let j = 0; j < i; j++) {
          await runBatch(db.conn, j);
          await compact(db.conn);
        }
        const fault = crashAt(db.conn, k);
        await expect(runBatch(db.conn, i)).rejects.toBeInstanceOf(Crash);
        fault.disarm();
        await compact(db.conn);
        await runBatch(db.conn, i);
        await runBatch(db.conn, i);
        await compact(db.conn);
        for (let j = i + 1; j < BATCHES.length; j++) await runBatch(db.conn, j);
        await compact(db.conn);
        expect(
          await scanAll(db.conn, ['created', 'ver']),
          `batch ${i}, crash at write ${k}, compacted between`,
        ).toEqual(expected);
        await db.close();
      }
    }

    // A crash of the compactor at each of its writes, then a compaction that finishes.
    for (let k = 0; k < compactionWrites; k++) {
      const db = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }]);
      for (let j = 0; j < BATCHES.length; j++) await runBatch(db.conn, j);
      const fault = crashAt(db.conn, k);
      await expect(compact(db.conn)).rejects.toBeInstanceOf(Crash);
      fault.disarm();
      await compact(db.conn);
      expect(await scanAll(db.conn, ['created', 'ver']), `compaction crash at write ${k}`).toEqual(expected);
      await db.close();
    }
  }, 300_000);
  it('with dimension buckets split into parts: a crash of the compactor at each write, then a compaction that finishes, counts every value once', async () => {
    const compact = (conn: DynamoConnection) => new DynamoRollupStore(conn, 1).compact('example.com');
    // The state before the compaction under test: the first batch compacted (its parts stored), the second logged.
    const before = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }]);
    await runBatch(before.conn, 0, SPLIT_BATCHES);
    await compact(before.conn);
    await runBatch(before.conn, 1, SPLIT_BATCHES);
    const start: Record<string, unknown>[] = [];
    for await (const page of paginateScan({ client: before.conn.doc }, { TableName: before.conn.table }))
      start.push(...(page.Items ?? []));
    const counter = crashAt(before.conn, Number.POSITIVE_INFINITY);
    await compact(before.conn);
    const compactionWrites = counter.writes();
    counter.disarm();
    const table = await scanAll(before.conn, ['created', 'ver']);
    await before.close();
    // The page buckets did split: parts beyond the first, each within the bound (checked by byBucket).
    const parts = table.filter((i) => i.type === 'ROLLUP' && String(i.sk).split('#').length === 4);
    expect(parts.filter((i) => String(i.pk).endsWith('#page')).length).toBeGreaterThan(6);
    expect(parts.filter((i) => String(i.pk).endsWith('#landing_page')).length).toBeGreaterThan(0);
    const logical = (items: Record<string, unknown>[]) =>
      byBucket(items.map((i) => (i.type === 'ROLLUP' ? { ...i, seq: undefined, p: undefined } : i)));
    const expected = logical(table);
    const pages = expected.find((i) => i.sk === 'D#2026-03-10#0' && String(i.pk).endsWith('#page'))?.counts as Record<
      string,
      number
    >;
    expect(Object.keys(pages).length).toBeGreaterThan(3 * 16);

    for (let k = 0; k < compactionWrites; k++) {
      const db = await memoryTable([{ domain: 'example.com', timezone: 'Europe/Berlin' }]);
      await batchWrite(
        db.conn,
        start.map((Item) => ({ PutRequest: { Item } })),
      );
      const fault = crashAt(db.conn, k);
      await expect(compact(db.conn)).rejects.toBeInstanceOf(Crash);
      fault.disarm();
      await compact(db.conn);
      expect(
        logical(await scanAll(db.conn, ['created', 'ver'])),
        `split compaction crash at write ${k} of ${compactionWrites}`,
      ).toEqual(expected);
      await db.close();
    }
  }, 120_000);
});
