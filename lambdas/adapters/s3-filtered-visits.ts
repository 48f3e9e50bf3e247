import type { Filter } from '../domain/reports/filters.js';
import type { FilteredInput } from '../domain/reports/filtered.js';
import { eachDay } from '../domain/range.js';
import type { Dimension } from '../domain/rollup.js';
import type {
  FilteredPaymentTotals,
  FilteredRange,
  FilteredValue,
  FilteredVisitTotals,
  FilteredVisits,
} from '../ports.js';
import type { FilteredGoalCounts, FilteredSeries, SummedInterval } from '../domain/reports/filtered.js';
import type { ListClass } from '../domain/payments/contribution.js';
import { LocalFilteredVisits } from '../../local/filtered-visits.js';
import { dictionaryFilePath, monthFilePath, openFilePath, paymentsFilePath } from '../../local/visit-table.js';
import type { S3TableFiles } from './s3-table-files.js';

/** The months (`YYYY-MM`) of a site-local day span. */
const monthsOf = (from: string, to: string) => [...new Set(eachDay(from, to).map((d) => d.slice(0, 7)))];

/**
 * Filtered reads of the visit and payments tables in S3 (`FilteredVisits`, `docs/data-model.md`
 * "Filtered reports"): the files a query reads (the dictionary, the open days, the range's payment
 * months, and the visit months from the earliest credited visit's to the range's end) are fetched
 * into `/tmp` (`S3TableFiles`: a listing per site at most every `listTtlMs`, a GetObject only for a
 * file whose ETag changed, so a warm instance reads S3 once per new version), then the local twin's
 * engine (`LocalFilteredVisits`, DuckDB) runs its SQL on them unchanged. DuckDB's `httpfs` is not
 * used: it is an extension DuckDB downloads at first load, which a Lambda without egress cannot.
 */
export class S3FilteredVisits implements FilteredVisits {
  private readonly engine: LocalFilteredVisits;

  constructor(private readonly files: S3TableFiles) {
    this.engine = new LocalFilteredVisits(files.root);
  }

  /**
   * Runs `query` once the range's files are local, holding them until it ends.
   * @throws S3ServiceException when S3 fails; Error with the engine's message
   */
  private async over<T>(site: string, range: FilteredRange, query: () => Promise<T>): Promise<T> {
    const root = this.files.root;
    const first = [
      dictionaryFilePath(root, site),
      openFilePath(root, site),
      ...monthsOf(range.from, range.to).map((m) => paymentsFilePath(root, site, m)),
    ];
    await this.files.fetch(site, first);
    const visits: string[] = [];
    try {
      // The payments say how far back their credited visits go (a renewal keeps its first purchase's credit).
      const from = await this.engine.earliestCredited(site, range);
      visits.push(
        ...monthsOf(from < range.creditedFrom ? from : range.creditedFrom, range.to).map((m) =>
          monthFilePath(root, site, m),
        ),
      );
      await this.files.fetch(site, visits);
      try {
        return await query();
      } finally {
        await this.files.release(visits);
      }
    } finally {
      await this.files.release(first);
    }
  }

  totals(site: string, filter: Filter, range: FilteredRange): Promise<FilteredVisitTotals> {
    return this.over(site, range, () => this.engine.totals(site, filter, range));
  }

  payments(site: string, filter: Filter, range: FilteredRange): Promise<FilteredPaymentTotals> {
    return this.over(site, range, () => this.engine.payments(site, filter, range));
  }

  breakdown(
    site: string,
    filter: Filter,
    range: FilteredRange,
    dimension: Dimension,
  ): Promise<Map<string, FilteredValue>> {
    return this.over(site, range, () => this.engine.breakdown(site, filter, range, dimension));
  }

  input(site: string, filter: Filter, range: FilteredRange): Promise<FilteredInput> {
    return this.over(site, range, () => this.engine.input(site, filter, range));
  }

  propBreakdown(site: string, filter: Filter, range: FilteredRange, key: string): Promise<Map<string, FilteredValue>> {
    return this.over(site, range, () => this.engine.propBreakdown(site, filter, range, key));
  }

  series(site: string, filter: Filter, range: FilteredRange, interval: SummedInterval): Promise<FilteredSeries> {
    return this.over(site, range, () => this.engine.series(site, filter, range, interval));
  }

  goals(site: string, filter: Filter, range: FilteredRange): Promise<FilteredGoalCounts> {
    return this.over(site, range, () => this.engine.goals(site, filter, range));
  }

  paymentList(
    site: string,
    filter: Filter,
    range: FilteredRange,
    cls: ListClass,
    offset: number,
    limit: number,
  ): Promise<{ total: number; keys: string[] }> {
    return this.over(site, range, () => this.engine.paymentList(site, filter, range, cls, offset, limit));
  }

  firstPayers(site: string, filter: Filter, range: FilteredRange): Promise<Set<string>> {
    return this.over(site, range, () => this.engine.firstPayers(site, filter, range));
  }

  /** Closes DuckDB. */
  close(): Promise<void> {
    return this.engine.close();
  }
}
