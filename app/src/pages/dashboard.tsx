import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, type ApiError, type Interval, type Overview, type RangeQuery, type Realtime } from '../api.js';
import { BreakdownPanel, type PanelTab } from '../components/breakdown-panel.js';
import { TimeChart } from '../components/chart.js';
import { SiteHeader } from '../components/layout.js';
import { RangePicker } from '../components/range-picker.js';
import { Card, CopyButton, ErrorBox, Loading } from '../components/ui.js';
import { formatCount, formatDuration } from '../format.js';
import { GoalsPanel } from '../components/goals-panel.js';
import { PropertiesPanel } from '../components/properties-panel.js';
import { OverviewCards } from '../components/overview-cards.js';
import { REALTIME_REFRESH_MS, RealtimeIndicator, RealtimeView } from '../components/realtime.js';
import { snippet } from '../snippet.js';
import { useVisiblePoll } from '../use-poll.js';
import { daysBetween, formatDay, intervalsFor, rangeSearch } from '../range.js';
import { useData } from '../use-data.js';
import { useShared } from '../shared.js';
import { takeEarly } from '../early.js';
import { firstRequests } from '../dashboard-requests.js';
import { FilterBar } from '../components/filter-bar.js';
import { isFiltersError, useFilters, type PageFilters } from '../use-filters.js';
import { filterParams } from '../filters.js';

/**
 * The dashboard's panels: every breakdown dimension of `docs/api.md`
 * "Breakdowns", grouped as Plausible groups them: the five UTM parameters
 * under one Campaigns tab with a menu, exit pages beside entry pages.
 */
export const PANELS: ReadonlyArray<{ title: string; tabs: readonly PanelTab[] }> = [
  {
    title: 'Sources',
    tabs: [
      'channel',
      'referrer',
      {
        id: 'utm',
        name: 'Campaigns',
        label: 'UTM parameter',
        choices: [
          { dimension: 'campaign', name: 'Campaign (utm_campaign)' },
          { dimension: 'utm_source', name: 'Source (utm_source)' },
          { dimension: 'utm_medium', name: 'Medium (utm_medium)' },
          { dimension: 'utm_content', name: 'Content (utm_content)' },
          { dimension: 'keyword', name: 'Term (utm_term)' },
        ],
      },
    ],
  },
  { title: 'Pages', tabs: ['page', 'landing_page', 'exit_page'] },
  { title: 'Locations', tabs: ['country', 'language'] },
  { title: 'Devices', tabs: ['device', 'browser', 'os'] },
];

/** The chart's interval switch: the intervals the shown range allows, each a link that keeps the range. */
function IntervalSwitch(props: {
  range: RangeQuery;
  days: number;
  current: Interval;
  filters: PageFilters;
}): JSX.Element | null {
  const offered = intervalsFor(props.days);
  if (offered.length < 2) return null;
  return (
    <nav class="segmented" aria-label="Chart interval" data-interval-switch>
      {offered.map((interval) => (
        <a
          key={interval}
          class={interval === props.current ? 'active' : ''}
          aria-current={interval === props.current ? 'true' : undefined}
          href={rangeSearch(props.range, { interval, f: filterParams(props.filters.chips) })}
          data-interval={interval}
        >
          {INTERVAL_LABELS[interval]}
        </a>
      ))}
    </nav>
  );
}

const INTERVAL_LABELS: Record<Interval, string> = { hour: 'Hours', day: 'Days', month: 'Months' };

/** How often the dashboard of Today asks the overview, the chart and the panels again while the tab is visible, ms (docs/cost.md "A dashboard left open"). */
export const TODAY_REFRESH_MS = 10_000;
/**
 * Today's refreshes per refresh of the Properties panel (90: every 15 minutes): it reads the visit table,
 * which changes at each operations run (every 15 minutes in AWS), so asking every 10 s would pay for two
 * visit-table reads that cannot have changed (docs/cost.md "A dashboard left open").
 */
export const PROPERTIES_REFRESH_TICKS = 90;
/** How often a site with no event yet checks whether one arrived, ms. */
export const FIRST_EVENT_CHECK_MS = 5_000;

