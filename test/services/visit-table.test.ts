import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { sessionizeBatch } from '../../lambdas/services/sessionize.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { attributesOf, type Visit } from '../../lambdas/domain/visit.js';
import {
  ROW_DIMENSIONS,
  encodeRows,
  monthOf,
  visitRow,
  type Dictionary,
  type VisitRow,
} from '../../lambdas/domain/visit-table.js';
import { LocalVisitTable } from '../../local/visit-table.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';

const MIN = 60_000;
const SITE = 'example.com';
const TZ = 'Europe/Berlin';

/** Events of three visitors: a visit across local midnight into a new month, goals, a visit of one page, null attributes. */
function events(): TrackedEvent[] {
  // 2026-03-31 23:50 in Berlin (UTC+2 since 29 March) is 21:50Z.
  const late = Date.UTC(2026, 2, 31, 21, 50);
  const ev = (visitor: string, ts: number, overrides: Partial<TrackedEvent> = {}) =>
    trackedEvent({
      site: SITE,
      visitor_id: visitor,
      ts,
      event_id: `${visitor}-${ts}-${overrides.path ?? '/'}`,
      ...overrides,
    });
  return [
    ev('a', late, {
      path: '/blog',
      channel: 'Search',
      source: 'Google',
      referrer_host: 'www.google.com',
      device: 'Mobile',
    }),
    ev('a', late + 15 * MIN, { path: '/pricing' }),
    ev('a', late + 20 * MIN, { type: 'goal', goal: 'Signup', path: '/pricing' }),
    ev('a', late + 25 * MIN, { path: '/features' }),
    // A second visit of `a` after a 30-minute gap, the next local day.
    ev('a', late + 90 * MIN, { path: '/docs', channel: 'Direct', country: null, browser: null }),
    ev('b', late - 3 * 60 * MIN, { path: '/', utm_campaign: 'spring', utm_source: 'newsletter', utm_medium: 'email' }),
    ev('c', late - 10 * MIN, { type: 'goal', goal: 'Outbound Link: Click', link: 'https://x.com/', path: '/about' }),
  ];
}

/** What the visit table must say of a stored visit, computed from the visit alone. */
function expectedRow(visit: Visit): Omit<VisitRow, 'day'> {
  const pages = visit.events.filter((e) => e.type === 'pageview').map((e) => e.path);
  const goals = visit.events.filter((e) => e.type === 'goal').map((e) => e.goal ?? '');
  const links = visit.events.flatMap((e) => (e.goal === 'Outbound Link: Click' && e.link !== null ? [e.link] : []));
  const timed = visit.events.length > 1;
  return {
    visit_id: visit.id,
    visitor_id: visit.visitor_id,
    start_ms: visit.start,
    pageviews: pages.length,
    bounce: pages.length === 1 && goals.length === 0,
    timed,
    duration_ms: timed ? visit.end - visit.start : 0,
    dimensions: Object.fromEntries(ROW_DIMENSIONS.map((d) => [d, visit.attrs[d]])) as VisitRow['dimensions'],
    landing_page: visit.landing_page,
    exit_page: pages.at(-1) ?? null,
    pages,
    goals,
    links,
  };
}

