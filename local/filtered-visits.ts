import type {
  FilteredPaymentTotals,
  FilteredRange,
  FilteredVisitTotals,
  FilteredVisits,
  VisitorCounting,
} from '../lambdas/ports.js';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import { DECODED_COLUMNS, rowDecoder } from './visit-table.js';
import type {
  CreditedPayment,
  FilteredGoalCounts,
  FilteredInput,
  FilteredSeries,
  SummedInterval,
} from '../lambdas/domain/reports/filtered.js';
import type { DictionaryName } from '../lambdas/domain/visit-table.js';
import { FilteredRelations, LOCAL_SHARING, countsOf, type SharingOptions } from './filtered-relations.js';
import { distinctIds } from './filter-sql.js';
import { FilteredBreakdowns } from './filtered-breakdowns.js';
import { FilteredPaymentLists } from './filtered-payment-lists.js';
import { TOTAL_SUMS, monthRegisters, rankedGroups, visitorGroups, visitorsOf } from './visitor-key.js';
import { GOAL_VISITOR_LIMITS } from '../lambdas/domain/rollup.js';
import { sqlLiteral } from './sql.js';
import { eachDay } from '../lambdas/domain/range.js';

/** A list column of goal completions, one id per completion, and the dictionary of its ids. */
interface ListColumn {
  column: 'goals' | 'links';
  dictionary: DictionaryName;
  /** Whether a load's shared tables hold it (`SHARED_DIMENSION_COLUMNS`). */
  shared: boolean;
}
/** The goals' names. */
const GOAL_LIST: ListColumn = { column: 'goals', dictionary: 'goal', shared: true };
/** The outbound link URLs (`VisitRow.links`). */
const LINK_LIST: ListColumn = { column: 'links', dictionary: 'link', shared: false };

/**
 * The filtered reads of the local visit and payments tables
 * (`FilteredVisits`): DuckDB in process over the files `LocalVisitTable`
 * writes, reading only the months of the range and, within them, the days
 * asked for (row groups skipped
 * by their min/max of `day`). A payment carries its credited visit's
 * columns (`LocalVisitTable.writePayments`), so revenue reads only the
 * range's payment months and no visit outside the range.
 */
export class LocalFilteredVisits implements FilteredVisits {
  private readonly tables: FilteredRelations;
  private readonly breakdowns: FilteredBreakdowns;
  private readonly lists: FilteredPaymentLists;

  /**
   * @param root the visit table's directory (`LocalVisitTable`'s)
   * @param sharing how a load's requests share one evaluation of the filter (`SharingOptions`; the local
   * server's bounds by default), or null for none
   */
  constructor(root: string, sharing: SharingOptions | null = LOCAL_SHARING) {
    this.tables = new FilteredRelations(root, sharing);
    this.breakdowns = new FilteredBreakdowns(this.tables);
    this.lists = new FilteredPaymentLists(this.tables);
  }

  /**
   * The range's matching visits, decoded, and the range's counted payments credited to a matching visit,
   * each with its visit's row (carried by the payment): the input of the reference reports (`FilteredInput`).
   */
  async input(site: string, filter: Filter, range: FilteredRange): Promise<FilteredInput> {
    const { sql: relations } = await this.tables.relations(site, filter, range);
    const db = await this.tables.connect();
    const entries = (await db.runAndReadAll(`${relations} SELECT dictionary, value, id FROM dict`))
      .getRowObjectsJS()
      .map((r) => ({ dictionary: String(r.dictionary) as DictionaryName, value: String(r.value), id: Number(r.id) }));
    const decode = rowDecoder(entries, `visit table of ${site}`);
    const rows = (await db.runAndReadAll(`${relations} SELECT ${DECODED_COLUMNS} FROM v`))
      .getRowObjectsJS()
      .map(decode);
    const paid = await db.runAndReadAll(
      `${relations} SELECT *, epoch_ms(ts) AS paid_ms, paid_day::VARCHAR AS paid_text, ` +
        `visit_day::VARCHAR AS day_text, epoch_ms(start_ts) AS start_ms FROM p`,
    );
    const payments = paid.getRowObjectsJS().map((r): CreditedPayment => ({
      ts: Number(r.paid_ms),
      day: String(r.paid_text),
      cents: Number(r.cents),
      customer: String(r.customer),
      failed: false,
      visit: decode(r),
    }));
    return { rows, payments };
  }

