import type { DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filtersParam, matches, type Filter } from '../../lambdas/domain/reports/filters.js';
import type { ListClass } from '../../lambdas/domain/payments/contribution.js';
import {
  filteredBreakdown,
  filteredGoals,
  filteredOverview,
  filteredTimeseries,
  goalsOfCounts,
  selected,
  timeseriesOfSeries,
  type CreditedPayment,
} from '../../lambdas/domain/reports/filtered.js';
import { usd } from '../../lambdas/domain/reports/periods.js';
import { filteredPropKeys } from '../../lambdas/domain/reports/prop-keys.js';
import { DIMENSIONS, NONE } from '../../lambdas/domain/rollup.js';
import { ROW_DIMENSIONS, monthOf, type VisitRow } from '../../lambdas/domain/visit-table.js';
import { LocalVisitTable } from '../../local/visit-table.js';
import { OUTBOUND_GOAL } from '../../lambdas/domain/visit.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import type { DateRange } from '../../lambdas/domain/range.js';
import { filteredGoalRows } from '../../lambdas/services/filtered-reports.js';
import { LocalFilteredVisits } from '../../local/filtered-visits.js';
import { propertyRuns } from '../support/suite.js';

/**
 * The SQL engine over the written visit table against the reference
 * predicate and figures (`lambdas/domain/reports/filtered.ts`): random small
 * sites (visits over two months, values from small pools in mixed case,
 * missing values), random filters of every operator and dimension nested in
 * and/or/not, random ranges. Visitors are distinct ids on both sides, so
 * every figure must be equal.
 */
const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);

const POOLS = {
  channel: ['Search', 'Direct', 'Social', 'AI'],
  referrer_host: ['www.google.com', 'news.ycombinator.com', 'Chatgpt.com'],
  source: ['Google', 'google', 'Hacker News'],
  utm_source: ['newsletter', 'NewsLetter'],
  utm_medium: ['email', 'cpc'],
  utm_campaign: ['launch', 'Spring-Sale'],
  utm_term: ['analytics'],
  utm_content: ['hero', 'footer'],
  country: ['FR', 'US', 'DE', ''],
  device: ['Desktop', 'Mobile', 'Tablet'],
  browser: ['Chrome', 'Safari'],
  os: ['iOS', 'Windows', 'macOS'],
  language: ['en', 'fr'],
} as const satisfies Record<(typeof ROW_DIMENSIONS)[number], readonly string[]>;
const PAGES = ['/', '/blog', '/blog/intro', '/Blog/Deep', '/pricing', '/docs/api'];
const GOALS = ['Signup', 'signup', OUTBOUND_GOAL];
/** Outbound link URLs: one in mixed case, one a hostile key. */
const LINKS = ['https://a.example/', 'https://A.example/', '__proto__'];
/** Custom properties: keys in mixed case and a hostile one, values with quotes. */
const PROP_KEYS = ['plan', 'Plan', '__proto__'];
const PROP_VALUES = ['pro', 'Pro', 'free', 'a "q"'];
const DAYS = ['2026-02-26', '2026-02-28', '2026-03-01', '2026-03-02', '2026-03-15'];