describe('the visit table of filtered reports', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let dir: string;
  let table: LocalVisitTable;

  beforeEach(async () => {
    ({ conn, close } = await memoryTable([{ domain: SITE, timezone: TZ }]));
    dir = await mkdtemp(join(tmpdir(), 'visit-table-'));
    table = new LocalVisitTable(dir);
  });
  afterEach(async () => {
    await table.close();
    await close();
    await rm(dir, { recursive: true, force: true });
  });

  it('holds one row per visit the sessionizer stored, read back from Parquet equal to the visit', async () => {
    const deps = {
      sites: new DynamoConfigStore(conn),
      visits: new DynamoVisitStore(conn),
      rollups: new DynamoRollupStore(conn),
    };
    const batch = events();
    await sessionizeBatch(
      deps,
      { shard: 'shard-1', sequence: '1' },
      batch.map((e) => ({ sequenceNumber: '1', data: Buffer.from(JSON.stringify(e)) })),
    );
    const stored: Visit[] = [];
    for (const visitor of ['a', 'b', 'c'])
      stored.push(...(await deps.visits.visitsAround(SITE, visitor, 0, Number.MAX_SAFE_INTEGER)));
    expect(stored).toHaveLength(4);
    // The outbound click's URL is kept (the goals report's rows by link URL).
    expect(stored.flatMap((v) => visitRow(v, TZ).links)).toEqual(['https://x.com/']);

    const rows = stored.map((v) => visitRow(v, TZ));
    const months = new Map<string, VisitRow[]>();
    for (const row of rows) months.set(monthOf(row), [...(months.get(monthOf(row)) ?? []), row]);
    expect([...months.keys()].sort()).toEqual(['2026-03', '2026-04']);
    for (const [month, monthRows] of months) await table.writeMonth(SITE, month, monthRows);

    const read = [...(await table.readMonth(SITE, '2026-03')), ...(await table.readMonth(SITE, '2026-04'))];
    const byId = new Map(read.map((r) => [r.visit_id, r]));
    expect(read).toHaveLength(stored.length);
    for (const visit of stored) expect(byId.get(visit.id)).toMatchObject(expectedRow(visit));
    // Site-local start days: `a`'s first visit starts 23:50 on 31 March in Berlin, its second at 01:20 on 1 April.
    const [first, second] = stored.filter((v) => v.visitor_id === 'a').sort((x, y) => x.start - y.start);
    expect(byId.get(first!.id)).toMatchObject({
      day: '2026-03-31',
      pages: ['/blog', '/pricing', '/features'],
      exit_page: '/features',
      goals: ['Signup'],
    });
    expect(byId.get(second!.id)).toMatchObject({
      day: '2026-04-01',
      bounce: true,
      dimensions: { country: null, browser: null },
    });
  });

  it('keeps every id of the dictionary when a month is rewritten with new values', async () => {
    const visit = (id: string, channel: string, path: string, start = Date.UTC(2026, 3, 2, 10)): VisitRow => ({
      ...visitRow(
        {
          id,
          site: SITE,
          visitor_id: `v-${id}`,
          start,
          end: start,
          landing_page: path,
          attrs: attributesOf(trackedEvent({ channel })),
          events: [{ id, ts: start, type: 'pageview', path, goal: null, link: null }],
        },
        TZ,
      ),
    });
    await table.writeMonth(SITE, '2026-04', [visit('x', 'Search', '/a')]);
    const before = await table.readDictionary(SITE);
    await table.writeMonth(SITE, '2026-05', [
      visit('y', 'Email', '/b', Date.UTC(2026, 4, 2)),
      visit('z', 'Search', '/a', Date.UTC(2026, 4, 3)),
    ]);
    const after = await table.readDictionary(SITE);
    expect(after).toEqual(expect.arrayContaining(before));
    expect(after.length).toBe(before.length + 2);
    // The April file, written with the older dictionary, still reads.
    expect((await table.readMonth(SITE, '2026-04'))[0]).toMatchObject({
      visit_id: 'x',
      pages: ['/a'],
      dimensions: { channel: 'Search' },
    });
    await expect(table.writeMonth(SITE, '2026-06', [visit('w', 'Search', '/a')])).rejects.toThrow(/not in 2026-06/);
  });

  it('encodes any rows so that the dictionary gives them back, in sort order, and encodes them again to the same ids', () => {
    const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
    console.log(`visit-table encoding: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const text = fc.oneof(fc.constantFrom('Search', 'Mobile', '/blog', ''), fc.string({ maxLength: 6 }));
    const row: fc.Arbitrary<VisitRow> = fc.record({
      visit_id: fc.uuid(),
      visitor_id: fc.string({ minLength: 1, maxLength: 8 }),
      day: fc.constantFrom('2026-05-01', '2026-05-02', '2026-05-31'),
      start_ms: fc.integer({ min: 0, max: 2 ** 40 }),
      pageviews: fc.nat(50),
      bounce: fc.boolean(),
      timed: fc.boolean(),
      duration_ms: fc.nat(),
      dimensions: fc.record(
        Object.fromEntries(ROW_DIMENSIONS.map((d) => [d, fc.option(text)])) as Record<
          (typeof ROW_DIMENSIONS)[number],
          fc.Arbitrary<string | null>
        >,
      ),
      landing_page: text,
      exit_page: fc.option(text),
      pages: fc.array(text, { maxLength: 5 }),
      goals: fc.array(text, { maxLength: 3 }),
      links: fc.array(text, { maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 30 }), (rows) => {
        const dictionary: Dictionary = new Map();
        const { rows: encoded, added } = encodeRows(rows, dictionary);
        const names = new Map(added.map((e) => [`${e.dictionary}:${e.id}`, e.value]));
        const decode = (dict: string, id: number | null) => (id === null ? null : names.get(`${dict}:${id}`));
        const byId = new Map(rows.map((r) => [r.visit_id, r]));
        for (const e of encoded) {
          const original = byId.get(e.visit_id)!;
          // Each page once, in the order first viewed: the table keeps membership (page views are a column).
          expect(e.pages.map((id) => decode('page', id))).toEqual([...new Set(original.pages)]);
          expect(e.goals.map((id) => decode('goal', id))).toEqual(original.goals);
          expect(e.links.map((id) => decode('link', id))).toEqual(original.links);
          expect(decode('page', e.landing_page)).toBe(original.landing_page);
          expect(decode('page', e.exit_page)).toBe(original.exit_page);
          for (const d of ROW_DIMENSIONS) expect(decode(d, e.dimensions[d])).toBe(original.dimensions[d]);
        }
        for (let i = 1; i < encoded.length; i++) {
          const [a, b] = [encoded[i - 1]!, encoded[i]!];
          const key = (r: typeof a) => [r.dimensions.channel ?? 0, r.dimensions.device ?? 0];
          expect(key(a)[0]! < key(b)[0]! || (key(a)[0] === key(b)[0] && key(a)[1]! <= key(b)[1]!)).toBe(true);
        }
        const again = encodeRows(rows, dictionary);
        expect(again.added).toEqual([]);
        expect(again.rows).toEqual(encoded);
      }),
      { seed, numRuns: 200 },
    );
  });
});
