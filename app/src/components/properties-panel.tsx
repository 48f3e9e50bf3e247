import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, csvHref, type ReportScope } from '../api.js';
import { formatCount } from '../format.js';
import { useData } from '../use-data.js';
import { propDimension } from '../filters.js';
import { FilterLink } from './filter-link.js';
import type { PageFilters } from '../use-filters.js';
import { DEFAULT_SORT, isPinned, orderRows, type SortColumn } from './breakdown-rows.js';
import { BreakdownTable } from './breakdown-table.js';
import { MAX_ROWS, PanelFoot, UnattributedLabel, useRowLimit, type RowLabelProps } from './breakdown-panel.js';
import { ErrorBox } from './ui.js';
import { FilteredReportsHint } from './filter-bar.js';
import { useSeen } from '../use-seen.js';

/** Keys the picker offers at most: the properties report's first rows (most visitors first). */
export const PICKED_KEYS = 100;

/**
 * A property value's label: a link that filters the dashboard by it (`is` the value of `event:props:<key>`;
 * the no-value row, visits that never had the key, by the empty string, as `docs/api.md` "Filters" reads a
 * missing value), or the Unattributed row's.
 */
function ValueLabel(props: RowLabelProps & { propKey: string }): JSX.Element {
  const { row } = props;
  if (row.unattributed) return <UnattributedLabel domain={props.domain} range={props.range} />;
  const text = row.key === null ? `(no ${props.propKey})` : row.label;
  return (
    <FilterLink
      filters={props.filters}
      chip={{ op: 'is', dimension: propDimension(props.propKey), values: [row.key ?? ''] }}
      title={`Filter the dashboard: property ${props.propKey} is ${row.key ?? '(none)'}`}
      none={row.key === null}
    >
      {text}
    </FilterLink>
  );
}

/**
 * The Properties panel (`docs/app.md` "Properties"), Plausible's: a picker of the custom property keys of
 * the range's visits under the dashboard's filters (`properties`, most visitors first), and the picked key's
 * values (`breakdown/prop:<key>`) with visits, payments, revenue and revenue per visit, sortable as every
 * panel, each value a link that adds its filter; "show more" and a CSV as the breakdown panels. The first
 * key is shown until another is picked; a picked key the range no longer has gives way to the first.
 * Nothing is asked until the panel comes near the window (`useSeen`): its reports read the visit table, which a
 * dashboard load that never shows the panel need not pay for (`docs/app.md` "Properties"). Where the deployment
 * has no visit table to read (`filters.enabled` false), it says so instead and asks nothing.
 */
export function PropertiesPanel(props: {
  domain: string;
  range: ReportScope;
  filters: PageFilters;
  /** Changes when the page asks every panel again (Today's refresh). */
  refresh?: number;
}): JSX.Element {
  const rangeKey = JSON.stringify(props.range);
  const { ref, seen } = useSeen<HTMLElement>();
  const asking = seen && props.filters.enabled;
  const keys = useData(
    () => api.properties(props.domain, props.range, PICKED_KEYS),
    `${props.domain}|${rangeKey}|${props.refresh ?? 0}`,
    asking,
  );
  const [picked, setPicked] = useState<string | null>(null);
  const offered = keys.data?.rows ?? [];
  const key = offered.find((k) => k.key === picked)?.key ?? offered[0]?.key ?? null;
  const [sort, setSort] = useState<SortColumn>(DEFAULT_SORT);
  const [limit, setLimit] = useRowLimit(`${key}|${rangeKey}`);
  const asked = sort === DEFAULT_SORT ? limit : MAX_ROWS;
  const dimension = key === null ? null : `prop:${key}`;
  const values = useData(
    () => api.breakdown(props.domain, dimension!, props.range, asked),
    `${props.domain}|${dimension}|${rangeKey}|${asked}|${props.refresh ?? 0}`,
    asking && dimension !== null,
  );
  const answered = dimension !== null && values.data?.dimension === dimension;
  const all = answered ? values.data!.rows : [];
  const ordered = orderRows(all, sort);
  const rows = [...ordered.filter((r) => !isPinned(r)).slice(0, limit), ...ordered.filter(isPinned)];
  const error = keys.error ?? (dimension === null ? null : values.error);
  // Busy only while a request is out: a panel not yet asked holds no page's "settled" back.
  const loading = asking && (keys.loading || (dimension !== null && values.loading));
  if (!props.filters.enabled)
    return (
      <section class="card panel" data-panel="properties">
        <header class="card-head">
          <h2>Properties</h2>
        </header>
        <div class="panel-body">
          <p class="empty-panel" data-properties-unanswered>
            Custom properties are read from the visit table of filtered reports, which this deployment does not keep.
            <FilteredReportsHint />
          </p>
        </div>
      </section>
    );
  return (
    <section class="card panel" data-panel="properties" aria-busy={loading} ref={ref}>
      <header class="card-head">
        <h2>Properties</h2>
      </header>
      <div class="panel-body">
        {key !== null ? (
          <label class="tab-menu">
            Property{' '}
            <select
              value={key}
              data-prop-picker
              onChange={(e) => setPicked((e.currentTarget as HTMLSelectElement).value)}
            >
              {offered.map((k) => (
                <option key={k.key} value={k.key}>
                  {k.key} ({formatCount(k.visitors)} {k.visitors === 1 ? 'visitor' : 'visitors'})
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {error ? <ErrorBox error={error} retry={keys.error ? keys.reload : values.reload} /> : null}
        {key !== null ? (
          <BreakdownTable
            rows={rows}
            all={all}
            sort={sort}
            setSort={setSort}
            heading={key}
            dimension={dimension!}
            label={(row) => (
              <ValueLabel row={row} propKey={key} domain={props.domain} range={props.range} filters={props.filters} />
            )}
          />
        ) : null}
        {!seen ? <p class="empty-panel muted">Properties load as the panel comes into view.</p> : null}
        {seen && !keys.loading && !keys.error && key === null ? (
          <p class="empty-panel" data-no-properties>
            {props.filters.chips.length
              ? 'No visit that matches the filters had a custom property in this range.'
              : 'No custom property in this range yet (the panel reads the visit table, written at each operations run). Send them with page views and goals: '}
            {props.filters.chips.length ? null : <code>{"footfall('Signup', {props: {plan: 'pro'}})"}</code>}
          </p>
        ) : null}
        {key !== null ? (
          <PanelFoot
            shown={rows.length}
            total={answered ? values.data!.total : 0}
            limit={limit}
            setLimit={setLimit}
            loading={loading}
            csv={csvHref.breakdown(props.domain, dimension!, props.range, MAX_ROWS)}
            csvName={dimension!}
          />
        ) : null}
      </div>
    </section>
  );
}
