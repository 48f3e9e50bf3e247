import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api, csvHref, type GoalRow, type ReportScope } from '../api.js';
import { formatCount, formatPercent, formatUsd } from '../format.js';
import { useData } from '../use-data.js';
import { ErrorBox } from './ui.js';
import { MAX_ROWS, PanelFoot, useRowLimit } from './breakdown-panel.js';
import { FilterLink } from './filter-link.js';
import { Short } from './breakdown-table.js';
import type { PageFilters } from '../use-filters.js';

/** The goal whose rows are its link URLs (`docs/tracking.md` "Outbound links"). */
export const OUTBOUND_GOAL = 'Outbound Link: Click';

/**
 * The Goals panel (docs/api.md "Goals"): per goal the visitors who completed
 * it, completions, conversion rate and credited revenue; a goal's name
 * filters the dashboard by it (`is event:goal <name>`, `docs/app.md`
 * "Filters"), the "›" beside it opens its detail (for outbound link clicks,
 * one row per URL, under filters too), "All goals" goes back. A CSV link
 * downloads the rows on screen.
 */
export function GoalsPanel(props: {
  domain: string;
  range: ReportScope;
  filters: PageFilters;
  refresh?: number;
}): JSX.Element {
  const [goal, setGoal] = useState<string | null>(null);
  const rangeKey = JSON.stringify(props.range);
  const [limit, setLimit] = useRowLimit(`${goal ?? ''}|${rangeKey}`);
  const data = useData(
    () => api.goals(props.domain, props.range, goal, limit),
    `${props.domain}|${goal ?? ''}|${rangeKey}|${limit}|${props.refresh ?? 0}`,
  );
  const rows = data.data && data.data.goal === goal ? data.data.rows : [];
  const total = data.data && data.data.goal === goal ? data.data.total : 0;
  const max = Math.max(1, ...rows.map((r) => r.visitors));
  const label = (r: GoalRow) => r.link ?? r.goal;
  return (
    <section class="card panel" data-panel="goals" aria-busy={data.loading}>
      <header class="card-head">
        <h2>{goal === null ? 'Goals' : goal}</h2>
        {goal !== null ? (
          <button type="button" class="btn btn-ghost btn-small" data-action="all-goals" onClick={() => setGoal(null)}>
            All goals
          </button>
        ) : null}
      </header>
      <div class="panel-body">
        {data.error ? <ErrorBox error={data.error} retry={data.reload} /> : null}
        <table class="breakdown" data-goal={goal ?? ''}>
          <thead>
            <tr>
              <th scope="col">{goal === OUTBOUND_GOAL ? 'Link' : 'Goal'}</th>
              <th scope="col" class="num" title="Distinct visitors who completed it">
                <Short long="Visitors" short="Vis." />
              </th>
              <th scope="col" class="num" title="Completions (goal events)">
                <Short long="Events" short="Ev." />
              </th>
              <th scope="col" class="num" title="Visitors who completed it / all visitors of the range">
                <abbr title="Conversion rate">CR</abbr>
              </th>
              <th
                scope="col"
                class="num"
                data-col="revenue_usd"
                title="Revenue of payments credited to visits with this goal, USD net of refunds"
              >
                <Short long="Revenue" short="Rev." />
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={label(row)} data-key={label(row)}>
                <th scope="row" class="key">
                  <span class="bar" style={{ width: `${(row.visitors / max) * 100}%` }} aria-hidden="true" />
                  {goal === null && !row.other ? (
                    <span class="goal-label">
                      <FilterLink
                        filters={props.filters}
                        chip={{ op: 'is', dimension: 'event:goal', values: [row.goal] }}
                        title={`Filter the dashboard: Goal is ${row.goal}`}
                      >
                        {row.goal}
                      </FilterLink>
                      <button
                        type="button"
                        class="link-button detail-button"
                        aria-label={`Open ${row.goal}`}
                        title={`Open ${row.goal}`}
                        data-open-goal={row.goal}
                        onClick={() => setGoal(row.goal)}
                      >
                        ›
                      </button>
                    </span>
                  ) : (
                    <span class={row.other ? 'label none' : 'label'} title={label(row)}>
                      {label(row)}
                    </span>
                  )}
                </th>
                <td class="num" data-col="visitors">
                  {formatCount(row.visitors)}
                </td>
                <td class="num" data-col="completions">
                  {formatCount(row.completions)}
                </td>
                <td class="num" data-col="conversion_rate">
                  {formatPercent(row.conversion_rate)}
                </td>
                <td class="num" data-col="revenue_usd">
                  {formatUsd(row.revenue_usd)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!data.loading && rows.length === 0 && !data.error ? (
          <p class="empty-panel">
            {goal === null
              ? 'No goals in this range. Goals are custom events (plausible-style `n: "goal"`) and outbound link clicks.'
              : 'No completions in this range.'}
          </p>
        ) : null}
        <PanelFoot
          shown={rows.length}
          total={total}
          limit={limit}
          setLimit={setLimit}
          loading={data.loading}
          csv={csvHref.goals(props.domain, props.range, goal, MAX_ROWS)}
          csvName="goals"
          csvNote={total > MAX_ROWS ? `The CSV holds the first ${formatCount(MAX_ROWS)} rows, the API's most.` : null}
        />
      </div>
    </section>
  );
}
