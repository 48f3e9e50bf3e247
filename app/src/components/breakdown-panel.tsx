import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, csvHref, type BreakdownRow, type RangeQuery } from '../api.js';
import { countryName, formatCount, formatUsd, formatUsdOrDash } from '../format.js';
import { rangeSearch } from '../range.js';
import { useData } from '../use-data.js';
import { ErrorBox } from './ui.js';

/** The breakdown dimensions (spec §4.2) with the names the panels show. */
export const DIMENSION_LABELS = {
  channel: 'Channels',
  referrer: 'Referrers',
  campaign: 'Campaigns',
  keyword: 'Keywords',
  page: 'Pages',
  landing_page: 'Landing pages',
  country: 'Countries',
  language: 'Languages',
  device: 'Devices',
  browser: 'Browsers',
  os: 'OS',
} as const;

export type Dimension = keyof typeof DIMENSION_LABELS;

/** Rows a panel shows first, and how many more each "show more" asks for (`limit`, up to the API's 1000). */
export const FIRST_ROWS = 10;
export const MORE_ROWS = 50;
export const MAX_ROWS = 1000;

/** The column heading of a dimension's labels. */
const KEY_HEADING: Record<Dimension, string> = {
  channel: 'Channel',
  referrer: 'Referrer',
  campaign: 'Campaign',
  keyword: 'Keyword',
  page: 'Page',
  landing_page: 'Landing page',
  country: 'Country',
  language: 'Language',
  device: 'Device',
  browser: 'Browser',
  os: 'OS',
};

/**
 * A panel's footer: rows shown of the total, `children` (a credit), the CSV
 * link of the rows on screen, and "Show more" while the API has more rows.
 */
export function PanelFoot(props: {
  shown: number;
  total: number;
  limit: number;
  setLimit(n: number): void;
  loading: boolean;
  csv: string;
  csvName: string;
  children?: ComponentChildren;
}): JSX.Element {
  return (
    <footer class="panel-foot">
      <span class="muted" data-shown={props.shown} data-total={props.total}>
        {props.shown > 0 ? `${formatCount(props.shown)} of ${formatCount(props.total)}` : ''}
      </span>
      {props.children}
      <a class="btn btn-small btn-ghost" data-csv={props.csvName} href={props.csv} download>
        CSV
      </a>
      {props.shown < props.total && props.limit < MAX_ROWS ? (
        <button
          type="button"
          class="btn btn-small"
          onClick={() => props.setLimit(Math.min(MAX_ROWS, props.limit + MORE_ROWS))}
          disabled={props.loading}
        >
          Show more
        </button>
      ) : null}
    </footer>
  );
}

/** A column heading that abbreviates itself at phone width (CSS chooses). */
function Short(props: { long: string; short: string }): JSX.Element {
  return (
    <>
      <span class="long">{props.long}</span>
      <abbr class="short" title={props.long}>
        {props.short}
      </abbr>
    </>
  );
}

function RowLabel(props: { row: BreakdownRow; dimension: Dimension; domain: string; range: RangeQuery }): JSX.Element {
  const { row } = props;
  if (row.unattributed) {
    return (
      <a
        class="label unattributed"
        href={`/sites/${encodeURIComponent(props.domain)}/payments${rangeSearch(props.range, { filter: 'unattributed' })}`}
        title="Payments with no credited visit: open them"
      >
        Unattributed
      </a>
    );
  }
  if (row.key === null) return <span class="label none">{row.label || '(none)'}</span>;
  if (props.dimension === 'country') {
    return (
      <span class="label" title={row.key}>
        {countryName(row.key)} <span class="muted code">{row.key}</span>
      </span>
    );
  }
  return (
    <span class="label" title={row.label}>
      {row.label}
    </span>
  );
}

/**
 * One panel of breakdowns (e.g. Sources: channels, referrers, campaigns,
 * keywords) as tabs over one table: visitors, payments, revenue and revenue
 * per visitor, a bar for each row's share of visitors, the Unattributed row
 * marked as such and linked to its payments, and "show more" that asks the
 * API for a larger `limit`.
 */
