import { BadParameterError, NotFoundError, UnavailableError } from '../domain/errors.js';
import { localDay, resolveRange, type DateRange, type RangeQuery } from '../domain/range.js';
import { layoutMismatch, namespaceOf, type SiteConfig } from '../domain/site.js';
import { isValidVisitorId } from '../domain/visitor.js';
import { openMonth, openMonthSpans, periodSpans } from '../domain/reports/periods.js';
import {
  openMonthSetStandsIn,
  overviewChange,
  overviewTotals,
  type OverviewTotals,
} from '../domain/reports/overview.js';
import { breakdownRows, type BreakdownRow } from '../domain/reports/breakdown.js';
import { goalRows, type GoalRow } from '../domain/reports/goals.js';
import { REALTIME_WINDOW_MS, realtimeReport, type RealtimeReport } from '../domain/realtime.js';
import { countVisitors, unionSketches } from '../domain/visitor-sketch.js';
import { paymentRow, type PaymentRow } from '../domain/reports/payment-row.js';
import { buildTimeline, type Timeline } from '../domain/reports/timeline.js';
import { churnWindow, retentionFromCohorts, type RetentionReport } from '../domain/reports/retention.js';
import {
  INTERVAL_MAX_DAYS,
  defaultInterval,
  openMonthNeedsSets,
  paymentSpans,
  timeseriesPoints,
  visitSpans,
  type Interval,
  type TimeseriesPoint,
} from '../domain/reports/timeseries.js';
import { LIST_CLASSES, UNATTRIBUTED_KEY, type ListClass, type ValueCounters } from '../domain/payments/contribution.js';
import { PROP_BREAKDOWN_PREFIX, propOfDimension, type BreakdownDimension } from '../domain/reports/schemas.js';
import { dict, own } from '../domain/dict.js';
import type { UsdRate } from '../domain/payments/money.js';
import type { Provider } from '../domain/payments/facts.js';
import type { FilteredVisits, ReportReads, StoredPeriod, VisitorCounting } from '../ports.js';
import { registerGoals, registerLinks, registerPoints, unfilteredSpans } from '../domain/reports/filtered-visitors.js';
import { EVERY_VISIT, type Filter } from '../domain/reports/filters.js';
import { propKeyRows, type PropKeyRow } from '../domain/reports/prop-keys.js';
import {
  engineOf,
  filteredBreakdownRows,
  filteredGoalRows,
  filteredPoints,
  filteredPaymentPage,
  propBreakdownRows,
  filteredRetentionCohorts,
  filteredTotals,
} from './filtered-reports.js';
import {
  importedGoalCounts,
  importedIn,
  importedValueCounts,
  importedVisitsOf,
  sumImportedVisits,
  type ImportedSpan,
} from '../domain/imported/aggregate.js';

export interface ReportDeps {
  sites: { listSites(): Promise<SiteConfig[]>; getSite(domain: string): Promise<SiteConfig | null> };
  store: ReportReads;
  rates: () => Promise<UsdRate>;
  clock: () => number;
  /** The filtered reports' engine (`docs/data-model.md`, "Filtered reports"); without it a request with `filters` is a 400. */
  filtered?: FilteredVisits;
  /**
   * Records that someone looks at a site's reports (`TableLooks.seen`), so its filtered reports' table is kept
   * fresh (`docs/data-model.md`, "Filtered reports", *On demand*); absent where the table is refreshed at every run.
   */
  looks?: { seen(site: string): Promise<void> };
}

/** The query of a dated report: its range, and the filter of `filters` (absent, or null for `[]`: the unfiltered report). */
export type DatedQuery = RangeQuery & { filters?: Filter | null };

/** What a filtered answer says it left out (`docs/api.md`, "Filters"): the range's imported days, which hold no visits. */
const filteredNote = (span: ImportedSpan | null, range: DateRange) => ({
  imported: null,
  filtered: { imported_excluded: importedIn(span, range) },
});

/** Whether a breakdown's dimension is a custom property's (`prop:<key>`). */
const isPropDimension = (d: BreakdownDimension): d is `prop:${string}` => d.startsWith(PROP_BREAKDOWN_PREFIX);

/** A payment dimension item's Unattributed counters alone (`UNATTRIBUTED_KEY`), what a property breakdown adds to its visit table's rows. */
const unattributedOf = (item: Record<string, ValueCounters>): Record<string, ValueCounters> => {
  const counters = own(item, UNATTRIBUTED_KEY);
  return counters ? dict([[UNATTRIBUTED_KEY, counters]]) : dict();
};

