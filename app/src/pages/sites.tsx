import type { JSX } from 'preact';
import { api } from '../api.js';
import { Sparkline } from '../components/chart.js';
import { Change, ErrorBox, Loading } from '../components/ui.js';
import { formatCount, formatUsd } from '../format.js';
import { useData } from '../use-data.js';

const RANGE = { range: '30d' } as const;

function SiteCard(props: { domain: string }): JSX.Element {
  const overview = useData(() => api.overview(props.domain, RANGE), props.domain);
  const series = useData(() => api.timeseries(props.domain, RANGE, 'day'), props.domain);
  const href = `/sites/${encodeURIComponent(props.domain)}?range=30d`;
  const cur = overview.data?.current;
  return (
    <li class="site-card" data-site={props.domain}>
      <a href={href} class="site-link">
        <span class="site-name">{props.domain}</span>
        <span class="site-figures">
          <span class="figure">
            <span class="figure-label">Visitors</span>
            <span class="figure-value" data-metric="visitors">
              {cur ? formatCount(cur.visitors) : '…'}
            </span>
            {overview.data ? <Change value={overview.data.change.visitors} /> : null}
          </span>
          <span class="figure">
            <span class="figure-label">Revenue</span>
            <span class="figure-value" data-metric="revenue_usd">
              {cur ? formatUsd(cur.revenue_usd) : '…'}
            </span>
            {overview.data ? <Change value={overview.data.change.revenue_usd} /> : null}
          </span>
        </span>
        {series.data ? (
          <Sparkline
            values={series.data.points.map((p) => p.visitors)}
            label={`Visitors per day over the last 30 days on ${props.domain}`}
          />
        ) : (
          <span class="sparkline" />
        )}
      </a>
      {overview.error ? <ErrorBox error={overview.error} retry={overview.reload} /> : null}
    </li>
  );
}

/** `/`: every site of the account with the last 30 days' visitors, revenue and trend. */
export function Sites(): JSX.Element {
  const sites = useData(() => api.sites(), 'sites');
  return (
    <div class="page">
      <div class="page-head">
        <h1>Sites</h1>
        <a class="btn" href="/settings/sites">
          Add a site
        </a>
      </div>
      <p class="muted">Last 30 days, compared with the 30 days before.</p>
      {sites.error ? <ErrorBox error={sites.error} retry={sites.reload} /> : null}
      {!sites.data && sites.loading ? <Loading /> : null}
      {sites.data && sites.data.sites.length === 0 ? (
        <div class="empty">
          <p>No sites yet.</p>
          <a class="btn btn-primary" href="/settings/sites">
            Add your first site
          </a>
        </div>
      ) : null}
      <ul class="site-list">
        {sites.data?.sites.map((s) => (
          <SiteCard key={s.domain} domain={s.domain} />
        ))}
      </ul>
    </div>
  );
}