const rowArb = (i: number) =>
  fc
    .record({
      visitor: fc.integer({ min: 1, max: 6 }),
      day: fc.constantFrom(...DAYS),
      dims: fc.record(
        Object.fromEntries(
          ROW_DIMENSIONS.map((d) => [
            d,
            d === 'channel' ? fc.constantFrom(...POOLS[d]) : fc.option(fc.constantFrom(...POOLS[d])),
          ]),
        ) as { [K in (typeof ROW_DIMENSIONS)[number]]: fc.Arbitrary<string | null> },
      ),
      pages: fc.array(fc.constantFrom(...PAGES), { maxLength: 4 }),
      landing: fc.constantFrom(...PAGES),
      // Outbound clicks drawn twice as often: a visit clicking one URL twice counts one visit, two completions.
      goals: fc.array(fc.constantFrom(...GOALS, OUTBOUND_GOAL), { maxLength: 3 }),
      // The URL of each outbound click, or none (a click without a URL counts for the goal only).
      urls: fc.array(fc.option(fc.constantFrom(...LINKS), { freq: 4 }), { minLength: 3, maxLength: 3 }),
      props: fc.uniqueArray(fc.tuple(fc.constantFrom(...PROP_KEYS), fc.constantFrom(...PROP_VALUES)), {
        maxLength: 3,
        selector: (pair) => JSON.stringify(pair),
      }),
      duration: fc.integer({ min: 0, max: 600_000 }),
    })
    .map((g): VisitRow => ({
      visit_id: `v${i}`,
      visitor_id: `x${g.visitor}`,
      day: g.day,
      start_ms: Date.parse(`${g.day}T12:00:00Z`) + i,
      pageviews: g.pages.length,
      bounce: g.pages.length === 1 && g.goals.length === 0,
      timed: g.pages.length + g.goals.length > 1,
      duration_ms: g.pages.length + g.goals.length > 1 ? g.duration : 0,
      dimensions: g.dims,
      landing_page: g.pages[0] ?? g.landing,
      exit_page: g.pages.at(-1) ?? null,
      pages: g.pages,
      goals: g.goals,
      links: g.goals.flatMap((goal, k) => (goal === OUTBOUND_GOAL && g.urls[k] ? [g.urls[k]] : [])),
      props: g.props,
    }));
/** A row's pages with the landing and exit page and counts a visit of those pages has (`visitRow`). */
const withPages = (pages: string[]) => ({
  pages,
  pageviews: pages.length,
  landing_page: pages[0]!,
  exit_page: pages.at(-1) ?? null,
});

/** A payment as the payments table keeps it: its key and refunded flag besides the reference's fields. */
type ListedPayment = CreditedPayment & { key: string; refunded: boolean };

const rowsArb = fc
  .integer({ min: 0, max: 25 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => rowArb(i))));
/**
 * A site: its visits, and payments each credited to one of them or to none, in whole cents. A
 * payment is only ever credited to a visit that started before it (`docs/payments.md`), so a
 * visit drawn after its payment leaves the payment uncredited.
 */
const siteArb = rowsArb.chain((rows) =>
  fc
    .array(
      fc.record({
        visit: fc.option(fc.nat({ max: Math.max(0, rows.length - 1) })),
        day: fc.constantFrom(...DAYS),
        cents: fc.integer({ min: 0, max: 50_000 }),
        customer: fc.constantFrom('c1', 'c2', 'c3', 'c4'),
        failed: fc.boolean(),
        refunded: fc.boolean(),
        // Two payments at the same time: the list's order and a payer's first payment then go by key.
        tie: fc.boolean(),
      }),
      { maxLength: 8 },
    )
    .map((ps) => ({
      rows: rows as VisitRow[],
      payments: ps.map((p, i): ListedPayment => {
        const ts = Date.parse(`${p.day}T15:00:00Z`) + (p.tie ? 0 : i);
        const visit = p.visit === null ? null : (rows[p.visit] ?? null);
        return {
          key: `stripe:pi_${String(ps.length - i).padStart(2, '0')}`,
          refunded: p.refunded,
          ts,
          day: p.day,
          cents: p.cents,
          customer: p.customer,
          failed: p.failed,
          visit: visit && visit.start_ms <= ts ? visit : null,
        };
      }),
    })),
);

