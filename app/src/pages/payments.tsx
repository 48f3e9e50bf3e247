import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, csvHref, type PaymentFilter, type PaymentRow, type ReportScope, type Touch } from '../api.js';
import { exportPages } from '../export.js';
import { SiteHeader } from '../components/layout.js';
import { RangePicker } from '../components/range-picker.js';
import { ErrorBox, Loading } from '../components/ui.js';
import { formatCount, formatDateTime, formatMinor, formatUsd } from '../format.js';
import { rangeFromQuery, rangeSearch } from '../range.js';
import { useData } from '../use-data.js';
import { FilterBar } from '../components/filter-bar.js';
import { filterParams } from '../filters.js';
import { useFilters } from '../use-filters.js';

/** The payments filters (`docs/api.md` "Payments") and their names in the app. */
export const FILTERS: ReadonlyArray<{ value: PaymentFilter; label: string }> = [
  { value: 'all', label: 'All' },
  { value: 'attributed', label: 'Attributed' },
  { value: 'unattributed', label: 'Unattributed' },
  { value: 'refunded', label: 'Refunded' },
];

/** Rows per page (the API's default, up to 200). */
export const PAGE_SIZE = 20;

/** "CSV": every payment of the range and filter, every page of them, as one file (app/src/export.ts), with its progress. */
function ExportButton(props: {
  domain: string;
  range: ReportScope;
  filter: PaymentFilter;
  total: number;
}): JSX.Element {
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setError(null);
    setProgress(0);
    try {
      await exportPages({
        pageUrl: (limit, offset) => csvHref.payments(props.domain, props.range, props.filter, limit, offset),
        total: props.total,
        fallbackName: `${props.domain}-payments-${props.filter}.csv`,
        onProgress: setProgress,
      });
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setProgress(null);
    }
  };
  return (
    <>
      <button
        type="button"
        class="btn btn-small btn-ghost"
        data-csv="payments"
        onClick={() => void run()}
        disabled={progress !== null}
        title={`All ${formatCount(props.total)} payments of the range and filter as CSV`}
      >
        {progress === null ? 'CSV' : `CSV ${formatCount(progress)} of ${formatCount(props.total)}…`}
      </button>
      {error ? (
        <span class="field-error" role="alert">
          {error}
        </span>
      ) : null}
    </>
  );
}

/** "Search · google.com · spring-sale": how a touch reads in one line. */
export function touchSummary(t: Touch): string {
  return [t.channel, t.referrer_host, t.campaign].filter(Boolean).join(' · ');
}

function TouchCell(props: { touch: Touch | null; empty: string }): JSX.Element {
  if (!props.touch) return <span class="muted">{props.empty}</span>;
  const t = props.touch;
  return (
    <span class="touch">
      <span class="touch-main">{touchSummary(t)}</span>
      <span class="touch-sub muted">
        {formatDateTime(t.ts)}
        {t.landing_page ? ` · ${t.landing_page}` : ''}
        {t.country ? ` · ${t.country}` : ''}
        {t.device ? ` · ${t.device}` : ''}
      </span>
    </span>
  );
}

/** One payment as a table row (also used by the visitor timeline's payment list). */
export function PaymentRowView(props: { row: PaymentRow; domain: string; showVisitor?: boolean }): JSX.Element {
  const p = props.row;
  return (
    <tr data-payment={p.provider_payment_id} class={p.status !== 'paid' ? `status-${p.status}` : ''}>
      <td data-label="Time" class="nowrap">
        <div>{formatDateTime(p.ts)}</div>
      </td>
      <td data-label="Amount" class="num">
        <div>
          <span data-col="amount">{formatMinor(p.amount, p.currency)}</span>
          {p.refunded > 0 ? <span class="refunded"> −{formatMinor(p.refunded, p.currency)} refunded</span> : null}
          {p.is_renewal ? <span class="tag">renewal</span> : null}
        </div>
      </td>
      <td data-label="Net USD" class="num">
        <div data-col="net_usd">{formatUsd(p.net_usd)}</div>
      </td>
      <td data-label="Status">
        <div>
          <span class={`status status-${p.status}`}>{p.status}</span>
          <span class="muted small"> {p.provider}</span>
        </div>
      </td>
      <td data-label="Credited touch">
        <TouchCell touch={p.touch} empty="Unattributed" />
      </td>
      <td data-label="First touch">
        <TouchCell touch={p.first_touch} empty="—" />
      </td>
      {props.showVisitor !== false ? (
        <td data-label="Visitor" class="nowrap">
          <div>
            {p.visitor ? (
              <a
                href={`/sites/${encodeURIComponent(props.domain)}/visitors/${encodeURIComponent(p.visitor)}`}
                class="visitor-link mono"
                title="Open the visitor's timeline"
              >
                {p.visitor.slice(0, 10)}…
              </a>
            ) : (
              <span class="muted">unknown</span>
            )}
          </div>
        </td>
      ) : null}
    </tr>
  );
}

