import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, csvHref, type BreakdownRow, type ReportScope } from '../api.js';
import { formatCount } from '../format.js';
import { DIMENSION_LABELS, KEY_HEADING, NONE_LABEL, keyName, type Dimension } from './dimension-names.js';
import { rangeSearch } from '../range.js';
import { useData } from '../use-data.js';
import { useShared } from '../shared.js';
import { filterOfBreakdown } from '../filters.js';
import { FilterLink } from './filter-link.js';
import type { PageFilters } from '../use-filters.js';
import { DEFAULT_SORT, isPinned, orderRows, type SortColumn } from './breakdown-rows.js';
import { BreakdownTable } from './breakdown-table.js';
import { ErrorBox, Tabs } from './ui.js';

/**
 * A panel's tab: one dimension, or several under one tab with a menu to
 * choose between them (Plausible's Campaigns tab and its UTM menu). `id`
 * names the tab (`#tab-<id>`, `data-dimension`), `choices` the menu's items.
 */
export interface TabMenu {
  id: string;
  name: string;
  /** What the menu is labelled. */
  label: string;
  choices: ReadonlyArray<{ dimension: Dimension; name: string }>;
}
export type PanelTab = Dimension | TabMenu;

const tabId = (tab: PanelTab): string => (typeof tab === 'string' ? tab : tab.id);
const firstDimension = (tab: PanelTab): Dimension => (typeof tab === 'string' ? tab : tab.choices[0]!.dimension);
const tabOf = (tabs: readonly PanelTab[], d: Dimension): PanelTab | undefined =>
  tabs.find((t) => (typeof t === 'string' ? t === d : t.choices.some((c) => c.dimension === d)));

/** Rows a panel shows first, and how many more each "show more" asks for (`limit`, up to the API's 1000). */
export const FIRST_ROWS = 10;

/**
 * The rows a panel shows of the report on screen, `key` naming it (a tab, goal or property with the range):
 * each starts at FIRST_ROWS, and "show more" grows only the one on screen. Kept in a `Map`, as the keys hold
 * goal and property names.
 */
export function useRowLimit(key: string): [limit: number, setLimit: (n: number) => void] {
  const [limits, setLimits] = useState<ReadonlyMap<string, number>>(() => new Map());
  return [limits.get(key) ?? FIRST_ROWS, (n) => setLimits((before) => new Map(before).set(key, n))];
}
export const MORE_ROWS = 50;
export const MAX_ROWS = 1000;

/**
 * A panel's footer: rows shown of the total, `children` (a credit), the CSV
 * link of every row of the report (`csv`, asked with the API's largest
 * `limit`; `csvNote` says when that is not all), and "Show more" while the
 * API has more rows.
 */