const DIMENSION_VALUES: Record<string, readonly string[]> = {
  'visit:channel': POOLS.channel,
  'visit:referrer': POOLS.referrer_host,
  'visit:source': POOLS.source,
  'visit:utm_source': POOLS.utm_source,
  'visit:utm_medium': POOLS.utm_medium,
  'visit:utm_campaign': POOLS.utm_campaign,
  'visit:utm_content': POOLS.utm_content,
  'visit:utm_term': POOLS.utm_term,
  'visit:landing_page': PAGES,
  'visit:exit_page': PAGES,
  'visit:country': POOLS.country,
  'visit:device': POOLS.device,
  'visit:browser': POOLS.browser,
  'visit:os': POOLS.os,
  'visit:language': POOLS.language,
  'event:page': PAGES,
  'event:goal': GOALS,
  ...Object.fromEntries(PROP_KEYS.map((k) => [`event:props:${k}`, PROP_VALUES])),
};
const PATTERNS = ['^/blog', 'blog/[a-z]+$', '^(?:/|/pricing)$', 'o+g', '^$', 'Google|news', '[0-9]'];
const valueArb = (dimension: string) =>
  fc.oneof(
    fc.constantFrom(...DIMENSION_VALUES[dimension]!),
    fc.constantFrom(...DIMENSION_VALUES[dimension]!).map((v) => v.slice(0, 3)),
    fc.constantFrom(...DIMENSION_VALUES[dimension]!).map((v) => v.toUpperCase()),
    fc.constant(''),
  );
const conditionArb: fc.Arbitrary<unknown[]> = fc
  .record({
    op: fc.constantFrom('is', 'is_not', 'contains', 'contains_not', 'matches', 'matches_not'),
    dimension: fc.constantFrom(...Object.keys(DIMENSION_VALUES)),
    cs: fc.boolean(),
  })
  .chain(({ op, dimension, cs }) =>
    fc
      .array(op.startsWith('matches') ? fc.constantFrom(...PATTERNS) : valueArb(dimension), {
        minLength: 1,
        maxLength: 3,
      })
      .map((values) => (cs ? [op, dimension, values] : [op, dimension, values, { case_sensitive: false }])),
  );
const filterArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  filter: fc.oneof(
    { depthSize: 'small', withCrossShrink: true, maxDepth: 4 },
    conditionArb,
    fc.tuple(fc.constantFrom('and', 'or'), fc.array(tie('filter'), { minLength: 1, maxLength: 3 })),
    fc.tuple(fc.constant('not'), tie('filter')),
  ),
})).filter;

/** A property's case: a site, one or two filters (ANDed) and two of its days (the range, in either order). */
const caseArb = fc.tuple(
  siteArb,
  fc.array(filterArb, { minLength: 1, maxLength: 2 }),
  fc.constantFrom(...DAYS),
  fc.constantFrom(...DAYS),
);

const parse = (json: unknown): Filter => {
  const parsed = filtersParam.parse(JSON.stringify(json));
  if (parsed === null) throw new Error('empty filter');
  return parsed;
};

let root: string;
let table: LocalVisitTable;
let engine: LocalFilteredVisits;
/** The same engine sharing nothing: each request scans and evaluates the filter itself. */
let alone: LocalFilteredVisits;
let site = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'footfall-filtered-'));
  table = new LocalVisitTable(root);
  engine = new LocalFilteredVisits(root);
  alone = new LocalFilteredVisits(root, null);
});
afterAll(async () => {
  await table.close();
  await engine.close();
  await alone.close();
  await rm(root, { recursive: true, force: true });
});

async function written(rows: readonly VisitRow[], payments: readonly ListedPayment[] = []): Promise<string> {
  site += 1;
  const domain = `s${site}.test`;
  const months = new Map<string, VisitRow[]>();
  for (const r of rows) months.set(monthOf(r), [...(months.get(monthOf(r)) ?? []), r]);
  for (const [month, rs] of months) await table.writeMonth(domain, month, rs);
  const paid = new Map<string, ListedPayment[]>();
  for (const p of payments) paid.set(monthOf(p), [...(paid.get(monthOf(p)) ?? []), p]);
  for (const [month, ps] of paid)
    await table.writePayments(
      domain,
      month,
      ps.map((p) => ({
        ...p,
        visit_id: p.visit?.visit_id ?? null,
        visit_day: p.visit?.day ?? null,
      })),
    );
  return domain;
}

