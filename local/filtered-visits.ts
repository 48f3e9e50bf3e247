import type { FilteredPaymentTotals, FilteredRange, FilteredVisitTotals, FilteredVisits } from '../lambdas/ports.js';
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

  /** The first row of a query over the relations; an empty row when no visit was written. */
  private async one(
    site: string,
    filter: Filter,
    range: FilteredRange,
    select: string,
  ): Promise<Record<string, unknown>> {
    return (await this.tables.overShared(site, filter, range, select)).getRowObjectsJS()[0] ?? {};
  }

  async totals(site: string, filter: Filter, range: FilteredRange): Promise<FilteredVisitTotals> {
    const r = await this.one(
      site,
      filter,
      range,
      `SELECT count(DISTINCT visitor_key) AS visitors, count(*) AS sessions, ` +
        `coalesce(sum(pageviews), 0) AS pageviews, count(*) FILTER (WHERE bounce) AS bounces, ` +
        `count(*) FILTER (WHERE timed) AS timed_visits, coalesce(sum(duration_ms), 0) AS duration_ms FROM v`,
    );
    return countsOf(r, ['visitors', 'sessions', 'pageviews', 'bounces', 'timed_visits', 'duration_ms']);
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

  /** The series' sums per day or month (`FilteredSeries`), in period order: visits by their start day, payments by theirs. */
  async series(site: string, filter: Filter, range: FilteredRange, interval: SummedInterval): Promise<FilteredSeries> {
    const period = (day: string) => (interval === 'day' ? `${day}::VARCHAR` : `strftime(${day}, '%Y-%m')`);
    const rows = (
      await this.tables.overShared(
        site,
        filter,
        range,
        `SELECT 'v' AS kind, ${period('day')} AS period, count(*) AS visits, sum(pageviews) AS pageviews, ` +
          `count(DISTINCT visitor_key) AS visitors, 0 AS payments, 0 AS cents FROM v GROUP BY 2 ` +
          `UNION ALL SELECT 'p', ${period('paid_day')}, 0, 0, 0, count(*), sum(cents) FROM p GROUP BY 2 ` +
          // In period order: DuckDB's parallel GROUP BY returns groups in no set order.
          `ORDER BY kind, period`,
      )
    ).getRowObjectsJS();
    const of = (kind: string) => rows.filter((r) => r.kind === kind);
    return {
      visits: of('v').map((r) => ({
        period: String(r.period),
        visits: Number(r.visits),
        pageviews: Number(r.pageviews),
        visitors: Number(r.visitors),
      })),
      payments: of('p').map((r) => ({
        period: String(r.period),
        payments: Number(r.payments),
        cents: Number(r.cents),
      })),
    };
  }

  /** The goals report's sums (`FilteredGoalCounts`): per goal name of the matching visits and of their credited payments. */
  async goals(site: string, filter: Filter, range: FilteredRange): Promise<FilteredGoalCounts> {
    const named = `JOIN dict g ON g.dictionary = 'goal' AND g.id = x.id GROUP BY g.value`;
    const rows = (
      await this.tables.overShared(
        site,
        filter,
        range,
        `SELECT 'v' AS kind, g.value AS goal, count(DISTINCT x.visit_key) AS visits, count(*) AS completions, ` +
          `count(DISTINCT x.visitor_key) AS visitors, 0 AS payments, 0 AS cents, 0 AS customers ` +
          `FROM (SELECT visit_key, visitor_key, unnest(goals) AS id FROM v WHERE len(goals) > 0) x ${named} ` +
          `UNION ALL SELECT 'p', g.value, 0, 0, 0, count(*), sum(x.cents), count(DISTINCT x.customer) ` +
          `FROM (SELECT cents, customer, unnest(${distinctIds('goals')}) AS id FROM p WHERE len(goals) > 0) x ${named} ` +
          `UNION ALL SELECT 't', NULL, 0, 0, count(DISTINCT visitor_key), 0, 0, 0 FROM v`,
      )
    ).getRowObjectsJS();
    const goals = new Map<string, FilteredGoalCounts['goals'] extends ReadonlyMap<string, infer V> ? V : never>();
    const zero = { visits: 0, completions: 0, visitors: 0, payments: 0, cents: 0, customers: 0 };
    for (const r of rows) {
      if (r.kind === 't') continue;
      const goal = String(r.goal);
      const g = goals.get(goal) ?? { ...zero };
      if (r.kind === 'v') Object.assign(g, countsOf(r, ['visits', 'completions', 'visitors']));
      else Object.assign(g, countsOf(r, ['payments', 'cents', 'customers']));
      goals.set(goal, g);
    }
    return { visitors: Number(rows.find((r) => r.kind === 't')?.visitors ?? 0), goals };
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
