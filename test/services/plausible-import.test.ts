import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strFromU8, unzipSync } from 'fflate';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { site } from '../support/events.js';
import { DynamoImportedStore } from '../../lambdas/adapters/dynamo/imported-store.js';
import { dynamoReportServiceDeps } from '../../lambdas/wiring/report-deps.js';
import { breakdown, goals, overview, timeseries } from '../../lambdas/services/reports.js';
import { PlausibleImportError, importPlausible } from '../../lambdas/services/plausible-import.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DAYS, FILES, UNTIL, VISITORS, plausibleZip } from '../fixtures/plausible-export.js';

const NOW = Date.UTC(2025, 5, 1);
const SITE = site({ timezone: 'UTC' });
const RANGE = { from: DAYS[0], to: DAYS[2] };
/** The export as the CLI reads it: the zip's entries as text. */
const entries = () =>
  Object.entries(unzipSync(plausibleZip())).map(([name, bytes]) => ({ name, text: strFromU8(bytes) }));
const sum = (i: number) => DAYS.reduce((n, d) => n + VISITORS[d]![i]!, 0);

describe('importing a Plausible export', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  const deps = () => dynamoReportServiceDeps(conn, () => NOW);
  const store = () => new DynamoImportedStore(conn);
  const imported = () => scanAll(conn).then((items) => items.filter((i) => String(i.pk).startsWith('IMPORTED#')));
  let before: Awaited<ReturnType<typeof overview>>;

  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ timezone: 'UTC' }]));
    before = await overview(deps(), 'acme', SITE.domain, RANGE);
  });
  afterAll(() => close());

  it('reads every row of every file, keeps the days before the cut-over day, and counts what it skipped', async () => {
    const summary = await importPlausible(store(), SITE, entries(), UNTIL, NOW);
    expect(summary).toMatchObject({ from: DAYS[0], to: DAYS[2], until: UNTIL, ignored: [] });
    expect(summary.files).toHaveLength(10);
    expect(summary.rows).toEqual({ read: 39, kept: 34, skipped: 4, invalid: 1 });
    expect(summary.errors).toEqual(['imported_operating_systems_20250130_20250202.csv:5: visitors: not a count']);
  });

  it('adds the imported days to the overview: the CSV sums, and says which days are imported', async () => {
    const report = await overview(deps(), 'acme', SITE.domain, RANGE);
    const visits = sum(3);
    const bounces = sum(2);
    expect(report.current).toMatchObject({
      visitors: sum(0),
      sessions: visits,
      pageviews: sum(1),
      bounce_rate: Math.round((bounces / visits) * 1e6) / 1e6,
      visit_duration: Math.round(sum(4) / (visits - bounces)),
      payments: 0,
      revenue_usd: 0,
      conversion: null,
    });
    expect(report.imported).toEqual({ source: 'plausible', from: DAYS[0], to: DAYS[2] });
    // Whole months read the month items: the same sums.
    const months = await overview(deps(), 'acme', SITE.domain, { from: '2025-01-01', to: '2025-02-28' });
    expect(months.current).toMatchObject({ visitors: sum(0), sessions: visits, pageviews: sum(1) });
    expect(months.imported).toEqual({ source: 'plausible', from: DAYS[0], to: DAYS[2] });
  });

  it('never imports the cut-over day or after: a range of those days has no imported day', async () => {
    const after = await overview(deps(), 'acme', SITE.domain, { from: UNTIL, to: UNTIL });
    expect(after.current.visitors).toBe(0);
    expect(after.imported).toBeNull();
    const goalsAfter = await goals(deps(), 'acme', SITE.domain, { from: UNTIL, to: UNTIL }, null, 100);
    expect(goalsAfter.rows).toEqual([]);
  });

  it('shows each imported day in the time series, by day and by month', async () => {
    const daily = await timeseries(deps(), 'acme', SITE.domain, RANGE, 'day');
    expect(daily.points.map((p) => [p.start, p.visitors, p.sessions, p.pageviews])).toEqual(
      DAYS.map((d) => [d, VISITORS[d]![0], VISITORS[d]![3], VISITORS[d]![1]]),
    );
    expect(daily.imported).toEqual({ source: 'plausible', from: DAYS[0], to: DAYS[2] });
    const monthly = await timeseries(deps(), 'acme', SITE.domain, { from: '2025-01-01', to: '2025-02-28' }, 'month');
    expect(monthly.points.map((p) => [p.start, p.visitors])).toEqual([
      ['2025-01', VISITORS[DAYS[0]]![0] + VISITORS[DAYS[1]]![0]],
      ['2025-02', VISITORS[DAYS[2]]![0]],
    ]);
  });

  it('fills the breakdowns from their files, hostile values as plain rows', async () => {
    const rows = async (dimension: Parameters<typeof breakdown>[3]) =>
      (await breakdown(deps(), 'acme', SITE.domain, dimension, RANGE, 100)).rows.map((r) => [r.label, r.visitors]);
    expect(await rows('referrer')).toEqual([
      ['(none)', 100],
      ['google.com', 47],
      ['__proto__', 5],
      ['github.com', 4],
    ]);
    expect(await rows('page')).toEqual([
      ['/', 170],
      ['/pricing', 40],
      ['/__proto__', 3],
      ['__proto__', 2],
    ]);
    expect(await rows('landing_page')).toEqual([
      ['/', 64],
      ['/pricing', 31],
    ]);
    expect(await rows('campaign')).toEqual([
      ['(none)', 151],
      ['constructor', 5],
    ]);
    expect(await rows('keyword')).toContainEqual(['__proto__', 5]);
    expect(await rows('utm_source')).toEqual([
      ['(none)', 151],
      ['newsletter', 5],
    ]);
    expect(await rows('utm_medium')).toContainEqual(['email', 5]);
    expect(await rows('utm_content')).toEqual([['(none)', 156]]);
    expect(await rows('exit_page')).toEqual([['/', 52]]);
    expect(await rows('channel')).toEqual([
      ['Direct', 100],
      ['Search', 47],
      ['Email', 5],
      ['Communities', 4],
    ]);
    expect(await rows('country')).toEqual([
      ['FR', 19],
      ['DE', 6],
    ]);
    expect(await rows('device')).toEqual([
      ['Desktop', 121],
      ['Mobile', 13],
    ]);
    expect(await rows('browser')).toEqual([
      ['Chrome', 74],
      ['Edge', 1],
    ]);
    expect(await rows('os')).toEqual([
      ['iOS', 6],
      ['macOS', 5],
      ['(none)', 1],
    ]);
    const report = await breakdown(deps(), 'acme', SITE.domain, 'page', RANGE, 100);
    expect(report.imported).toEqual({ source: 'plausible', from: DAYS[0], to: DAYS[2] });
  });

  it('turns custom events into goals, and outbound link URLs into that goal’s rows', async () => {
    const report = await goals(deps(), 'acme', SITE.domain, RANGE, null, 100);
    expect(report.visitors).toBe(sum(0));
    expect(report.rows.map((r) => [r.goal, r.visitors, r.completions])).toEqual([
      ['Signup', 5, 7],
      ['Outbound Link: Click', 3, 4],
      ['404', 1, 1],
    ]);
    expect(report.rows[0]!.conversion_rate).toBe(Math.round((5 / sum(0)) * 1e6) / 1e6);
    const links = await goals(deps(), 'acme', SITE.domain, RANGE, 'Outbound Link: Click', 100);
    expect(links.rows.map((r) => [r.link, r.visitors])).toEqual([
      ['https://two.example.org/', 2],
      ['https://one.example.org/', 1],
    ]);
  });

  it('is idempotent: importing the same export again leaves the same items', async () => {
    const first = await imported();
    await importPlausible(store(), SITE, entries(), UNTIL, NOW + 1000);
    const second = await imported();
    const withoutTime = (items: Record<string, unknown>[]) => items.map(({ imported_at: _, ...rest }) => rest);
    expect(withoutTime(second)).toEqual(withoutTime(first));
    expect((await overview(deps(), 'acme', SITE.domain, RANGE)).current.visitors).toBe(sum(0));
  });

  it('a rerun with an earlier cut-over day replaces the import: no day of the first one stays', async () => {
    await importPlausible(store(), SITE, entries(), DAYS[1], NOW);
    const report = await overview(deps(), 'acme', SITE.domain, RANGE);
    expect(report.current.visitors).toBe(VISITORS[DAYS[0]]![0]);
    expect(report.imported).toEqual({ source: 'plausible', from: DAYS[0], to: DAYS[0] });
  });

  it('removes in one step, and the reports are as before the import', async () => {
    expect(await store().remove(SITE.domain)).toBeGreaterThan(0);
    expect(await imported()).toEqual([]);
    expect(await overview(deps(), 'acme', SITE.domain, RANGE)).toEqual(before);
  });

  it('refuses a cut-over day after the first tracked day, an export without a table, and no row before the cut-over', async () => {
    const tracked = {
      ...store(),
      replace: store().replace,
      remove: store().remove,
      firstTrackedDay: async () => DAYS[1],
    };
    await expect(importPlausible(tracked, SITE, entries(), DAYS[2], NOW)).rejects.toThrow(
      /tracked visits from 2025-01-31: the cut-over day must be 2025-01-31 or earlier/,
    );
    await expect(importPlausible(store(), SITE, [{ name: 'notes.txt', text: 'hi' }], UNTIL, NOW)).rejects.toThrow(
      PlausibleImportError,
    );
    await expect(importPlausible(store(), SITE, entries(), '2025-01-01', NOW)).rejects.toThrow(
      'no row of the export is before --until 2025-01-01',
    );
    expect(await imported()).toEqual([]);
    expect(Object.keys(FILES)).toHaveLength(10);
  });
});
