import { describe, expect, it } from 'vitest';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { sessionizeBatch } from '../../lambdas/services/sessionize.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 10, 22, 40); // 23:40 in Berlin: visits cross local midnight

const e = (id: string, minutes: number, visitor: string, overrides: Partial<TrackedEvent> = {}) =>
  trackedEvent({ event_id: id, ts: T0 + minutes * MIN, visitor_id: visitor, path: `/${id}`, ...overrides });

/** Three batches: new visits, a late event that merges two visits and re-attributes one, a second day. */
const BATCHES: TrackedEvent[][] = [
  [e('a1', 0, 'visitor-a', { channel: 'Search' }), e('a2', 45, 'visitor-a'), e('b1', 5, 'visitor-b'), e('c1', 10, 'visitor-c', { type: 'goal', goal: 'Signup' })],
  [e('a0', -5, 'visitor-a', { channel: 'AI' }), e('a3', 20, 'visitor-a'), e('b2', 15, 'visitor-b', { country: 'FR' }), e('d1', 30, 'visitor-d')],
  [e('c2', 24 * 60, 'visitor-c'), e('b3', 24 * 60 + 1, 'visitor-b'), e('a4', 46, 'visitor-a', { type: 'goal', goal: 'Outbound Link: Click', link: 'https://x.org' })],
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

async function runBatch(conn: DynamoConnection, index: number) {
  const deps = { sites: new DynamoConfigStore(conn), visits: new DynamoVisitStore(conn), rollups: new DynamoRollupStore(conn, 1) };
  const sequence = String((index + 1) * 1000);
  const batch = BATCHES[index] ?? [];
  await sessionizeBatch(deps, { shard: 'shard-1', sequence }, batch.map((ev) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify(ev)) })));
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
        expect(await scanAll(db.conn, ['created', 'ver']), `batch ${i}, crash at write ${k}, compacted between`).toEqual(expected);
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
});