/** Payment list filters (`docs/api.md` "Reports"). */
export const PAYMENT_FILTERS = LIST_CLASSES;
export type PaymentFilter = ListClass;

/**
 * The site of `domain` if `account` owns it (`docs/security.md` "API keys": a key reads every site
 * of its account). Another account's site is as unknown as no site (`docs/api.md` "Errors": 404).
 * @throws UnavailableError (503) while the site's data waits for a migration to this release's layout (`layoutMismatch`)
 */
export async function siteOf(
  deps: Pick<ReportDeps, 'sites' | 'looks'>,
  account: string,
  domain: string,
): Promise<SiteConfig> {
  const site = await deps.sites.getSite(domain.toLowerCase());
  if (!site || site.account !== account) throw new NotFoundError(`no site ${domain}`);
  // Data in another storage layout would be misread: 503 until a rebuild migrates it.
  const mismatch = layoutMismatch(site);
  if (mismatch) throw new UnavailableError(mismatch);
  // Only a site the caller may read counts as looked at: no one else can make the table refresh.
  await deps.looks?.seen(site.domain);
  return site;
}

/**
 * The site's imported days (`docs/ingestion.md`, "Importing a Plausible export") and the range of
 * `query`: range `all` starts at the first imported day when it comes before the first tracked one.
 */
async function rangeOf(deps: ReportDeps, site: SiteConfig, query: RangeQuery) {
  const [tracked, state] = await Promise.all([
    deps.store.firstDay(namespaceOf(site)),
    deps.store.imported.state(site.domain),
  ]);
  const span: ImportedSpan | null = state && { source: state.source, from: state.from, to: state.to };
  const firstDay = span && (tracked === null || span.from < tracked) ? span.from : tracked;
  return { ...resolveRange(query, { now: deps.clock(), timezone: site.timezone, firstDay }), span };
}

/** A metric's imported periods over the spans of `range`, none when the range holds no imported day. */
function importedPeriods(
  deps: ReportDeps,
  site: SiteConfig,
  span: ImportedSpan | null,
  metric: Parameters<ReportReads['imported']['periods']>[1],
  range: DateRange,
  spans = periodSpans(range),
) {
  return importedIn(span, range) ? deps.store.imported.periods(site.domain, metric, spans) : Promise.resolve([]);
}

/** `GET /api/v1/sites` (`docs/api.md` "Reports"). */
export async function listSites(
  deps: Pick<ReportDeps, 'sites'>,
  account: string,
): Promise<{ sites: Array<{ domain: string; timezone: string }> }> {
  const sites = (await deps.sites.listSites()).filter((s) => s.account === account);
  return { sites: sites.map((s) => ({ domain: s.domain, timezone: s.timezone })) };
}

/**
 * The `visits` items of a range, for their sums and the union of their
 * visitor sets: over `periodSpans`, except that a range reaching today from
 * the 1st of its last month reads that month's own item instead of its days
 * (`openMonth`: no later day holds a visit yet), unless its set would not
 * union to the same visitors (`openMonthSetStandsIn`), when its days are read
 * as well (one more Query).
 */
async function visitsOver(deps: ReportDeps, site: SiteConfig, range: DateRange) {
  const ns = namespaceOf(site);
  const open = openMonth(range, localDay(deps.clock(), site.timezone));
  if (!open) return deps.store.rollups(ns, 'visits', periodSpans(range));
  const read = await deps.store.rollups(ns, 'visits', openMonthSpans(range, open));
  if (openMonthSetStandsIn(read, open)) return read;
  const days = periodSpans(range).at(-1)!;
  return [...read.filter((i) => i.period !== open), ...(await deps.store.rollups(ns, 'visits', [days]))];
}

async function totalsOf(
  deps: ReportDeps,
  site: SiteConfig,
  range: DateRange,
  span: ImportedSpan | null,
): Promise<OverviewTotals> {
  const spans = periodSpans(range);
  const ns = namespaceOf(site);
  const [visits, periods, payers, imported] = await Promise.all([
    visitsOver(deps, site, range),
    deps.store.paymentTotals(ns, spans),
    deps.store.paymentCustomers(ns, spans),
    importedPeriods(deps, site, span, 'visits', range, spans),
  ]);
  return overviewTotals(
    {
      visits,
      payments: periods.map((p) => p.totals),
      payers,
      ...(imported.length > 0 ? { imported: sumImportedVisits(imported) } : {}),
    },
    range,
  );
}

