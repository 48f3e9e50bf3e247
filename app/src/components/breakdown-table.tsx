import type { JSX } from 'preact';
import type { BreakdownRow } from '../api.js';
import { formatCount, formatUsd, formatUsdOrDash } from '../format.js';
import { barShare, isPinned, type SortColumn } from './breakdown-rows.js';

/** A column heading that abbreviates itself at phone width (CSS chooses). */
export function Short(props: { long: string; short: string }): JSX.Element {
  return (
    <>
      <span class="long">{props.long}</span>
      <abbr class="short" title={props.long}>
        {props.short}
      </abbr>
    </>
  );
}

/**
 * The numeric columns: what each counts, said in its heading and its title.
 * A row's `visitors` counts visits that started in the range (`docs/api.md` "Breakdowns"
 * rule 1), and its `revenue_per_visitor` divides by those visits, so the
 * table calls them visits.
 */
export const COLUMNS: ReadonlyArray<{ key: SortColumn; long: string; short: string; title: string }> = [
  { key: 'visitors', long: 'Visits', short: 'Visits', title: 'Visits that started in the range' },
  { key: 'payments', long: 'Payments', short: 'Pay.', title: 'Payments credited to these visits' },
  { key: 'revenue_usd', long: 'Revenue', short: 'Rev.', title: 'Credited revenue, USD net of refunds' },
  {
    key: 'revenue_per_visitor',
    long: 'Rev. / visit',
    short: 'RPV',
    title: 'Revenue per visit: credited revenue ÷ visits that started in the range',
  },
];

/**
 * The table of a breakdown's rows (a dimension's, or a custom property's values): the label column, whose
 * cells `label` makes, and visits, payments, revenue and revenue per visit, each heading a button that sorts
 * by it (`setSort`), each row's bar its share of the sorted column among `all` the rows asked.
 */
export function BreakdownTable(props: {
  rows: readonly BreakdownRow[];
  all: readonly BreakdownRow[];
  sort: SortColumn;
  setSort(column: SortColumn): void;
  /** The label column's heading. */
  heading: string;
  /** What the table's `data-dimension` says: the breakdown's dimension, `prop:<key>` for a property. */
  dimension: string;
  label(row: BreakdownRow): JSX.Element;
}): JSX.Element {
  const { sort, setSort, rows, all } = props;
  return (
    <table class="breakdown" data-dimension={props.dimension} data-sort={sort}>
      <thead>
        <tr>
          <th scope="col">{props.heading}</th>
          {COLUMNS.map((c) => (
            <th
              key={c.key}
              scope="col"
              class="num"
              data-col={c.key}
              title={c.title}
              aria-sort={sort === c.key ? 'descending' : undefined}
            >
              <button type="button" class="sort-button" data-sort-by={c.key} onClick={() => setSort(c.key)}>
                <Short long={c.long} short={c.short} />
                <span class="sort-mark" aria-hidden="true">
                  {sort === c.key ? '↓' : ''}
                </span>
              </button>
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr
            key={`${row.key}|${row.unattributed}`}
            class={row.unattributed ? 'row-unattributed' : isPinned(row) ? 'row-none' : ''}
            data-key={row.unattributed ? '__unattributed' : (row.key ?? '__none')}
          >
            <th scope="row" class="key">
              <span class="bar" style={{ width: `${barShare(row, all, sort) * 100}%` }} aria-hidden="true" />
              {props.label(row)}
            </th>
            <td class="num" data-col="visitors">
              {row.unattributed ? '—' : formatCount(row.visitors)}
            </td>
            <td class="num" data-col="payments">
              {formatCount(row.payments)}
            </td>
            <td class="num" data-col="revenue_usd">
              {formatUsd(row.revenue_usd)}
            </td>
            <td class="num" data-col="revenue_per_visitor">
              {formatUsdOrDash(row.revenue_per_visitor)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
