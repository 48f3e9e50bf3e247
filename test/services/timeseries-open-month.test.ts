import { describe, expect, it } from 'vitest';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { EXACT_LIMIT } from '../../lambdas/domain/visitor-sketch.js';
import type { Granularity, RollupDelta } from '../../lambdas/domain/rollup.js';
import { timeseries } from '../../lambdas/services/reports.js';
import { memoryTable } from '../support/dynamo.js';

const SITE = 'example.com';

const delta = (granularity: Granularity, period: string, ids: readonly string[]): RollupDelta => ({
  key: { site: SITE, metric: 'visits', granularity, period, bucket: 0 },
  visits: ids.length,
  pageviews: 2 * ids.length,
  counters: new Map(),
  values: new Map(),
  visitors: new Set(ids),
  valueVisitors: new Map(),
});

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/**
 * The series by month of 2026-02-20..2026-03-03 (Europe/Berlin) over days whose visitors are
 * `days`, asked on 2026-03-03 (March is the open month: its item is read, not its days' sets)
 * and on 2026-03-04 (the range ended: the days' sets are read, as before), with each read's bytes.
 */
async function bothWays(days: Record<string, readonly string[]>) {
  const db = await memoryTable([{ visit_counts: true }]);
  try {
    const rollups = new DynamoRollupStore(db.conn, 2);
    const deltas = Object.entries(days).flatMap(([day, v]) => [delta('D', day, v), delta('M', day.slice(0, 7), v)]);
    await rollups.apply(deltas, { shard: 'shard-a', sequence: '1' });
    await rollups.compact(SITE);
    const ask = async (clock: number) => {
      const store = new DynamoReportStore(db.conn);
      const deps = { sites: new DynamoConfigStore(db.conn), store, rates: async () => () => null, clock: () => clock };
      const series = await timeseries(deps, 'acme', SITE, { from: '2026-02-20', to: '2026-03-03' }, 'month');
      return { points: series.points, cost: { ...store.cost } };
    };
    return { open: await ask(Date.UTC(2026, 2, 3, 12)), ended: await ask(Date.UTC(2026, 2, 4, 12)) };
  } finally {
    await db.close();
  }
}

describe('timeseries by month: the open month read from its monthly item', () => {
  it("a day past the exact sets' limit: the month's count, the same points as from the days' sets, fewer bytes", async () => {
    const { open, ended } = await bothWays({
      '2026-02-20': ['a', 'b'],
      '2026-03-01': [...ids('x', 600), 'a'],
      '2026-03-02': [...ids('x', EXACT_LIMIT + 200), 'b'],
      '2026-03-03': ids('y', 300),
    });
    expect(open.points).toEqual(ended.points);
    expect(open.points.map((p) => [p.start, p.sessions])).toEqual([
      ['2026-02', 2],
      ['2026-03', 601 + EXACT_LIMIT + 201 + 300],
    ]);
    // The union of the March days (a register sketch) estimates their 1,502 distinct visitors.
    expect(Math.abs(open.points[1]!.visitors - 1502)).toBeLessThan(30);
    // No whole month in this range: the open month's item is a Query of its own (else it joins the months').
    expect(open.cost.requests).toBe(ended.cost.requests + 1);
    expect(open.cost.bytes).toBeLessThan(ended.cost.bytes / 4);
  }, 60_000);

  it("small days: their sets read again, so the point is their exact union, not the month's estimate", async () => {
    // 1,500 distinct visitors over three exact days: the month's set is registers, the days' union exact.
    const { open, ended } = await bothWays({
      '2026-03-01': ids('p', 700),
      '2026-03-02': ids('q', 500),
      '2026-03-03': [...ids('r', 300), 'p1'],
    });
    expect(open.points).toEqual(ended.points);
    expect(open.points.at(-1)!.visitors).toBe(1500);
  }, 60_000);
});