/**
 * The points of a filtered report whose visitors are counted by registers (`registerPoints`: where the
 * unfiltered report's visitor set is registers), from the ROLLUP_COUNTS of the range's unfiltered periods
 * (`unfilteredSpans`; small items, what the unfiltered series reads).
 */
async function unfilteredRegisters(
  deps: ReportDeps,
  site: SiteConfig,
  range: DateRange,
  interval: 'day' | 'month' | null,
): Promise<string[]> {
  const spans = unfilteredSpans(range, interval).map((s) => ({ ...s, sketches: false }));
  return registerPoints(await deps.store.visitRollups(namespaceOf(site), spans), interval);
}

/** How a filtered report that unions the range's periods (overview, goals) counts its visitors. */
const rangeCounting = async (deps: ReportDeps, site: SiteConfig, range: DateRange): Promise<VisitorCounting> =>
  (await unfilteredRegisters(deps, site, range, null)).length > 0 ? 'registers' : 'exact';

/** `GET /api/v1/sites/{domain}/overview` (`docs/api.md` "Overview", "Reports"). */
export async function overview(deps: ReportDeps, account: string, domain: string, query: DatedQuery) {
  const site = await siteOf(deps, account, domain);
  const { range, previous, span } = await rangeOf(deps, site, query);
  const { filters } = query;
  const engine = filters ? engineOf(deps.filtered) : null;
  const totals = (r: typeof range) =>
    engine && filters
      ? rangeCounting(deps, site, r).then((visitors) => filteredTotals(engine, site, filters, r, visitors))
      : totalsOf(deps, site, r, span);
  const [current, before] = await Promise.all([totals(range), totals(previous)]);
  return {
    site: site.domain,
    range,
    previous_range: previous,
    current,
    previous: before,
    change: overviewChange(current, before),
    ...(filters
      ? { ...filteredNote(span, range), previous_imported: null }
      : { imported: importedIn(span, range), previous_imported: importedIn(span, previous) }),
  };
}

/**
 * `GET /api/v1/sites/{domain}/properties` (`docs/api.md`, "Properties"): the custom property keys of the
 * visits that started in the range and match `filters` (every visit without), with their visitors, visits and
 * credited revenue, most visitors first, at most `limit` rows of `total`. Read from the visit table whether
 * filtered or not (no rollup keeps properties), so it lags like a filtered report and `imported` is null.
 * @throws NotFoundError (404) for a site not of the account; BadParameterError (400) where no filtered
 * engine is deployed (named `filters` when given, else `properties`)
 */
export async function properties(
  deps: ReportDeps,
  account: string,
  domain: string,
  query: DatedQuery,
  limit: number,
): Promise<{
  site: string;
  range: DateRange;
  total: number;
  rows: PropKeyRow[];
  imported: null;
  filtered?: { imported_excluded: ImportedSpan | null };
}> {
  const site = await siteOf(deps, account, domain);
  const { range, span } = await rangeOf(deps, site, query);
  const { filters = null } = query;
  const engine = engineOf(deps.filtered, filters ? 'filters' : 'properties');
  const counts = await engine.propKeys(site.domain, filters ?? EVERY_VISIT, { from: range.from, to: range.to });
  const { total, rows } = propKeyRows(counts, limit);
  const note = filters ? filteredNote(span, range) : { imported: null };
  return { site: site.domain, range, total, rows, ...note };
}