  /**
   * The first row of a query over the relations (and `t`, the rows of `table`: `FilteredRelations.overShared`);
   * an empty row when no visit was written. Run once for the requests of a load that ask it at once (the goals
   * report asks for the totals' visitors).
   */
  private async one(
    site: string,
    filter: Filter,
    range: FilteredRange,
    select: string,
    table?: (copied: boolean) => string,
  ): Promise<Record<string, unknown>> {
    return (await this.tables.overShared(site, filter, range, select, { once: true, table }))[0] ?? {};
  }

  async totals(
    site: string,
    filter: Filter,
    range: FilteredRange,
    visitors: VisitorCounting = 'exact',
  ): Promise<FilteredVisitTotals> {
    const exact = visitors === 'exact';
    // By registers in an engine that shares a load's work: from the load's month registers (`monthRegisters`),
    // which a series by month reads too.
    const fromMonths = !exact && this.tables.sharesLoads;
    // The report calls the visits sessions.
    const as = (name: string) => (name === 'visits' ? 'sessions' : name);
    const sums = TOTAL_SUMS.map(([name, sum]) => `${fromMonths ? `sum(${name})` : sum} AS ${as(name)}`);
    const r = await this.one(
      site,
      filter,
      range,
      fromMonths ? rankedGroups('FROM t', [], sums) : visitorGroups('FROM v', [], String(exact), sums),
      fromMonths ? monthRegisters : undefined,
    );
    return {
      visitors: visitorsOf(r, exact),
      ...countsOf(r, ['sessions', 'pageviews', 'bounces', 'timed_visits', 'duration_ms']),
    };
  }

  async payments(site: string, filter: Filter, range: FilteredRange): Promise<FilteredPaymentTotals> {
    const r = await this.one(
      site,
      filter,
      range,
      `SELECT count(*) AS payments, coalesce(sum(cents), 0) AS cents, ` +
        `count(DISTINCT customer) AS customers, count(*) FILTER (WHERE matched) AS matched_payments, ` +
        `coalesce(sum(cents) FILTER (WHERE matched), 0) AS matched_cents, ` +
        `count(DISTINCT customer) FILTER (WHERE matched) AS converted FROM p`,
    );
    return countsOf(r, ['payments', 'cents', 'customers', 'matched_payments', 'matched_cents', 'converted']);
  }

  /** `FilteredBreakdowns.breakdown` */
  breakdown(...args: Parameters<FilteredVisits['breakdown']>) {
    return this.breakdowns.breakdown(...args);
  }

  /** `FilteredBreakdowns.propBreakdown` */
  propBreakdown(...args: Parameters<FilteredVisits['propBreakdown']>) {
    return this.breakdowns.propBreakdown(...args);
  }

  /** `FilteredBreakdowns.propKeys` */
  propKeys(...args: Parameters<FilteredVisits['propKeys']>) {
    return this.breakdowns.propKeys(...args);
  }