/** The payments table's head. */
export function PaymentsHead(props: { showVisitor?: boolean }): JSX.Element {
  return (
    <thead>
      <tr>
        <th scope="col">Time</th>
        <th scope="col" class="num">
          Amount
        </th>
        <th scope="col" class="num">
          Net USD
        </th>
        <th scope="col">Status</th>
        <th scope="col">Credited touch</th>
        <th scope="col">First touch</th>
        {props.showVisitor !== false ? <th scope="col">Visitor</th> : null}
      </tr>
    </thead>
  );
}

/**
 * `/sites/<domain>/payments?range=…&filter=…&offset=…&f=…`: payments, newest
 * first, with their touches; the dashboard's filters (`f`) keep only the
 * payments credited to a matching visit.
 */
export function PaymentsPage(): JSX.Element {
  const { params } = useRoute();
  const { query, path } = useLocation();
  const domain = params.domain ?? '';
  const filters = useFilters();
  const range = rangeFromQuery(query);
  const filter = (FILTERS.find((f) => f.value === query.filter)?.value ?? 'all') as PaymentFilter;
  const offset = Math.max(0, Math.floor(Number(query.offset) || 0));
  const data = useData(
    () => api.payments(domain, { ...range, filters: filters.json }, filter, PAGE_SIZE, offset),
    `${domain}|${JSON.stringify(range)}|${filter}|${offset}|${filters.json ?? ''}`,
  );
  const f = filterParams(filters.chips);
  const search = rangeSearch(range, { f });
  const page = data.data;
  const href = (l: PaymentFilter, o: number) =>
    `${path}${rangeSearch(range, { filter: l === 'all' ? null : l, offset: o || null, f })}`;
  return (
    <div class="page">
      <SiteHeader domain={domain} search={search} current="payments">
        <RangePicker range={range} extra={{ filter: filter === 'all' ? null : filter, f }} />
      </SiteHeader>
      <FilterBar filters={filters} domain={domain} range={range}>
        <p>
          Only the payments credited to a visit that matches the filters; a payment credited to no visit (Unattributed)
          matches none.
        </p>
      </FilterBar>
      <div class="toolbar">
        <nav class="segmented" aria-label="Filter payments">
          {FILTERS.map((l) => (
            <a
              key={l.value}
              href={href(l.value, 0)}
              class={l.value === filter ? 'active' : ''}
              aria-current={l.value === filter ? 'page' : undefined}
              data-filter={l.value}
            >
              {l.label}
            </a>
          ))}
        </nav>
        {page ? (
          <span class="muted" data-total={page.total}>
            {formatCount(page.total)} payment{page.total === 1 ? '' : 's'}
          </span>
        ) : null}
      </div>
      {data.error ? <ErrorBox error={data.error} retry={data.reload} /> : null}
      {!page && data.loading ? <Loading /> : null}
      {page ? (
        <div class="card table-card" aria-busy={data.loading}>
          <table class="payments stack-table">
            <PaymentsHead />
            <tbody>
              {page.rows.map((row) => (
                <PaymentRowView key={`${row.provider}|${row.provider_payment_id}`} row={row} domain={domain} />
              ))}
            </tbody>
          </table>
          {page.rows.length === 0 ? (
            <p class="empty-panel">No payments in this range{filter === 'all' ? '' : ' with this filter'}.</p>
          ) : null}
          <footer class="pager">
            <span class="muted" data-page-range>
              {page.total === 0
                ? ''
                : `${formatCount(page.offset + 1)}–${formatCount(page.offset + page.rows.length)} of ${formatCount(page.total)}`}
            </span>
            <span class="pager-buttons">
              <ExportButton
                domain={domain}
                range={{ ...range, filters: filters.json }}
                filter={filter}
                total={page.total}
              />
              {page.offset > 0 ? (
                <a class="btn btn-small" href={href(filter, Math.max(0, page.offset - PAGE_SIZE))} rel="prev">
                  ← Newer
                </a>
              ) : null}
              {page.offset + page.rows.length < page.total ? (
                <a class="btn btn-small" href={href(filter, page.offset + PAGE_SIZE)} rel="next">
                  Older →
                </a>
              ) : null}
            </span>
          </footer>
        </div>
      ) : null}
    </div>
  );
}