/** `GET /api/v1/sites/{domain}/breakdown/{dimension}` (`docs/api.md` "Breakdowns", "Reports"). */
export async function breakdown(
  deps: ReportDeps,
  account: string,
  domain: string,
  dimension: BreakdownDimension,
  query: DatedQuery,
  limit: number,
): Promise<{
  site: string;
  range: DateRange;
  dimension: BreakdownDimension;
  total: number;
  rows: BreakdownRow[];
  imported: ImportedSpan | null;
  filtered?: { imported_excluded: ImportedSpan | null };
}> {
  const site = await siteOf(deps, account, domain);
  const { range, span } = await rangeOf(deps, site, query);
  if (isPropDimension(dimension)) {
    const { filters = null } = query;
    const engine = engineOf(deps.filtered, filters ? 'filters' : 'dimension');
    // Imported days hold no properties: none of them is in the rows, filtered or not.
    const unattributed = async () =>
      (await deps.store.paymentDimension(namespaceOf(site), 'channel', periodSpans(range))).map(unattributedOf);
    const key = propOfDimension(dimension);
    const { total, rows } = await propBreakdownRows(engine, site, filters, range, key, limit, unattributed);
    const note = filters ? filteredNote(span, range) : { imported: null };
    return { site: site.domain, range, dimension, total, rows, ...note };
  }
  if (query.filters) {
    const engine = engineOf(deps.filtered);
    const { total, rows } = await filteredBreakdownRows(engine, site, query.filters, range, dimension, limit);
    return { site: site.domain, range, dimension, total, rows, ...filteredNote(span, range) };
  }
  const spans = periodSpans(range);
  const [visits, payments, imported] = await Promise.all([
    deps.store.rollups(namespaceOf(site), dimension, spans),
    deps.store.paymentDimension(namespaceOf(site), dimension, spans),
    importedPeriods(deps, site, span, dimension, range, spans),
  ]);
  const { total, rows } = breakdownRows(
    [...visits.map((v) => v.counts), ...importedValueCounts(imported)],
    payments,
    limit,
  );
  return { site: site.domain, range, dimension, total, rows, imported: importedIn(span, range) };
}

/**
 * `GET /api/v1/sites/{domain}/goals` (`docs/api.md`, "Goals"): per goal name
 * (or per link URL of `goal`) visitors, visits, completions, conversion rate
 * and credited revenue, from the `goal` rollups, the visits rollups (the
 * range's visitors) and the `goal` payment entries: at most three Queries
 * each (`periodSpans`).
 */
export async function goals(
  deps: ReportDeps,
  account: string,
  domain: string,
  query: DatedQuery,
  goal: string | null,
  limit: number,
): Promise<{
  site: string;
  range: DateRange;
  goal: string | null;
  visitors: number;
  total: number;
  rows: GoalRow[];
  imported: ImportedSpan | null;
  filtered?: { imported_excluded: ImportedSpan | null };
}> {
  const site = await siteOf(deps, account, domain);
  const { range, span } = await rangeOf(deps, site, query);
  if (query.filters) {
    const engine = engineOf(deps.filtered);
    const [counting, items] = await Promise.all([
      rangeCounting(deps, site, range),
      deps.store.rollups(namespaceOf(site), 'goal', periodSpans(range)),
    ]);
    const { visitors, total, rows } = await filteredGoalRows(engine, site, query.filters, range, goal, limit, {
      visitors: counting,
      goals: registerGoals(items),
      links: registerLinks(items),
    });
    return { site: site.domain, range, goal, visitors, total, rows, ...filteredNote(span, range) };
  }
  const spans = periodSpans(range);
  const ns = namespaceOf(site);
  const [items, visits, payments, importedGoals, importedVisits] = await Promise.all([
    deps.store.rollups(ns, 'goal', spans),
    visitsOver(deps, site, range),
    deps.store.paymentDimension(ns, 'goal', spans),
    importedPeriods(deps, site, span, 'goal', range, spans),
    importedPeriods(deps, site, span, 'visits', range, spans),
  ]);
  const visitors =
    countVisitors(unionSketches(visits.map((v) => v.sketch))) + sumImportedVisits(importedVisits).visitors;
  const { total, rows } = goalRows(
    { items, payments, visitors, imported: importedGoalCounts(importedGoals) },
    goal,
    limit,
  );
  return { site: site.domain, range, goal, visitors, total, rows, imported: importedIn(span, range) };
}

/**
 * `GET /api/v1/sites/{domain}/realtime` (`docs/api.md`, "Realtime"): the
 * visitors with an event in the last 5 minutes and their pages and
 * referrers, from the realtime items the sessionizer wrote in the last 6 UTC
 * minutes (one Query).
 */
export async function realtime(
  deps: ReportDeps,
  account: string,
  domain: string,
  limit: number,
): Promise<{ site: string; as_of: string; window_seconds: number } & RealtimeReport> {
  const site = await siteOf(deps, account, domain);
  const now = deps.clock();
  const slices = await deps.store.realtime(namespaceOf(site), now - REALTIME_WINDOW_MS);
  return {
    site: site.domain,
    as_of: new Date(now).toISOString(),
    window_seconds: REALTIME_WINDOW_MS / 1000,
    ...realtimeReport(slices, now, limit),
  };
}