export function PanelFoot(props: {
  shown: number;
  total: number;
  limit: number;
  setLimit(n: number): void;
  loading: boolean;
  csv: string;
  csvName: string;
  csvNote?: string | null;
  children?: ComponentChildren;
}): JSX.Element {
  const shared = useShared();
  return (
    <footer class="panel-foot">
      <span class="muted" data-shown={props.shown} data-total={props.total}>
        {props.shown > 0 ? `${formatCount(props.shown)} of ${formatCount(props.total)}` : ''}
      </span>
      {props.children}
      {/* A download carries no link token: a shared view offers none. */}
      {shared ? null : (
        <a
          class="btn btn-small btn-ghost"
          data-csv={props.csvName}
          href={props.csv}
          download
          title={props.csvNote ?? 'Every row of this report for the range, as CSV'}
        >
          CSV
        </a>
      )}
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

/** What a breakdown row's label is made from: the row, and the page's site, range and filters its link keeps. */
export interface RowLabelProps {
  row: BreakdownRow;
  domain: string;
  range: ReportScope;
  filters: PageFilters;
}

/** The Unattributed row's label: a link to its payments (payments credited to no visit match no filter); a plain label in a shared view, which opens no payments. */
export function UnattributedLabel(props: { domain: string; range: ReportScope }): JSX.Element {
  const shared = useShared();
  if (shared) return <span class="label unattributed">Unattributed</span>;
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

/**
 * A row's label. A value of the dimension (the rows with no value included:
 * a visit without one has the empty string, `docs/api.md` "Filters") is a
 * link that filters the dashboard by it, `is <dimension> <value>`; the
 * Unattributed row links to its payments instead (payments credited to no
 * visit match no filter). Where the deployment does not filter, a value is
 * plain text: no link that could only fail.
 */
function RowLabel(props: RowLabelProps & { dimension: Dimension }): JSX.Element {
  const { row } = props;
  if (row.unattributed) return <UnattributedLabel domain={props.domain} range={props.range} />;
  const named = row.key === null ? null : keyName(props.dimension, row.key);
  const text =
    row.key === null ? (
      (NONE_LABEL[props.dimension] ?? (row.label || '(none)'))
    ) : named !== null && named !== row.key ? (
      <>
        {named} <span class="muted code">{row.key}</span>
      </>
    ) : (
      row.label
    );
  const title = row.key === null ? undefined : named !== null && named !== row.key ? row.key : row.label;
  const by = filterOfBreakdown(props.dimension);
  if (by === null)
    return (
      <span class={row.key === null ? 'label none' : 'label'} title={title}>
        {text}
      </span>
    );
  const shown = typeof text === 'string' ? text : `${named} (${row.key})`;
  return (
    <FilterLink
      filters={props.filters}
      chip={{ op: 'is', dimension: by, values: [row.key ?? ''] }}
      title={`Filter the dashboard: ${KEY_HEADING[props.dimension]} is ${shown}`}
      plainTitle={title}
      none={row.key === null}
    >
      {text}
    </FilterLink>
  );
}

/**
 * One panel of breakdowns (e.g. Sources: channels, referrers, campaigns,
 * keywords) as tabs over one table: visits, payments, revenue and revenue
 * per visit, sortable by each (the bars show each row's share of the sorted
 * column), the rows that are no value of the dimension (no campaign,
 * Unattributed) at the bottom, the Unattributed row linked to its payments,
 * "show more" that asks the API for a larger `limit`, and a CSV of every row;
 * asked again whenever `refresh` changes, keeping the rows on screen meanwhile.
 */
export function BreakdownPanel(props: {
  title: string;
  tabs: readonly PanelTab[];
  domain: string;
  range: ReportScope;
  /** The dashboard's filters: `range` carries them to the API, a row's label adds one. */
  filters: PageFilters;
  /** Changes when the page asks every panel again (Today's refresh). */
  refresh?: number;
}): JSX.Element {
  const [dimension, setDimension] = useState<Dimension>(firstDimension(props.tabs[0]!));
  // The menu tab reopens on the choice last made under it.
  const [chosen, setChosen] = useState<Record<string, Dimension>>({});
  const tab = tabOf(props.tabs, dimension) ?? props.tabs[0]!;
  const menu = typeof tab === 'string' ? null : tab;
  const choose = (d: Dimension) => {
    const t = tabOf(props.tabs, d);
    if (t && typeof t !== 'string') setChosen({ ...chosen, [t.id]: d });
    setDimension(d);
  };
  const selectTab = (id: string) => {
    const t = props.tabs.find((x) => tabId(x) === id)!;
    setDimension(typeof t === 'string' ? t : (chosen[t.id] ?? firstDimension(t)));
  };
  const tabNames = Object.fromEntries(
    props.tabs.map((t) => [tabId(t), typeof t === 'string' ? DIMENSION_LABELS[t] : t.name]),
  );
  const [sort, setSort] = useState<SortColumn>(DEFAULT_SORT);
  const rangeKey = JSON.stringify(props.range);
  const [limit, setLimit] = useRowLimit(`${dimension}|${rangeKey}`);
  // The API orders by revenue; another column's top rows need every row (at most the API's 1000) to choose from.
  const asked = sort === DEFAULT_SORT ? limit : MAX_ROWS;
  const data = useData(
    () => api.breakdown(props.domain, dimension, props.range, asked),
    `${props.domain}|${dimension}|${rangeKey}|${asked}|${props.refresh ?? 0}`,
  );
  const all = data.data && data.data.dimension === dimension ? data.data.rows : [];
  const ordered = orderRows(all, sort);
  const values = ordered.filter((r) => !isPinned(r));
  const rows = [...values.slice(0, limit), ...ordered.filter(isPinned)];
  const total = data.data?.dimension === dimension ? data.data.total : 0;
  const panelId = `panel-${props.title.toLowerCase()}`;
  return (
    <section class="card panel" data-panel={props.title.toLowerCase()} aria-busy={data.loading}>
      <header class="card-head">
        <h2>{props.title}</h2>
        <Tabs<string>
          label={props.title}
          items={props.tabs.map(tabId)}
          selected={tabId(tab)}
          onSelect={selectTab}
          names={tabNames}
          panelId={panelId}
        />
      </header>
      <div role="tabpanel" id={panelId} aria-labelledby={`tab-${tabId(tab)}`} class="panel-body">
        {menu ? (
          <label class="tab-menu">
            {menu.label}{' '}
            <select
              value={dimension}
              data-tab-menu={menu.id}
              onChange={(e) => choose((e.currentTarget as HTMLSelectElement).value as Dimension)}
            >
              {menu.choices.map((c) => (
                <option key={c.dimension} value={c.dimension}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {data.error ? <ErrorBox error={data.error} retry={data.reload} /> : null}
        <BreakdownTable
          rows={rows}
          all={all}
          sort={sort}
          setSort={setSort}
          heading={KEY_HEADING[dimension]}
          dimension={dimension}
          label={(row) => (
            <RowLabel
              row={row}
              dimension={dimension}
              domain={props.domain}
              range={props.range}
              filters={props.filters}
            />
          )}
        />
        {!data.loading && rows.length === 0 && !data.error ? (
          <p class="empty-panel">
            {props.filters.chips.length ? 'No visit matches the filters in this range.' : 'No data in this range.'}
          </p>
        ) : null}
        <PanelFoot
          shown={rows.length}
          total={total}
          limit={limit}
          setLimit={setLimit}
          loading={data.loading}
          csv={csvHref.breakdown(props.domain, dimension, props.range, MAX_ROWS)}
          csvName={dimension}
          csvNote={total > MAX_ROWS ? `The CSV holds the first ${formatCount(MAX_ROWS)} rows, the API's most.` : null}
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
