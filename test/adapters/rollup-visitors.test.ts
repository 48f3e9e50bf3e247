import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { countsSk, rollupPk } from '../../lambdas/adapters/dynamo/rollup-keys.js';
import { readRollups, readVisitCounts } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import {
  addVisitors,
  countVisitors,
  deserializeSketch,
  emptySketch,
  unionSketches,
  type VisitorSketch,
} from '../../lambdas/domain/visitor-sketch.js';
import { overview, timeseries, type ReportDeps } from '../../lambdas/services/reports.js';
import type { RollupDelta } from '../../lambdas/domain/rollup.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { propertyRuns } from '../support/suite.js';

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
const SITE = 'example.com';
const DAYS = ['2026-03-10', '2026-03-11', '2026-03-12'];

class Crash extends Error {}

/** Makes the k-th write (0-based) of the connection throw, as a compactor dying at that point would. */
function crashAt(conn: DynamoConnection, k: number): () => void {
  const send = conn.doc.send.bind(conn.doc);
  let writes = 0;
  conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
    if (command instanceof PutCommand || command instanceof BatchWriteCommand) {
      if (writes === k) throw new Crash(`crash at write ${k}`);
      writes++;
    }
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as typeof conn.doc.send;
  return () => void (conn.doc.send = send);
}

const visitsDelta = (day: string, visits: number, pageviews: number, visitors: Iterable<string>): RollupDelta => ({
  key: { site: SITE, metric: 'visits', granularity: 'D', period: day, bucket: 0 },
  visits,
  pageviews,
  counters: new Map([['bounces', visits]]),
  values: new Map(),
  visitors: new Set(visitors),
  valueVisitors: new Map(),
});

/** What the reads must equal: per day the sums and the visitor set, computed directly from every delta logged. */
interface Expected {
  visits: number;
  pageviews: number;
  ids: Set<string>;
}

const sketchOf = (ids: Iterable<string>): VisitorSketch => addVisitors(emptySketch(), ids);

