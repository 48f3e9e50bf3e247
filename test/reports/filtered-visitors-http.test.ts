import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localPaths } from '../../local/service.js';
import { importEventLines } from '../../local/import-events.js';
import { LocalFilteredVisits } from '../../local/filtered-visits.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { filtersParam } from '../../lambdas/domain/reports/filters.js';
import { addVisitors, countVisitors, emptySketch } from '../../lambdas/domain/visitor-sketch.js';
import { startTestService } from '../support/local.js';
import { CHROME_UA } from '../support/events.js';

/**
 * Filtered distinct visitors through the report API (`docs/api.md`, "Filters"): exact where the unfiltered
 * report is exact, the unfiltered sketch's registers elsewhere, so a filter that matches every visit gives
 * the unfiltered figure itself. The site: 1,200 visitors on 10 March (past the sketch's exact limit), 300
 * on 11 March (100 of them also came on the 10th), 700 on 12 March and 700 others on 13 March (each day
 * exact, their union of 1,400 exact too). Even visitors come from Google (Search), odd ones directly; every
 * fourth completes Signup.
 */
const day = (d: number) => `2026-03-${d}`;
const VISITORS: ReadonlyArray<[number, number[]]> = [
  [10, Array.from({ length: 1200 }, (_, i) => i)],
  [11, Array.from({ length: 300 }, (_, i) => 1100 + i)],
  [12, Array.from({ length: 700 }, (_, i) => 2000 + i)],
  [13, Array.from({ length: 700 }, (_, i) => 2700 + i)],
];
const LINES = VISITORS.flatMap(([d, visitors]) =>
  visitors.flatMap((v) => [
    {
      n: 'pageview',
      u: 'https://big.example/',
      ts: `${day(d)}T10:00:00Z`,
      v: `visitor-${v}`,
      ...(v % 2 === 0 ? { r: 'https://www.google.com/' } : {}),
    },
    ...(v % 4 === 0
      ? [{ n: 'goal', g: 'Signup', u: 'https://big.example/', ts: `${day(d)}T10:01:00Z`, v: `visitor-${v}` }]
      : []),
  ]),
).map((l) => JSON.stringify({ ...l, ua: CHROME_UA }));

type Body = Record<string, unknown> & {
  current: { visitors: number };
  points: Array<{ start: string; visitors: number }>;
  visitors: number;
};

describe('filtered distinct visitors over HTTP: exact where the unfiltered report is, its registers elsewhere', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let key: string;
  const get = async (path: string, range: string, filters?: unknown) => {
    const query = filters === undefined ? '' : `&filters=${encodeURIComponent(JSON.stringify(filters))}`;
    const res = await fetch(`${svc.url}/api/v1/sites/big.example${path}?${range}${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Body;
  };
  const EVERYTHING = [['contains', 'visit:channel', ['']]];
  const SEARCH = [['is', 'visit:channel', ['Search']]];
  const REGISTERS = 'from=2026-03-10&to=2026-03-11';
  const EXACT = 'from=2026-03-12&to=2026-03-13';

  beforeAll(async () => {
    svc = await startTestService([{ domain: 'big.example', timezone: 'UTC' }], { app: true, sessionizeIntervalMs: 0 });
    await importEventLines(svc.dynamo, localPaths(svc.dataDir).stream, LINES, { site: 'big.example' });
    await svc.sessionize();
    await svc.archive();
    await svc.scheduled();
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'visitors', new Date())).key;
  }, 300_000);
  afterAll(async () => svc?.cleanup());

  it('gives the unfiltered visitors for a filter that matches every visit, by registers and exactly', async () => {
    for (const range of [REGISTERS, EXACT, 'from=2026-03-10&to=2026-03-13']) {
      for (const path of ['/overview', '/timeseries', '/goals']) {
        const plain = await get(path, range);
        const { filtered, ...all } = await get(path, range, EVERYTHING);
        expect(filtered).toBeDefined();
        expect([range, path, all]).toEqual([range, path, plain]);
      }
    }
    // The range of exact days is exact past 1,000 visitors; the day past the limit is registers, not its true count.
    expect((await get('/overview', EXACT, EVERYTHING)).current.visitors).toBe(1400);
    const points = (await get('/timeseries', REGISTERS, EVERYTHING)).points;
    expect(points.map((p) => p.visitors)).not.toEqual([1200, 300]);
    expect(points[1]?.visitors).toBe(300);
  });

  it('counts a filter by the sketch of the matching visitors where the unfiltered set is registers, exactly elsewhere', async () => {
    // The visitor ids as stored, from the table: the sessionizer's, whatever it makes of `v`.
    const engine = new LocalFilteredVisits(localPaths(svc.dataDir).visitTable);
    const search = filtersParam.parse(JSON.stringify(SEARCH))!;
    const { rows } = await engine.input('big.example', search, { from: '2026-03-10', to: '2026-03-13' });
    await engine.close();
    const ids = (days: string[]) => new Set(rows.filter((r) => days.includes(r.day)).map((r) => r.visitor_id));
    const registers = (set: Set<string>) => countVisitors(addVisitors(emptySketch(), set, { exact: 0, precision: 14 }));
    expect(ids([day(10), day(11)]).size).toBe(700);
    const overview = await get('/overview', REGISTERS, SEARCH);
    expect(overview.current.visitors).toBe(registers(ids([day(10), day(11)])));
    const series = await get('/timeseries', REGISTERS, SEARCH);
    expect(series.points.map((p) => p.visitors)).toEqual([registers(ids([day(10)])), 150]);
    expect((await get('/goals', REGISTERS, SEARCH)).visitors).toBe(overview.current.visitors);
    expect((await get('/overview', EXACT, SEARCH)).current.visitors).toBe(700);
  });
});
