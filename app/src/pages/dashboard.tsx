import type { JSX } from 'preact';
import { useLocation, useRoute } from 'preact-iso';
import { api, type Overview, type RangeQuery, type Timeseries } from '../api.js';
import { BreakdownPanel, type Dimension } from '../components/breakdown-panel.js';
import { TimeChart } from '../components/chart.js';
import { SiteHeader } from '../components/layout.js';
import { RangePicker } from '../components/range-picker.js';
import { Card, Change, ErrorBox, Loading } from '../components/ui.js';
import { formatCount, formatDuration, formatPercent, formatRatio, formatUsd, formatUsdOrDash } from '../format.js';
import { GoalsPanel } from '../components/goals-panel.js';
import { RealtimeIndicator } from '../components/realtime.js';
import { formatDay, intervalFor, rangeFromQuery, rangeSearch } from '../range.js';
import { useData } from '../use-data.js';

/** The dashboard's panels: every breakdown dimension of spec §4.2, grouped as Plausible groups them. */
export const PANELS: ReadonlyArray<{ title: string; dimensions: readonly Dimension[] }> = [
  { title: 'Sources', dimensions: ['channel', 'referrer', 'campaign', 'keyword'] },
  { title: 'Pages', dimensions: ['page', 'landing_page'] },
  { title: 'Locations', dimensions: ['country', 'language'] },
  { title: 'Devices', dimensions: ['device', 'browser', 'os'] },
];

/** The overview's figures in the order the cards show them; `change` names the key of `change` (spec §2.4). */
const METRICS: ReadonlyArray<{
  key: keyof Overview['current'];
  label: string;
  format: (n: number | null) => string;
  change?: keyof Overview['change'];
  detail?: boolean;
  lowerIsBetter?: boolean;
}> = [
  { key: 'visitors', label: 'Visitors', format: (n) => formatCount(n ?? 0), change: 'visitors' },
  { key: 'sessions', label: 'Visits', format: (n) => formatCount(n ?? 0), change: 'sessions' },
  { key: 'pageviews', label: 'Pageviews', format: (n) => formatCount(n ?? 0), change: 'pageviews' },
  { key: 'views_per_visit', label: 'Views / visit', format: formatRatio, change: 'views_per_visit' },
  { key: 'bounce_rate', label: 'Bounce rate', format: formatPercent, change: 'bounce_rate', lowerIsBetter: true },
  { key: 'visit_duration', label: 'Visit duration', format: formatDuration, change: 'visit_duration' },
  { key: 'revenue_usd', label: 'Revenue', format: (n) => formatUsd(n ?? 0), change: 'revenue_usd', detail: true },
  { key: 'payments', label: 'Payments', format: (n) => formatCount(n ?? 0), change: 'payments', detail: true },
  { key: 'conversion', label: 'Conversion', format: formatPercent, change: 'conversion' },
  { key: 'revenue_per_visitor', label: 'Revenue / visitor', format: formatUsdOrDash, change: 'revenue_per_visitor' },
];

/** The time series for a range, by month when by day would be too dense (the API chooses for `all`). */
function loadSeries(domain: string, range: RangeQuery): Promise<Timeseries> {
  return api.timeseries(domain, range, intervalFor(range));
}

function OverviewCards(props: { overview: Overview; domain: string; search: string }): JSX.Element {
  const { current, previous, change } = props.overview;
  return (
    <div class="metrics">
      {METRICS.map((m) => {
        const body = (
          <>
            <span class="metric-label">{m.label}</span>
            <span class="metric-value" data-metric={m.key}>
              {m.format(current[m.key])}
            </span>
            {m.change ? (
              <Change value={change[m.change]} lowerIsBetter={m.lowerIsBetter} />
            ) : (
              <span class="change change-none" title={`Previous period: ${m.format(previous[m.key])}`}>
                {m.format(previous[m.key])} before
              </span>
            )}
          </>
        );
        return m.detail ? (
          <a
            key={m.key}
            class="metric metric-link"
            href={`/sites/${encodeURIComponent(props.domain)}/payments${props.search}`}
            title="Open the payments"
          >
            {body}
          </a>
        ) : (
          <div key={m.key} class="metric">
            {body}
          </div>
        );
      })}
    </div>
  );
}

/** `/sites/<domain>?range=…`: totals, the chart, and every breakdown panel. */
export function Dashboard(): JSX.Element {
  const { params } = useRoute();
  const { query } = useLocation();
  const domain = params.domain ?? '';
  const range = rangeFromQuery(query);
  const key = `${domain}|${JSON.stringify(range)}`;
  const overview = useData(() => api.overview(domain, range), key);
  const series = useData(() => loadSeries(domain, range), key);
  const search = rangeSearch(range);
  const shown = overview.data?.range;
  return (
    <div class="page">
      <SiteHeader domain={domain} search={search} current="dashboard">
        <div class="header-tools">
          <RealtimeIndicator domain={domain} />
          <RangePicker range={range} />
        </div>
      </SiteHeader>
      {shown ? (
        <p class="range-line muted">
          {formatDay(shown.from)} – {formatDay(shown.to)} · {shown.timezone} · compared with{' '}
          {formatDay(overview.data!.previous_range.from)} – {formatDay(overview.data!.previous_range.to)}
        </p>
      ) : null}
      {overview.error ? <ErrorBox error={overview.error} retry={overview.reload} /> : null}
      {overview.data ? (
        <OverviewCards overview={overview.data} domain={domain} search={search} />
      ) : overview.loading ? (
        <Loading label="Loading totals…" />
      ) : null}
      <Card
        title={series.data ? `Visitors and revenue per ${series.data.interval}` : 'Visitors and revenue'}
        class="chart-card"
        actions={series.loading && series.data ? <span class="muted small">Updating…</span> : null}
      >
        {series.error ? <ErrorBox error={series.error} retry={series.reload} /> : null}
        {series.data ? (
          <TimeChart points={series.data.points} interval={series.data.interval} />
        ) : series.loading ? (
          <div class="chart chart-placeholder" />
        ) : null}
      </Card>
      <div class="panels">
        {PANELS.map((p) => (
          <BreakdownPanel key={p.title} title={p.title} dimensions={p.dimensions} domain={domain} range={range} />
        ))}
        <GoalsPanel domain={domain} range={range} />
      </div>
      <p class="muted small">
        Numbers are the report API's (<code>/api/v1</code>) for the same range. Visitors are distinct visitors with an
        event in the range; visits count visits that started in it; a visit lasts until {formatDuration(1800)} without
        an event.
      </p>
    </div>
  );
}