describe('visits rollups: a counts item with the distinct count beside the item with the visitor set', () => {
  it('for any deltas, compaction crash points and pending deltas, a series and an overview read what a direct computation gives', async () => {
    console.log(`visits rollup split property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const delta = fc.record({
      shard: fc.constantFrom('shard-a', 'shard-b'),
      day: fc.nat(DAYS.length - 1),
      visits: fc.integer({ min: -1, max: 3 }),
      pageviews: fc.nat(5),
      visitors: fc.array(fc.nat(30), { maxLength: 6 }),
      // Past 1,000 ids a set turns into HyperLogLog registers: the count is then the sketch's estimate.
      many: fc.nat(5).map((n) => n === 0),
    });
    const round = fc.record({
      deltas: fc.array(delta, { minLength: 1, maxLength: 4 }),
      // null: no compaction this round; k: the compactor crashes at its k-th write (a k past its writes: it finishes); retry: another run finishes it.
      crash: fc.option(fc.nat(8), { nil: null }),
      retry: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(round, { minLength: 1, maxLength: 4 }), async (rounds) => {
        const db = await memoryTable([{}]);
        try {
          const { conn } = db;
          const store = new DynamoRollupStore(conn, 2);
          const expected = DAYS.map((): Expected => ({ visits: 0, pageviews: 0, ids: new Set() }));
          const touched = new Set<string>();
          const sequence: Record<string, number> = { 'shard-a': 0, 'shard-b': 0 };
          for (const [r, { deltas, crash, retry }] of rounds.entries()) {
            for (const shard of ['shard-a', 'shard-b']) {
              const batch = deltas.filter((d) => d.shard === shard);
              if (batch.length === 0) continue;
              const logged = batch.map((d) => {
                const day = DAYS[d.day] ?? '';
                touched.add(day);
                const ids = [
                  ...d.visitors.map((v) => `v${v}`),
                  ...(d.many ? Array.from({ length: 1100 }, (_, i) => `r${r}-${i}`) : []),
                ];
                const e = expected[d.day] as Expected;
                e.visits += d.visits;
                e.pageviews += d.pageviews;
                for (const id of ids) e.ids.add(id);
                return visitsDelta(day, d.visits, d.pageviews, ids);
              });
              sequence[shard] = (sequence[shard] ?? 0) + 1;
              await store.apply(logged, { shard, sequence: String(sequence[shard]) });
            }
            if (crash !== null) {
              const restore = crashAt(conn, crash);
              await store.compact(SITE).catch((error: unknown) => {
                if (!(error instanceof Crash)) throw error;
              });
              restore();
              if (retry) await store.compact(SITE);
            }
            await assertReads(conn, expected, `round ${r}`);
          }
          await store.compact(SITE);
          await assertReads(conn, expected, 'compacted');
          // Compacted: every bucket a delta reached has its counts item and its set packed.
          const items = (await scanAll(conn)).filter(
            (i) => String(i.pk) === rollupPk(SITE, 'visits') && touched.has(String(i.sk).split('#').at(-2) ?? ''),
          );
          for (const item of items.filter((i) => i.type === 'ROLLUP')) {
            expect(item).toHaveProperty('vz');
            expect(item).not.toHaveProperty('ids');
            expect(item).not.toHaveProperty('hll');
          }
          expect(items.filter((i) => i.type === 'ROLLUP_COUNTS').map((i) => i.sk)).toEqual(
            items.filter((i) => i.type === 'ROLLUP').map((i) => countsSk('D', String(i.sk).split('#')[1] ?? '', 0)),
          );
        } finally {
          await db.close();
        }
      }),
      { seed, numRuns: propertyRuns(4, 12), endOnFailure: true },
    );
  }, 300_000);
});

/** The series' read (counts, no sets), the overview's (sets) and the two reports themselves, against `expected`. */
async function assertReads(conn: DynamoConnection, expected: readonly Expected[], when: string): Promise<void> {
  const last = DAYS.at(-1) ?? '';
  const first = DAYS[0] ?? '';
  // The series' read (counts items) and the overview's (the items with their sets).
  const counts = new Map((await readVisitCounts(conn, SITE, 'D', first, last)).map((r) => [r.period, r]));
  const sets = new Map(
    (await readRollups(conn, SITE, 'visits', 'D', first, last)).map((r) => [
      r.period,
      { ...r, visitors: countVisitors(deserializeSketch(r)) },
    ]),
  );
  for (const [name, read] of [
    ['counts', counts],
    ['sets', sets],
  ] as const) {
    for (const [i, day] of DAYS.entries()) {
      const e = expected[i] as Expected;
      const got = read.get(day);
      const want = { visits: e.visits, pageviews: e.pageviews, visitors: countVisitors(sketchOf(e.ids)) };
      if (!got) expect(want, `${when}: ${day} absent from ${name}`).toEqual({ visits: 0, pageviews: 0, visitors: 0 });
      else
        expect(
          { visits: got.visits, pageviews: got.pageviews, visitors: got.visitors },
          `${when}: ${day}, ${name}`,
        ).toEqual(want);
    }
  }
  const deps: ReportDeps = {
    sites: new DynamoConfigStore(conn),
    store: new DynamoReportStore(conn),
    rates: async () => () => null,
    clock: () => Date.UTC(2026, 2, 20),
  };
  const series = await timeseries(deps, 'acme', SITE, { from: first, to: last }, 'day');
  expect(
    series.points.map((p) => [p.start, p.sessions, p.pageviews, p.visitors]),
    `${when}: series`,
  ).toEqual(
    DAYS.map((day, i) => [
      day,
      expected[i]?.visits,
      expected[i]?.pageviews,
      countVisitors(sketchOf(expected[i]?.ids ?? [])),
    ]),
  );
  const all = unionSketches(expected.map((e) => sketchOf(e.ids)));
  const report = await overview({ ...deps, store: new DynamoReportStore(conn) }, 'acme', SITE, {
    from: first,
    to: last,
  });
  expect(report.current.visitors, `${when}: overview visitors`).toBe(countVisitors(all));
  expect(report.current.sessions, `${when}: overview sessions`).toBe(expected.reduce((n, e) => n + e.visits, 0));
}
