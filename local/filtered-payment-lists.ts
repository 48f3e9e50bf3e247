import type { FilteredRange, FilteredVisits } from '../lambdas/ports.js';
import type { Filter } from '../lambdas/domain/reports/filters.js';
import type { ListClass } from '../lambdas/domain/payments/contribution.js';
import type { FilteredRelations } from './filtered-relations.js';

/**
 * The local filtered engine's payment lists: the keys of the range's credited payments a filter keeps
 * (a page, newest first), and the payers whose first payment of the range it keeps.
 */
export class FilteredPaymentLists {
  constructor(private readonly tables: FilteredRelations) {}

  /** A page of the keys of the range's credited payments of class `cls` the filter keeps, newest first, and their total. */
  async paymentList(
    ...[site, filter, range, cls, offset, limit]: Parameters<FilteredVisits['paymentList']>
  ): Promise<{ total: number; keys: string[] }> {
    const only = LIST_CLASS_SQL[cls];
    if (only === null) return { total: 0, keys: [] };
    const db = await this.tables.connect();
    const { sql, where } = await this.tables.relations(site, filter, range);
    // Failed payments are listed too (their status says so), as in the unfiltered list.
    const listed =
      `${sql}, l AS (SELECT q.key, q.ts FROM q ` + `WHERE ${only} AND coalesce(q.credited, false) AND ${where})`;
    const [counted, page] = await Promise.all([
      db.runAndReadAll(`${listed} SELECT count(*) AS total FROM l`),
      db.runAndReadAll(
        `${listed} SELECT key FROM l ORDER BY ts DESC, key DESC LIMIT ${Math.trunc(limit)} OFFSET ${Math.trunc(offset)}`,
      ),
    ]);
    return {
      total: Number(counted.getRowObjectsJS()[0]?.total ?? 0),
      keys: page.getRowObjectsJS().map((r) => String(r.key)),
    };
  }

  /** The payers whose first counted payment of the range is credited to a visit the filter keeps. */
  async firstPayers(site: string, filter: Filter, range: FilteredRange): Promise<Set<string>> {
    const db = await this.tables.connect();
    const { sql, where } = await this.tables.relations(site, filter, range);
    // A payer's first counted payment of the days: earliest time, ties by key (`payerSummary`'s order). Not
    // `arg_min`: it skips a NULL visit, so a first payment credited to no visit would give way to a later one.
    const reader = await db.runAndReadAll(
      `${sql}, f AS (SELECT *, row_number() OVER (PARTITION BY customer ORDER BY ts, key) AS n ` +
        `FROM q WHERE NOT failed) ` +
        `SELECT customer FROM f WHERE n = 1 AND coalesce(credited, false) AND ${where}`,
    );
    return new Set(reader.getRowObjectsJS().map((r) => String(r.customer)));
  }
}

/** Which of the range's credited payments a list class keeps (`docs/api.md`, "Filters"); null: none (an Unattributed payment matches no filter). */
const LIST_CLASS_SQL: Readonly<Record<ListClass, string | null>> = {
  all: 'true',
  attributed: 'true',
  unattributed: null,
  // A file written before the column reads it as NULL: not refunded, until the next run writes it.
  refunded: 'coalesce(q.refunded, false)',
};