/**
 * `GET /api/v1/sites/{domain}/timeseries` (`docs/api.md`, "Time series"):
 * visitors, sessions, page views, payments and revenue per local hour, day
 * or month of the range; `interval` defaults by the range's length
 * (`defaultInterval`). Reads one hourly or daily counter item per point (at
 * most `INTERVAL_MAX_DAYS`; its distinct visitors without its visitor set),
 * or the overview's spans by month (the sets of a partial month's days).
 * @throws BadParameterError (400) when the range is too long for the interval
 */
export async function timeseries(
  deps: ReportDeps,
  account: string,
  domain: string,
  query: DatedQuery,
  interval?: Interval,
): Promise<{
  site: string;
  range: DateRange;
  interval: Interval;
  points: TimeseriesPoint[];
  imported: ImportedSpan | null;
  filtered?: { imported_excluded: ImportedSpan | null };
}> {
  const site = await siteOf(deps, account, domain);
  const { range, days, span } = await rangeOf(deps, site, query);
  const chosen = interval ?? defaultInterval(range);
  const max = INTERVAL_MAX_DAYS[chosen];
  if (max !== null && days > max)
    throw new BadParameterError(
      'interval',
      `${chosen} takes a range of at most ${max} days; this one has ${days} (use ${chosen === 'hour' ? 'day' : 'month'})`,
    );
  if (query.filters) {
    const engine = engineOf(deps.filtered);
    // By hour the points are counted from the rows, exactly.
    const registers = chosen === 'hour' ? [] : await unfilteredRegisters(deps, site, range, chosen);
    const points = await filteredPoints(engine, site, query.filters, range, chosen, registers);
    return { site: site.domain, range, interval: chosen, points, ...filteredNote(span, range) };
  }
  const ns = namespaceOf(site);
  const open = chosen === 'month' ? openMonth(range, localDay(deps.clock(), site.timezone)) : null;
  const spans = visitSpans(range, chosen, open);
  // Imported days have no hours: an hourly series shows none of them.
  const [read, payments, imported] = await Promise.all([
    deps.store.visitRollups(ns, spans),
    deps.store.paymentTotals(ns, paymentSpans(range, chosen)),
    chosen === 'hour' ? [] : importedPeriods(deps, site, span, 'visits', range, paymentSpans(range, chosen)),
  ]);
  // A small open month (no day past the exact sets' limit) needs its days' sets after all.
  const visits = openMonthNeedsSets(read, open)
    ? [
        ...read.filter((i) => !i.period.startsWith(open!)),
        ...(await deps.store.visitRollups(ns, [{ ...spans.at(-1)!, sketches: true }])),
      ]
    : read;
  const points = timeseriesPoints(
    {
      visits,
      payments,
      imported: imported.map((p) => ({ period: p.period, visits: importedVisitsOf(p) })),
      openMonth: open,
    },
    range,
    chosen,
  );
  return {
    site: site.domain,
    range,
    interval: chosen,
    points,
    imported: chosen === 'hour' ? null : importedIn(span, range),
  };
}

/** The rows of payment keys (`provider:id`), in their order; a key with no stored payment, or none with a row, is left out. */
async function paymentRows(deps: ReportDeps, ns: string, keys: readonly string[]): Promise<PaymentRow[]> {
  const page = keys.map((key) => {
    const [provider, ...id] = key.split(':');
    return { provider: provider as Provider, id: id.join(':') };
  });
  const rate = await deps.rates();
  const stored = new Map(
    (await deps.store.payments(ns, page)).map((p) => [`${p.provider}:${p.provider_payment_id}`, p]),
  );
  return page.flatMap((k) => {
    const p = stored.get(`${k.provider}:${k.id}`);
    const row = p ? paymentRow(p, rate) : null;
    return row ? [row] : [];
  });
}

/**
 * `GET /api/v1/sites/{domain}/payments` (`docs/api.md` "Payments", "Reports"): the payments of
 * the range matching `filter`, newest first, failed ones included (their
 * status says so); `total` counts all that match.
 *
 * Reads the range's counters (the overview's spans), skips whole months and
 * days newest first by their count for the filter (a month it lands in is
 * read by day), then Queries the list from that day back, newest first, one
 * Query per month partition the page spans, each reading at most the day's
 * remainder plus `limit` keys (`docs/data-model.md`, "Payments: a list, and counters recomputed from it").
 */
