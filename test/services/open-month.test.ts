import { describe, expect, it } from 'vitest';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { EXACT_LIMIT } from '../../lambdas/domain/visitor-sketch.js';
import type { Granularity, RollupDelta } from '../../lambdas/domain/rollup.js';
import { goals, overview, timeseries } from '../../lambdas/services/reports.js';
import { memoryTable } from '../support/dynamo.js';
import { CapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';

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
  const meter = new CapacityMeter();
  const db = await memoryTable([{}], { capacityMeter: meter });
  try {
    const rollups = new DynamoRollupStore(db.conn, 2);
    const deltas = Object.entries(days).flatMap(([day, v]) => [delta('D', day, v), delta('M', day.slice(0, 7), v)]);
    await rollups.apply(deltas, { shard: 'shard-a', sequence: '1' });
    await rollups.compact(SITE);
    const range = { from: '2026-02-20', to: '2026-03-03' };
    const ask = async (clock: number) => {
      const deps = () => ({
        sites: new DynamoConfigStore(db.conn),
        store: new DynamoReportStore(db.conn),
        rates: async () => () => null,
        clock: () => clock,
      });
      const { result: series, total: cost } = await meter.measure(() =>
        timeseries(deps(), 'acme', SITE, range, 'month'),
      );
      const { result: totals, total: overviewCost } = await meter.measure(() => overview(deps(), 'acme', SITE, range));
      const goalVisitors = (await goals(deps(), 'acme', SITE, range, null, 10)).visitors;
      return {
        points: series.points,
        cost,
        totals: totals.current,
        overviewCost,
        goalVisitors,
      };
    };
    return { open: await ask(Date.UTC(2026, 2, 3, 12)), ended: await ask(Date.UTC(2026, 2, 4, 12)) };
  } finally {
    await db.close();
  }
}

describe('a range reaching today: its last month read from its monthly item', () => {
  it("a day past the exact sets' limit: the month's count, the same points as from the days' sets, fewer bytes", async () => {
    const { open, ended } = await bothWays({
      '2026-02-20': ['a', 'b'],
      '2026-03-01': [...ids('x', 600), 'a'],
      '2026-03-02': [...ids('x', EXACT_LIMIT + 200), 'b'],
      '2026-03-03': ids('y', 300),
    });
    expect(open.points).toEqual(ended.points);
    expect(open.totals).toEqual(ended.totals);
    expect(open.goalVisitors).toBe(ended.totals.visitors);
    expect(open.points.map((p) => [p.start, p.sessions])).toEqual([
      ['2026-02', 2],
      ['2026-03', 601 + EXACT_LIMIT + 201 + 300],
    ]);
    // The union of the March days (a register sketch) estimates their 1,502 distinct visitors.
    expect(Math.abs(open.points[1]!.visitors - 1502)).toBeLessThan(30);
    // No whole month in this range: the open month's item is a Query of its own (else it joins the months').
    expect(open.cost.requests).toBe(ended.cost.requests + 1);
    // Response bytes at the client: the days' three register sets against the month's one, each response's envelope on both sides.
    expect(open.cost.bytesReceived).toBeLessThan(ended.cost.bytesReceived / 2);
  });

  it("small days: their sets read again, so the point is their exact union, not the month's estimate", async () => {
    // 1,500 distinct visitors over three exact days: the month's set is registers, the days' union exact.
    const { open, ended } = await bothWays({
      '2026-03-01': ids('p', 700),
      '2026-03-02': ids('q', 500),
      '2026-03-03': [...ids('r', 300), 'p1'],
    });
    expect(open.points).toEqual(ended.points);
    expect(open.points.at(-1)!.visitors).toBe(1500);
    expect(open.totals).toEqual(ended.totals);
    expect(open.totals.visitors).toBe(1500);
  });

  it("the overview: the month's set instead of its days' when another day's set is registers too", async () => {
    const { open, ended } = await bothWays({
      '2026-02-20': ids('x', EXACT_LIMIT + 100),
      '2026-03-01': [...ids('x', 300), 'a'],
      '2026-03-02': ids('z', 900),
      '2026-03-03': ids('y', 300),
    });
    expect(open.totals).toEqual(ended.totals);
    expect(open.goalVisitors).toBe(ended.goalVisitors);
    // One set read for March instead of three (the month's Query replaces the days').
    expect(open.overviewCost.requests).toBe(ended.overviewCost.requests);
    expect(open.overviewCost.bytesReceived).toBeLessThan(ended.overviewCost.bytesReceived);
  });
});