/** A new site's dashboard: the snippet to install and a live check that reloads once the first page view is in. */
function WaitingForFirstEvent(props: { domain: string; realtime: Realtime | undefined }): JSX.Element {
  return (
    <Card title="Waiting for the first page view" class="waiting" id="waiting">
      <p>
        No event has arrived for <strong>{props.domain}</strong> yet. Add this line to the <code>&lt;head&gt;</code> of
        every page of the site:
      </p>
      <p class="snippet">
        <code class="secret" data-snippet>
          {snippet(props.domain)}
        </code>{' '}
        <CopyButton text={snippet(props.domain)} />
      </p>
      <p class="muted small" role="status" data-live-check>
        <span class="realtime-dot live" aria-hidden="true" /> Checking every {FIRST_EVENT_CHECK_MS / 1000} seconds: this
        page fills in as soon as a page view arrives (the tracker is silent on localhost).
        {props.realtime ? ` Current visitors: ${formatCount(props.realtime.visitors)}.` : ''}
      </p>
    </Card>
  );
}

/** One message for the whole page when the site or the range cannot be shown, instead of one per panel. */
function PageError(props: { domain: string; error: ApiError; retry(): void; filters: PageFilters }): JSX.Element {
  const shared = useShared();
  if (props.error.status === 404 && shared)
    return (
      <div class="error-box" role="alert" data-page-error="404">
        <p>This shared link does not open {props.domain}.</p>
      </div>
    );
  if (props.error.status === 404)
    return (
      <div class="error-box" role="alert" data-page-error="404">
        <p>
          There is no site <strong>{props.domain}</strong> in this account. <a href="/">See your sites</a>.
        </p>
      </div>
    );
  if (isFiltersError(props.error))
    return (
      <div class="error-box" role="alert" data-page-error="400">
        <p>The filters in this address cannot be shown ({props.error.message}).</p>
        <p>
          <a href={props.filters.href([])}>Show the dashboard without filters</a>
        </p>
      </div>
    );
  if (props.error.status === 400)
    return (
      <div class="error-box" role="alert" data-page-error="400">
        <p>The range in this address cannot be shown ({props.error.message}).</p>
        <p>
          <a href="?range=30d">Show the last 30 days</a>
        </p>
      </div>
    );
  return <ErrorBox error={props.error} retry={props.retry} />;
}

/**
 * `/sites/<domain>?range=…`: totals, the chart, and every breakdown panel;
 * the realtime indicator and view (asked every `REALTIME_REFRESH_MS` while
 * the tab is visible), Today's totals and chart asked again every
 * `TODAY_REFRESH_MS` with every panel, the chart's interval switch
 * (`?interval=`), a new site's snippet until its first event, and one
 * message when the site or the range does not exist.
 */