export function BreakdownPanel(props: {
  title: string;
  dimensions: readonly Dimension[];
  domain: string;
  range: RangeQuery;
}): JSX.Element {
  const [dimension, setDimension] = useState<Dimension>(props.dimensions[0]!);
  // Each tab and range starts at FIRST_ROWS; "show more" grows only the one on screen.
  const [limits, setLimits] = useState<Record<string, number>>({});
  const rangeKey = JSON.stringify(props.range);
  const limit = limits[`${dimension}|${rangeKey}`] ?? FIRST_ROWS;
  const setLimit = (n: number) => setLimits({ ...limits, [`${dimension}|${rangeKey}`]: n });
  const data = useData(
    () => api.breakdown(props.domain, dimension, props.range, limit),
    `${props.domain}|${dimension}|${rangeKey}|${limit}`,
  );
  const rows = data.data && data.data.dimension === dimension ? data.data.rows : [];
  const max = Math.max(1, ...rows.map((r) => r.visitors));
  const total = data.data?.dimension === dimension ? data.data.total : 0;
  const onKey = (e: KeyboardEvent) => {
    // Arrow keys move between tabs (WAI-ARIA tabs pattern), from the tab that has the focus.
    const at = props.dimensions.indexOf((e.currentTarget as HTMLElement).dataset.dimension as Dimension);
    const next = e.key === 'ArrowRight' ? at + 1 : e.key === 'ArrowLeft' ? at - 1 : null;
    if (next === null) return;
    const d = props.dimensions[(next + props.dimensions.length) % props.dimensions.length]!;
    setDimension(d);
    (e.currentTarget as HTMLElement).parentElement?.querySelector<HTMLElement>(`[data-dimension="${d}"]`)?.focus();
  };
  const panelId = `panel-${props.title.toLowerCase()}`;
  return (
    <section class="card panel" data-panel={props.title.toLowerCase()} aria-busy={data.loading}>
      <header class="card-head">
        <h2>{props.title}</h2>
        <div class="panel-tabs" role="tablist" aria-label={props.title}>
          {props.dimensions.map((d) => (
            <button
              key={d}
              type="button"
              role="tab"
              id={`tab-${d}`}
              aria-selected={d === dimension}
              aria-controls={panelId}
              tabIndex={d === dimension ? 0 : -1}
              data-dimension={d}
              onClick={() => setDimension(d)}
              onKeyDown={onKey}
            >
              {DIMENSION_LABELS[d]}
            </button>
          ))}
        </div>
      </header>
      <div role="tabpanel" id={panelId} aria-labelledby={`tab-${dimension}`} class="panel-body">
        {data.error ? <ErrorBox error={data.error} retry={data.reload} /> : null}
        <table class="breakdown" data-dimension={dimension}>
          <thead>
            <tr>
              <th scope="col">{KEY_HEADING[dimension]}</th>
              <th scope="col" class="num">
                <Short long="Visitors" short="Vis." />
              </th>
              <th scope="col" class="num" title="Payments credited">
                <Short long="Payments" short="Pay." />
              </th>
              <th scope="col" class="num" title="Credited revenue, USD net of refunds">
                <Short long="Revenue" short="Rev." />
              </th>
              <th scope="col" class="num" title="Revenue per visitor">
                <abbr title="Revenue per visitor">RPV</abbr>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr
                key={`${row.key}|${row.unattributed}`}
                class={row.unattributed ? 'row-unattributed' : ''}
                data-key={row.unattributed ? '__unattributed' : (row.key ?? '__none')}
              >
                <th scope="row" class="key">
                  <span
                    class="bar"
                    style={{ width: `${row.unattributed ? 0 : (row.visitors / max) * 100}%` }}
                    aria-hidden="true"
                  />
                  <RowLabel row={row} dimension={dimension} domain={props.domain} range={props.range} />
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
        {!data.loading && rows.length === 0 && !data.error ? <p class="empty-panel">No data in this range.</p> : null}
        <PanelFoot
          shown={rows.length}
          total={total}
          limit={limit}
          setLimit={setLimit}
          loading={data.loading}
          csv={csvHref.breakdown(props.domain, dimension, props.range, limit)}
          csvName={dimension}
        >
          {dimension === 'country' ? (
            // CC BY 4.0 of the default IP-to-country database asks for this link where its results are shown (docs/ingestion.md "Country").
            <a class="muted credit" href="https://db-ip.com/" target="_blank" rel="noopener">
              IP Geolocation by DB-IP
            </a>
          ) : null}
        </PanelFoot>
      </div>
    </section>
  );
}