  /**
   * The series' sums per day or month (`FilteredSeries`), in period order: visits by their start day, payments by
   * theirs; the visitors of a point in `registers` by registers, the others exactly.
   */
  async series(
    site: string,
    filter: Filter,
    range: FilteredRange,
    interval: SummedInterval,
    registers: readonly string[] = [],
  ): Promise<FilteredSeries> {
    const period = (day: string) => (interval === 'day' ? `${day}::VARCHAR` : `strftime(${day}, '%Y-%m')`);
    // Visits are grouped by the period's first day (a DATE: a cheaper key than text among many registers).
    const start = interval === 'day' ? 'day' : `date_trunc('month', day)::DATE`;
    const startOf = (point: string) => `${sqlLiteral(interval === 'day' ? point : `${point}-01`)}::DATE`;
    const byRegisters = new Set(registers);
    // Every point by registers: a constant false, so no distinct count is planned (`visitorGroups`).
    const points = new Set(eachDay(range.from, range.to).map((d) => (interval === 'day' ? d : d.slice(0, 7))));
    const exact =
      registers.length === 0
        ? 'true'
        : [...points].every((point) => byRegisters.has(point))
          ? 'false'
          : `period_start NOT IN (${registers.map(startOf).join(', ')})`;
    // By month, every point by registers, in an engine that shares a load's work: from the load's month
    // registers (`monthRegisters`), which its totals read too.
    const fromMonths = interval === 'month' && exact === 'false' && this.tables.sharesLoads;
    const visits = fromMonths
      ? rankedGroups('FROM t', ['period_start'], ['sum(visits) AS visits', 'sum(pageviews) AS pageviews'])
      : visitorGroups(`SELECT *, ${start} AS period_start FROM v`, ['period_start'], exact, [
          'count(*) AS visits',
          'sum(pageviews) AS pageviews',
        ]);
    const rows = await this.tables.overShared(
      site,
      filter,
      range,
      `SELECT 'v' AS kind, ${period('period_start')} AS period, visits, pageviews, exact_visitors, ranks, ` +
        `rank_counts, 0 AS payments, 0 AS cents FROM (${visits}) ` +
        `UNION ALL SELECT 'p', ${period('paid_day')}, 0, 0, NULL, NULL, NULL, count(*), sum(cents) ` +
        // In period order: DuckDB's parallel GROUP BY returns groups in no set order.
        `FROM p GROUP BY 2 ORDER BY kind, period`,
      { table: fromMonths ? monthRegisters : undefined },
    );
    const of = (kind: string) => rows.filter((r) => r.kind === kind);
    return {
      visits: of('v').map((r) => ({
        period: String(r.period),
        visits: Number(r.visits),
        pageviews: Number(r.pageviews),
        visitors: visitorsOf(r, !byRegisters.has(String(r.period))),
      })),
      payments: of('p').map((r) => ({
        period: String(r.period),
        payments: Number(r.payments),
        cents: Number(r.cents),
      })),
    };
  }

  /**
   * The goals report's sums (`FilteredGoalCounts`): per goal name of the matching visits and of their credited
   * payments; the report's visitors are the totals' (`totals`): run once for a load that asks both at once
   * where the engine shares a load's work, else in the goals' own query (a Lambda's one request, one statement).
   */
  goals(
    site: string,
    filter: Filter,
    range: FilteredRange,
    visitors: VisitorCounting = 'exact',
    registerGoals: readonly string[] = [],
  ): Promise<FilteredGoalCounts> {
    return this.listCounts(GOAL_LIST, site, filter, range, visitors, registerGoals);
  }

  /**
   * The goals report's sums per outbound link URL (`FilteredGoalCounts` keyed by URL): the `links` of the
   * matching visits and of their credited payments, as `goals` per goal name. Not part of a dashboard's load
   * (the panel's detail), so never over the load's shared tables, which do not hold `links`.
   */
  links(
    site: string,
    filter: Filter,
    range: FilteredRange,
    visitors: VisitorCounting = 'exact',
    registerLinks: readonly string[] = [],
  ): Promise<FilteredGoalCounts> {
    return this.listCounts(LINK_LIST, site, filter, range, visitors, registerLinks);
  }