type SiteInput = { rows: VisitRow[]; payments: ListedPayment[] };

/** A dashboard load's requests to the engine, all at once, as the app asks them (`bench/filtered.ts`). */
const load = (on: LocalFilteredVisits, domain: string, filter: Filter, range: { from: string; to: string }) =>
  Promise.all([
    on.totals(domain, filter, range),
    on.payments(domain, filter, range),
    on.series(domain, filter, range, 'day'),
    on.breakdown(domain, filter, range, 'channel'),
    on.breakdown(domain, filter, range, 'page'),
    on.breakdown(domain, filter, range, 'country'),
    on.breakdown(domain, filter, range, 'device'),
    // Not a first tab: answered alone, in the same load.
    on.breakdown(domain, filter, range, 'referrer'),
    on.goals(domain, filter, range),
  ]);

/** An engine's own connection (`FilteredRelations`): its shared tables live on it. */
const connectionOf = (on: LocalFilteredVisits) =>
  (on as unknown as { tables: { connect(): Promise<DuckDBConnection> } }).tables.connect();

async function temporaryTables(on: LocalFilteredVisits): Promise<number> {
  const db = await connectionOf(on);
  const left = (await db.runAndReadAll(`SELECT count(*) FROM duckdb_tables() WHERE temporary`)).getRowsJS();
  return Number(left[0]?.[0]);
}

/** The statements an engine runs while `run` runs, and what `run` answered. */
async function statementsDuring<T>(on: LocalFilteredVisits, run: () => Promise<T>) {
  const db = await connectionOf(on);
  const statements: string[] = [];
  const original = db.run.bind(db);
  // Every statement goes through `run` (`runAndReadAll` too).
  const spy = vi.spyOn(db, 'run').mockImplementation((sql, ...rest) => {
    statements.push(sql);
    return original(sql, ...rest);
  });
  try {
    return { statements, answer: await run() };
  } finally {
    spy.mockRestore();
  }
}

/** The statements that read a site's visit files and its payment files while `run` runs on an engine. */
async function scansDuring(on: LocalFilteredVisits, domain: string, run: () => Promise<unknown>) {
  const { statements } = await statementsDuring(on, run);
  // Reading the files' footers (`parquet_file_metadata`: the rows that bound the shared tables; the schema and
  // key-value metadata that tell a file's form, `FileForms`) is no scan.
  const footers = ['parquet_file_metadata(', 'parquet_schema(', 'parquet_kv_metadata('];
  const scans = statements.filter((sql) => !footers.some((f) => sql.includes(f)));
  const reading = (dir: string) => scans.filter((sql) => sql.includes(`/${dir}/site=${domain}/`)).length;
  return { visits: reading('visits'), payments: reading('payments') };
}