export async function listPayments(
  deps: ReportDeps,
  account: string,
  domain: string,
  query: DatedQuery,
  filter: PaymentFilter,
  limit: number,
  offset: number,
): Promise<{
  site: string;
  range: DateRange;
  filter: PaymentFilter;
  total: number;
  limit: number;
  offset: number;
  rows: PaymentRow[];
}> {
  const site = await siteOf(deps, account, domain);
  const ns = namespaceOf(site);
  const { range } = await rangeOf(deps, site, query);
  if (query.filters) {
    const engine = engineOf(deps.filtered);
    const { total, keys } = await filteredPaymentPage(engine, site, query.filters, range, filter, offset, limit);
    const rows = await paymentRows(deps, ns, keys);
    return { site: site.domain, range, filter, total, limit, offset, rows };
  }
  const periods = (await deps.store.paymentTotals(ns, periodSpans(range))).sort((a, b) =>
    a.period < b.period ? 1 : -1,
  );
  const total = periods.reduce((n, p) => n + p.totals.listed[filter], 0);
  // The newest day holding the page's first payment, and how many of that class come before it from there.
  const start = async (list: readonly StoredPeriod[], skip: number): Promise<{ day: string; skip: number } | null> => {
    for (const p of list) {
      const n = p.totals.listed[filter];
      if (skip >= n) {
        skip -= n;
        continue;
      }
      if (p.granularity === 'D') return { day: p.period, skip };
      const days = await deps.store.paymentTotals(ns, [
        { granularity: 'D', from: `${p.period}-01`, to: `${p.period}-31` },
      ]);
      return start(
        days.sort((a, b) => (a.period < b.period ? 1 : -1)),
        skip,
      );
    }
    return null;
  };
  const first = offset < total ? await start(periods, offset) : null;
  const keys = first ? await deps.store.paymentPage(ns, filter, range.from, first.day, first.skip, limit) : [];
  const rows = await paymentRows(deps, ns, keys);
  return { site: site.domain, range, filter, total, limit, offset, rows };
}

/**
 * `GET /api/v1/sites/{domain}/retention` (`docs/api.md` "Reports"; `docs/retention.md`):
 * from the cohort rollups of the range's first-payment days (months inside,
 * days at the ends) and of the `churn_30d` window, the first day with a
 * payer and the status sources: at most 8 Queries and a GetItem besides the
 * site and range lookups, whatever the site's history.
 */
export async function retention(
  deps: ReportDeps,
  account: string,
  domain: string,
  query: DatedQuery,
): Promise<RetentionReport> {
  const site = await siteOf(deps, account, domain);
  const { range } = await rangeOf(deps, site, query);
  const ns = namespaceOf(site);
  const now = deps.clock();
  const window = churnWindow(localDay(now, range.timezone));
  if (query.filters) {
    const engine = engineOf(deps.filtered);
    // No span: no cohort item is read, only the site's first payer day and its providers.
    const whole = await deps.store.retentionCohorts(ns, [], []);
    const days = { range, window };
    const cohorts = await filteredRetentionCohorts(engine, deps.store, ns, site, query.filters, days, whole);
    return retentionFromCohorts(site.domain, range, now, cohorts);
  }
  const cohorts = await deps.store.retentionCohorts(ns, periodSpans(range), periodSpans(window));
  return retentionFromCohorts(site.domain, range, now, cohorts);
}

/** `GET /api/v1/sites/{domain}/visitors/{visitor_id}` (`docs/api.md` "Visitor timeline"). @throws NotFoundError when the visitor has no events or payments */
export async function visitorTimeline(
  deps: ReportDeps,
  account: string,
  domain: string,
  visitorId: string,
): Promise<Timeline> {
  const site = await siteOf(deps, account, domain);
  // Every stored visitor id is a valid one (tracker ids and daily hashes alike); any other
  // has no events, and a long one would not even fit in a DynamoDB key (a 503 before this).
  if (!isValidVisitorId(visitorId)) throw new NotFoundError(`no visitor ${visitorId}`);
  const { visits, payments: keys } = await deps.store.visitor(namespaceOf(site), visitorId);
  if (visits.length === 0 && keys.length === 0) throw new NotFoundError(`no visitor ${visitorId}`);
  const rate = await deps.rates();
  const payments = (await deps.store.payments(namespaceOf(site), keys)).flatMap((p) => {
    const row = paymentRow(p, rate);
    return row ? [row] : [];
  });
  return buildTimeline(site.domain, visitorId, visits, payments, deps.clock());
}