  /**
   * Sums per value of a list column whose each id is one completion (`goals`, `links`): the visits holding
   * it, its completions, their visitors (those of the values in `registerValues` by the goal sketches'
   * registers, `GOAL_VISITOR_LIMITS`, the others exactly), and the payments credited to those visits; with the
   * report's visitors counted by `visitors`.
   */
  private async listCounts(
    list: ListColumn,
    site: string,
    filter: Filter,
    range: FilteredRange,
    visitors: VisitorCounting,
    registerValues: readonly string[],
  ): Promise<FilteredGoalCounts> {
    const { column } = list;
    const named = `JOIN dict g ON g.dictionary = '${list.dictionary}' AND g.id = x.id`;
    const byRegisters = new Set(registerValues);
    const exactGoal =
      registerValues.length === 0 ? 'true' : `goal NOT IN (${registerValues.map(sqlLiteral).join(', ')})`;
    const none = 'NULL AS exact_visitors, NULL AS ranks, NULL AS rank_counts';
    // Each value's visitors by the goal sketches' registers (`GOAL_VISITOR_LIMITS`). A visit counts once per value
    // (at the value's first place in its list), each completion once: no visit key to read and count distinct.
    const perGoal = visitorGroups(
      `SELECT g.value AS goal, x.visitor_key, x.first ` +
        `FROM (SELECT visitor_key, unnest(${column}) AS id, ` +
        `unnest(list_transform(${column}, (id, i) -> list_position(${column}, id) = i)) AS first FROM v WHERE len(${column}) > 0) x ${named}`,
      ['goal'],
      exactGoal,
      ['count(*) FILTER (WHERE first) AS visits', 'count(*) AS completions'],
      GOAL_VISITOR_LIMITS.precision,
    );
    const exact = visitors === 'exact';
    // The load's shared tables hold `goals`, not `links`: a list they do not hold is read alone, its visitors with it.
    const shared = this.tables.sharesLoads && list.shared;
    const [rows, totals] = await Promise.all([
      this.tables.overShared(
        site,
        filter,
        range,
        `SELECT 'v' AS kind, goal, visits, completions, 0 AS payments, 0 AS cents, 0 AS customers, ` +
          `exact_visitors, ranks, rank_counts FROM (${perGoal}) ` +
          `UNION ALL SELECT 'p', g.value, 0, 0, count(*), sum(x.cents), count(DISTINCT x.customer), ${none} ` +
          `FROM (SELECT cents, customer, unnest(${distinctIds(column)}) AS id FROM p WHERE len(${column}) > 0) x ${named} GROUP BY g.value` +
          (shared
            ? ''
            : ` UNION ALL SELECT 't', NULL, 0, 0, 0, 0, 0, exact_visitors, ranks, rank_counts ` +
              `FROM (${visitorGroups('FROM v', [], String(exact), [])})`),
        { shareable: list.shared },
      ),
      shared ? this.totals(site, filter, range, visitors) : null,
    ]);
    const goals = new Map<string, FilteredGoalCounts['goals'] extends ReadonlyMap<string, infer V> ? V : never>();
    const zero = { visits: 0, completions: 0, visitors: 0, payments: 0, cents: 0, customers: 0 };
    for (const r of rows) {
      if (r.kind === 't') continue;
      const goal = String(r.goal);
      const g = goals.get(goal) ?? { ...zero };
      if (r.kind === 'v')
        Object.assign(g, countsOf(r, ['visits', 'completions']), {
          visitors: visitorsOf(r, !byRegisters.has(goal), GOAL_VISITOR_LIMITS.precision),
        });
      else Object.assign(g, countsOf(r, ['payments', 'cents', 'customers']));
      goals.set(goal, g);
    }
    const reportVisitors = totals?.visitors ?? visitorsOf(rows.find((r) => r.kind === 't') ?? {}, exact);
    return { visitors: reportVisitors, goals };
  }

  /** `FilteredPaymentLists.paymentList` */
  paymentList(...args: Parameters<FilteredVisits['paymentList']>) {
    return this.lists.paymentList(...args);
  }

  /** `FilteredPaymentLists.firstPayers` */
  firstPayers(...args: Parameters<FilteredVisits['firstPayers']>) {
    return this.lists.firstPayers(...args);
  }

  /** Closes DuckDB. */
  close(): Promise<void> {
    return this.tables.close();
  }
}