describe('filtered visits: DuckDB over the visit table equals the reference', () => {
  it('gives the reference totals and breakdowns for random sites, filters and ranges', async () => {
    console.log(`filtered visits property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(
        caseArb,
        fc.subarray([...DIMENSIONS, ...PROP_KEYS.map((prop) => ({ prop }))], { minLength: 1, maxLength: 3 }),
        async ([input, filters, a, b], dimensions) => {
          const { rows } = input;
          const range = { ...(a <= b ? { from: a, to: b } : { from: b, to: a }) };
          const filter = parse(filters);
          const domain = await written(rows, input.payments);
          const picked = selected(input, filter, range).rows;
          const reference = filteredOverview(input, filter, range);
          const paid = await engine.payments(domain, filter, range);
          expect({ ...paid, cents: usd(paid.cents), matched_cents: usd(paid.matched_cents) }).toEqual({
            payments: reference.payments,
            cents: reference.revenue_usd,
            customers: reference.customers,
            matched_payments: reference.matched_payments,
            matched_cents: reference.matched_revenue_usd,
            converted: reference.converted,
          });
          expect(await engine.totals(domain, filter, range)).toEqual({
            visitors: reference.visitors,
            sessions: reference.sessions,
            pageviews: reference.pageviews,
            bounces: picked.filter((r) => r.bounce).length,
            timed_visits: picked.filter((r) => r.timed).length,
            duration_ms: picked.reduce((n, r) => n + r.duration_ms, 0),
          });
          // The payments list: the range's payments (failed ones too) credited to a matching visit, newest first, ties by key.
          const listed = input.payments
            .filter((p) => p.day >= range.from && p.day <= range.to && p.visit !== null && matches(filter, p.visit))
            .sort((x, y) => y.ts - x.ts || (x.key < y.key ? 1 : -1));
          const classes = {
            all: listed,
            attributed: listed,
            unattributed: [],
            refunded: listed.filter((p) => p.refunded),
          };
          for (const [cls, expected] of Object.entries(classes) as Array<[ListClass, ListedPayment[]]>) {
            const page = await engine.paymentList(domain, filter, range, cls, 1, 3);
            expect([cls, page]).toEqual([
              cls,
              { total: expected.length, keys: expected.slice(1, 4).map((p) => p.key) },
            ]);
          }
          // Retention's payers: each payer's first counted payment of the range (time, then key), credited to a matching visit.
          const first = new Map<string, ListedPayment>();
          for (const p of input.payments) {
            if (p.failed || p.day < range.from || p.day > range.to) continue;
            const held = first.get(p.customer);
            if (!held || p.ts < held.ts || (p.ts === held.ts && p.key < held.key)) first.set(p.customer, p);
          }
          const payers = [...first].filter(([, p]) => p.visit !== null && matches(filter, p.visit)).map(([c]) => c);
          expect([...(await engine.firstPayers(domain, filter, range))].sort()).toEqual(payers.sort());
          for (const dimension of dimensions) {
            const expected = new Map(
              filteredBreakdown(input, filter, range, dimension, 1000).rows.map((r) => [
                r.key ?? NONE,
                { visits: r.visitors, payments: r.payments, cents: r.revenue_usd, customers: r.customers },
              ]),
            );
            const values =
              typeof dimension === 'string'
                ? await engine.breakdown(domain, filter, range, dimension)
                : await engine.propBreakdown(domain, filter, range, dimension.prop);
            const got = new Map([...values].map(([k, v]) => [k, { ...v, cents: usd(v.cents) }]));
            expect([dimension, got]).toEqual([dimension, expected]);
          }
          // The property keys (`propKeys`): each key once per visit and per credited payment, whatever its values.
          expect(await engine.propKeys(domain, filter, range)).toEqual(filteredPropKeys(input, filter, range));
        },
      ),
      { seed, numRuns: propertyRuns(6, 60) },
    );
  }, 600_000);

  it('sums the reference time series (by day and month) and goals in SQL for random sites, filters and ranges', async () => {
    console.log(`filtered series and goals property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(
        siteArb,
        filterArb,
        fc.constantFrom(...DAYS),
        fc.constantFrom(...DAYS),
        async (input, filters, a, b) => {
          const days = a <= b ? { from: a, to: b } : { from: b, to: a };
          const range = { ...days };
          const report = { ...days, timezone: 'UTC' };
          const filter = parse([filters]);
          const domain = await written(input.rows, input.payments);
          for (const interval of ['day', 'month'] as const) {
            const series = await engine.series(domain, filter, range, interval);
            expect([interval, timeseriesOfSeries(series, report, interval)]).toEqual([
              interval,
              filteredTimeseries(input, filter, report, interval),
            ]);
          }
          expect(goalsOfCounts(await engine.goals(domain, filter, range), 1000)).toEqual(
            filteredGoals(input, filter, range, 1000),
          );
          // The outbound goal's rows by link URL, through the report service.
          const site = { domain } as SiteConfig;
          const dated = { ...report, days: 0 } as unknown as DateRange;
          const counting = { visitors: 'exact' as const, goals: [] };
          expect(await filteredGoalRows(engine, site, filter, dated, OUTBOUND_GOAL, 1000, counting)).toEqual(
            filteredGoals(input, filter, range, 1000, OUTBOUND_GOAL),
          );
        },
      ),
      // Shrinking writes a site per step: the first counterexample is shown as found.
      { seed, numRuns: 15, endOnFailure: true },
    );
  }, 240_000);

  it('each form a condition is resolved into before the query (ids of a column, few or many ids of a list) equals the reference', async () => {
    // Conditions whose dictionary ids are none, one, a few (list_contains of each) and many (the lookup),
    // a dimension with several ids and one that a visit without a value passes.
    const conditions: unknown[][] = [
      ['is', 'event:page', ['/blog']],
      ['contains', 'event:page', ['/blog']],
      ['contains', 'event:page', ['/blog'], { case_sensitive: false }],
      ['contains', 'event:page', ['/']],
      ['is', 'event:page', ['/nowhere']],
      ['is', 'event:goal', ['signup'], { case_sensitive: false }],
      ['is', 'visit:channel', POOLS.channel.slice(0, 2)],
      ['is_not', 'visit:channel', POOLS.channel.slice(0, 2)],
      ['is', 'visit:utm_source', ['']],
      ['contains_not', 'visit:landing_page', ['blog']],
    ];
    const input = fc.sample(siteArb, { seed, numRuns: 1 })[0]!;
    const domain = await written(input.rows, input.payments);
    const range = { from: DAYS[0]!, to: DAYS.at(-1)! };
    for (const condition of conditions) {
      const filter = parse([condition]);
      const reference = filteredOverview(input, filter, range);
      const totals = await engine.totals(domain, filter, range);
      const paid = await engine.payments(domain, filter, range);
      expect([condition, totals.sessions, totals.visitors, paid.payments]).toEqual([
        condition,
        reference.sessions,
        reference.visitors,
        reference.payments,
      ]);
    }
  });

  it('a load asked at once answers from one evaluation of the filter what an engine that shares nothing answers, for random filters', async () => {
    console.log(`shared load property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(caseArb, async ([input, filters, a, b]) => {
        const range = a <= b ? { from: a, to: b } : { from: b, to: a };
        const filter = parse(filters);
        const domain = await written(input.rows, input.payments);
        const together = await load(engine, domain, filter, range);
        expect(together).toEqual(await load(alone, domain, filter, range));
        const reference = filteredOverview(input, filter, range);
        expect([together[0], together[1]]).toMatchObject([
          { sessions: reference.sessions, visitors: reference.visitors, pageviews: reference.pageviews },
          { payments: reference.payments, customers: reference.customers },
        ]);
        expect(await temporaryTables(engine)).toBe(0);
      }),
      { seed, numRuns: propertyRuns(10, 60) },
    );
  }, 600_000);

  it('evaluates a filter on a list column over the visit and payment files once for all of a load’s panels', async () => {
    // Visits and payments, so that both kinds of file exist to be read.
    const input = fc.sample(
      siteArb.filter((x) => x.rows.length > 0 && x.payments.length > 0),
      { seed, numRuns: 1 },
    )[0]!;
    const domain = await written(input.rows, input.payments);
    const range = { from: DAYS[0]!, to: DAYS.at(-1)! };
    // A page condition: each request scanning alone would decode and test every visit's pages.
    const filter = parse([['is', 'event:page', ['/blog']]]);
    const scans = await scansDuring(engine, domain, () => load(engine, domain, filter, range));
    // One scan makes the shared tables; the referrer tab, which they do not hold, is the other.
    expect(scans).toEqual({ visits: 2, payments: 2 });
    // The same load from an engine that shares nothing: each of its nine requests scans (what the count tells apart).
    const nine = { visits: 9, payments: 9 };
    expect(await scansDuring(alone, domain, () => load(alone, domain, filter, range))).toEqual(nine);
    // A filter on one-id columns only is not shared (`testsList`): each request reads its own columns.
    const dimensions = parse([['is_not', 'visit:channel', ['Direct']]]);
    expect(await scansDuring(engine, domain, () => load(engine, domain, dimensions, range))).toEqual(nine);
  });

  it('drops a load’s tables when it ends, so the next load reads a rewritten month again', async () => {
    const [first, second] = fc.sample(
      siteArb.filter((s) => s.rows.length > 0),
      { seed, numRuns: 2 },
    ) as [SiteInput, SiteInput];
    const domain = await written(first.rows, first.payments);
    const range = { from: DAYS[0]!, to: DAYS.at(-1)! };
    const filter = parse([['contains', 'event:page', ['/']]]);
    const before = await load(engine, domain, filter, range);
    expect(await temporaryTables(engine)).toBe(0);
    // Rewritten in place: every month of the second site's rows replaces the first's (`LocalVisitTable`).
    const months = new Set([...first.rows, ...second.rows].map(monthOf));
    for (const month of months)
      await table.writeMonth(
        domain,
        month,
        second.rows.filter((r) => monthOf(r) === month),
      );
    const after = await load(engine, domain, filter, range);
    expect(after).toEqual(await load(alone, domain, filter, range));
    const reference = filteredOverview({ rows: second.rows, payments: [] }, filter, range);
    expect([after[0].sessions, after[0].visitors]).toEqual([reference.sessions, reference.visitors]);
    expect(before[0].sessions).toBe(filteredOverview(first, filter, range).sessions);
    expect(await temporaryTables(engine)).toBe(0);
  });

  it('by registers, a load answers from its month registers what an engine that shares nothing answers, for random filters', async () => {
    console.log(`month registers property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(caseArb, async ([input, filters, a, b]) => {
        const range = a <= b ? { from: a, to: b } : { from: b, to: a };
        const filter = parse(filters);
        const domain = await written(input.rows, input.payments);
        // Every month of the range by registers, as the bench site's year is.
        const months = [...new Set([range.from, range.to].map((d) => d.slice(0, 7)))];
        const byRegisters = (on: LocalFilteredVisits) =>
          Promise.all([
            on.totals(domain, filter, range, 'registers'),
            on.series(domain, filter, range, 'month', months),
            on.goals(domain, filter, range, 'registers'),
          ]);
        expect(await byRegisters(engine)).toEqual(await byRegisters(alone));
        expect(await temporaryTables(engine)).toBe(0);
      }),
      { seed, numRuns: propertyRuns(10, 60) },
    );
  }, 600_000);

  it('finds a passing page at the end of a long list, in a list condition of many ids', async () => {
    const [long, other, none] = fc.sample(rowArb(0), { seed, numRuns: 3 }).map((r, i) => ({
      ...r,
      visit_id: `long${i}`,
      visitor_id: `x${i}`,
      day: DAYS[0]!,
      // Only the fifth page of the first visit passes; the second visit gives the condition more than a few ids.
      ...withPages(
        [
          ['/a', '/b', '/c', '/d', '/blog/1'],
          ['/blog/2', '/blog/3', '/blog/4'],
          ['/a', '/b', '/c', '/d', '/e', '/f'],
        ][i]!,
      ),
    })) as [VisitRow, VisitRow, VisitRow];
    const domain = await written([long, other, none]);
    const range = { from: DAYS[0]!, to: DAYS[0]! };
    for (const [op, sessions] of [
      ['contains', 2],
      ['contains_not', 1],
    ] as const) {
      const filter = parse([[op, 'event:page', ['/blog']]]);
      expect((await engine.totals(domain, filter, range)).sessions).toBe(sessions);
      expect((await alone.totals(domain, filter, range)).sessions).toBe(sessions);
    }
  });

  it('tests the exit and first page first when most pages pass, and the list where both fail, negated or not', async () => {
    // Six of the site's eight pages pass: visits passing by their exit page, by their first or a middle page
    // only, and by none, with one page or more; the last visit's exit page is also its first (pages are stored
    // once each), its middle one passes.
    const lists = [
      ['/blog/1', '/a'],
      ['/blog/2'],
      ['/a', '/b'],
      ['/blog/3', '/blog/4', '/blog/5'],
      ['/a', '/blog/1', '/b'],
      ['/b'],
      ['/a', '/blog/6', '/a'],
    ];
    const rows = fc.sample(rowArb(0), { seed, numRuns: lists.length }).map((r, i) => ({
      ...r,
      visit_id: `exit${i}`,
      visitor_id: `x${i}`,
      day: DAYS[0]!,
      ...withPages(lists[i]!),
    }));
    const domain = await written(rows);
    const range = { from: DAYS[0]!, to: DAYS[0]! };
    for (const [op, sessions] of [
      ['contains', 5],
      ['contains_not', 2],
    ] as const) {
      const filter = parse([[op, 'event:page', ['/blog']]]);
      const { statements, answer } = await statementsDuring(alone, () => alone.totals(domain, filter, range));
      expect([op, answer.sessions, (await engine.totals(domain, filter, range)).sessions]).toEqual([
        op,
        sessions,
        sessions,
      ]);
      // The form under test was the one chosen.
      expect(statements.some((sql) => sql.includes('exit_page), false) THEN true WHEN'))).toBe(true);
    }
  });

  it('counts a visit without a value and one whose value is the empty string in one NONE row, its customer once', async () => {
    const [one, two] = fc.sample(rowArb(0), { seed, numRuns: 2 }).map((r, i) => ({
      ...r,
      visit_id: `none${i}`,
      day: DAYS[0]!,
      pages: ['/'],
      dimensions: { ...r.dimensions, country: i === 0 ? null : '' },
    })) as [VisitRow, VisitRow];
    const paid = (visit: VisitRow, n: number): ListedPayment => ({
      key: `k${n}`,
      ts: Date.parse(`${DAYS[0]}T13:00:00Z`) + n,
      day: DAYS[0]!,
      cents: 1000,
      customer: 'c1',
      failed: false,
      refunded: false,
      visit,
    });
    const domain = await written([one, two], [paid(one, 1), paid(two, 2)]);
    const range = { from: DAYS[0]!, to: DAYS[0]! };
    const none = new Map([[NONE, { visits: 2, payments: 2, cents: 2000, customers: 1 }]]);
    // Shared (a page condition) and alone (dimensions only), by both engines.
    for (const filter of [parse([['contains', 'event:page', ['/']]]), parse([['is_not', 'visit:channel', ['-']]])])
      for (const on of [engine, alone]) expect(await on.breakdown(domain, filter, range, 'country')).toEqual(none);
  });

  it('runs the totals’ query once for the totals and the goals of a load asked at once', async () => {
    const input = fc.sample(
      siteArb.filter((x) => x.rows.length > 0),
      { seed, numRuns: 1 },
    )[0]!;
    const domain = await written(input.rows, input.payments);
    const range = { from: DAYS[0]!, to: DAYS.at(-1)! };
    for (const filter of [parse([['is', 'event:page', ['/blog']]]), parse([['is_not', 'visit:channel', ['-']]])]) {
      const { statements, answer } = await statementsDuring(engine, () => load(engine, domain, filter, range));
      const [totals, , , , , , , , goals] = answer;
      expect(goals.visitors).toBe(totals.visitors);
      expect(statements.filter((sql) => sql.includes('AS timed_visits'))).toHaveLength(1);
    }
  });

  it('a filter that matches every visit gives every visit of the range', async () => {
    const rows = fc.sample(rowsArb, { seed, numRuns: 1 })[0]!;
    const domain = await written(rows);
    const range = { from: DAYS[0]!, to: DAYS.at(-1)! };
    const all = await engine.totals(domain, parse([['contains', 'visit:channel', ['']]]), range);
    expect(all.sessions, JSON.stringify(rows.map((r) => r.day))).toBe(rows.length);
    expect(all.visitors).toBe(new Set(rows.map((r) => r.visitor_id)).size);
  });
});