export function Dashboard(): JSX.Element {
  const { params } = useRoute();
  const { query } = useLocation();
  const domain = params.domain ?? '';
  const filters = useFilters();
  const first = firstRequests(domain, query, filters.json);
  const { range } = first;
  const overview = useData(() => takeEarly(first.overview.key, first.overview.load), first.overview.key);
  const series = useData(() => takeEarly(first.series.key, first.series.load), first.series.key);
  // Once the first answers are in, a later range's reload of them does not hold the indicator back again.
  const firstDone = useRef(false);
  // The realtime indicator and the first-event check wait for the chart and the totals, as the panels do, so
  // that locally, where one process answers every request, they are not answered before them.
  if (!overview.loading && !series.loading) firstDone.current = true;
  const realtime = useData(() => api.realtime(domain), domain, firstDone.current);
  const shared = useShared();
  // A shared view reads reports only: no account settings (the first-event check is the owner's).
  const sites = useData(
    () => (shared ? Promise.resolve({ sites: [] }) : api.appSites()),
    'app-sites',
    firstDone.current,
  );
  const [realtimeOpen, setRealtimeOpen] = useState(false);
  const live = 'range' in range && range.range === 'today';
  const site = sites.data?.sites.find((x) => x.domain === domain);
  const waiting = site !== undefined && site.last_event_ts === null && (realtime.data?.visitors ?? 0) === 0;
  useVisiblePoll(realtime.reload, overview.error ? null : REALTIME_REFRESH_MS);
  // Each Today refresh also asks the panels again (their data key carries the tick).
  const [tick, setTick] = useState(0);
  const refreshToday = useCallback(() => {
    overview.reload();
    series.reload();
    setTick((t) => t + 1);
  }, [overview.reload, series.reload]);
  useVisiblePoll(refreshToday, live && !overview.error ? TODAY_REFRESH_MS : null);
  useVisiblePoll(sites.reload, waiting ? FIRST_EVENT_CHECK_MS : null);
  // The first event arrived while the page was open: ask for every number again.
  const wasWaiting = useRef(false);
  useEffect(() => {
    if (waiting) wasWaiting.current = true;
    else if (wasWaiting.current && site) {
      wasWaiting.current = false;
      refreshToday();
    }
  }, [waiting, site, refreshToday]);
  const f = filterParams(filters.chips);
  const search = rangeSearch(range, { f });
  const shown = overview.data?.range;
  const pageError = overview.error && [400, 404].includes(overview.error.status) ? overview.error : null;
  return (
    <div class="page">
      <SiteHeader domain={domain} search={search} current="dashboard">
        <div class="header-tools">
          <RealtimeIndicator
            data={realtime.data}
            open={realtimeOpen}
            toggle={() => setRealtimeOpen(!realtimeOpen)}
            filtered={filters.chips.length > 0}
          />
          <RangePicker range={range} extra={{ f }} />
        </div>
      </SiteHeader>
      {pageError ? (
        <PageError domain={domain} error={pageError} retry={overview.reload} filters={filters} />
      ) : (
        <>
          {realtimeOpen && realtime.data ? (
            <RealtimeView data={realtime.data} filtered={filters.chips.length > 0} />
          ) : null}
          {shown ? (
            <p class="range-line muted">
              {formatDay(shown.from)} – {formatDay(shown.to)} · {shown.timezone} · compared with{' '}
              {formatDay(overview.data!.previous_range.from)} – {formatDay(overview.data!.previous_range.to)}
              {live ? ' · updates every 10 seconds' : ''}
            </p>
          ) : null}
          <FilterBar filters={filters} domain={domain} range={range} overview={overview.data} />
          {overview.data?.imported ? <ImportedNotice imported={overview.data.imported} /> : null}
          {waiting ? <WaitingForFirstEvent domain={domain} realtime={realtime.data} /> : null}
          {overview.error ? <ErrorBox error={overview.error} retry={overview.reload} /> : null}
          {overview.data ? (
            <OverviewCards
              overview={overview.data}
              paymentsHref={shared ? undefined : `/sites/${encodeURIComponent(domain)}/payments${search}`}
            />
          ) : overview.loading ? (
            <Loading label="Loading totals…" />
          ) : null}
          <Card
            title={series.data ? `Visitors and revenue per ${series.data.interval}` : 'Visitors and revenue'}
            class="chart-card"
            actions={
              <>
                {series.loading && series.data && !live ? <span class="muted small">Updating…</span> : null}
                {shown && series.data ? (
                  <IntervalSwitch
                    range={range}
                    days={daysBetween(shown.from, shown.to)}
                    current={series.data.interval}
                    filters={filters}
                  />
                ) : null}
              </>
            }
          >
            {series.error ? <ErrorBox error={series.error} retry={series.reload} /> : null}
            {/* The plot is made while the series is on its way, and drawn as soon as it arrives. */}
            {series.error && !series.data ? null : (
              <TimeChart
                points={series.data?.points}
                interval={series.data?.interval ?? first.interval ?? 'day'}
                timezone={series.data?.range.timezone}
              />
            )}
          </Card>
          {/* The panels wait for the overview, so a missing site or a bad range is said once, not once per panel,
              and for the chart's series, so that its request is not queued behind theirs on a busy server. */}
          {overview.data && (series.data || series.error) ? (
            <div class="panels">
              {PANELS.map((p) => (
                <BreakdownPanel
                  key={p.title}
                  title={p.title}
                  tabs={p.tabs}
                  domain={domain}
                  range={range}
                  filters={filters}
                  refresh={tick}
                />
              ))}
              <GoalsPanel domain={domain} range={range} filters={filters} refresh={tick} />
              <PropertiesPanel
                domain={domain}
                range={range}
                filters={filters}
                refresh={Math.floor(tick / PROPERTIES_REFRESH_TICKS)}
              />
            </div>
          ) : null}
          <p class="muted small">
            Numbers are the report API's (<code>/api/v1</code>) for the same range. Visitors are distinct visitors with
            an event in the range; visits count visits that started in it, and the panels count visits; a visit lasts
            until {formatDuration(1800)} without an event. Hover, focus or tap a figure above to see how it is computed.
          </p>
        </>
      )}
    </div>
  );
}

/**
 * Which days of the range come from an imported Plausible export (`docs/ingestion.md`, "Importing a
 * Plausible export"): their numbers are daily aggregates, not comparable with tracked days everywhere.
 */
function ImportedNotice({ imported }: { imported: NonNullable<Overview['imported']> }) {
  return (
    <div class="notice imported-notice" role="note">
      <p>
        {formatDay(imported.from)} – {formatDay(imported.to)}: imported from Plausible: no revenue credit, no visitor
        timelines. Their visitors are each day&apos;s visitors added up, and filtered reports leave these days out.
      </p>
    </div>
  );
}
