import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, type Retention, type RetentionGroup } from '../api.js';
import { SiteHeader } from '../components/layout.js';
import { RangePicker } from '../components/range-picker.js';
import { ErrorBox, Loading, Tabs } from '../components/ui.js';
import { formatCount, formatPercent, formatUsd, formatUsdOrDash } from '../format.js';
import { rangeFromQuery, rangeSearch } from '../range.js';
import { useData } from '../use-data.js';
import { FilterBar } from '../components/filter-bar.js';
import { filterParams } from '../filters.js';
import { useFilters } from '../use-filters.js';

const GROUPS = [
  { key: 'channels', label: 'Channels' },
  { key: 'referrers', label: 'Referrers' },
  { key: 'campaigns', label: 'Campaigns' },
] as const;

/** The retention table's columns (group fields and formulas in `docs/retention.md` "Formulas"). */
export const RETENTION_COLUMNS: ReadonlyArray<{
  key: keyof RetentionGroup;
  label: string;
  title: string;
  format: (v: number | null) => string;
}> = [
  {
    key: 'customers',
    label: 'Customers',
    title: 'Customers whose first payment is in the range',
    format: (v) => formatCount(v ?? 0),
  },
  {
    key: 'still_paying',
    label: 'Still paying',
    title: 'By the provider’s subscription status, or payment recency without one',
    format: (v) => formatCount(v ?? 0),
  },
  {
    key: 'net_ltv_usd',
    label: 'Net LTV',
    title: 'Everything these customers paid, net of refunds',
    format: (v) => formatUsd(v ?? 0),
  },
  { key: 'avg_ltv_usd', label: 'Avg LTV', title: 'Net LTV per customer', format: formatUsdOrDash },
  { key: 'refund_rate', label: 'Refunds', title: 'Share of first-payment revenue refunded', format: formatPercent },
  {
    key: 'churn_30d',
    label: 'Churn 30d',
    title: 'Of customers who first paid 30 to 60 days ago, the share no longer paying',
    format: formatPercent,
  },
  { key: 'share_customers', label: 'Share', title: 'Share of all customers', format: formatPercent },
];

function GroupRow(props: { group: RetentionGroup; total?: boolean }): JSX.Element {
  const g = props.group;
  return (
    <tr
      class={props.total ? 'row-total' : g.unattributed ? 'row-unattributed' : ''}
      data-key={props.total ? '__total' : g.unattributed ? '__unattributed' : (g.key ?? '__none')}
    >
      <th scope="row" class={g.unattributed ? 'unattributed' : ''}>
        {g.label}
      </th>
      {RETENTION_COLUMNS.map((c) => (
        <td key={c.key} class="num" data-col={c.key}>
          {c.format(g[c.key] as number | null)}
        </td>
      ))}
    </tr>
  );
}

type GroupKey = (typeof GROUPS)[number]['key'];

function RetentionTable(props: { data: Retention }): JSX.Element {
  const [group, setGroup] = useState<GroupKey>('channels');
  const rows = props.data[group];
  return (
    <section class="card table-card">
      <header class="card-head">
        <h2>By first touch</h2>
        <Tabs<GroupKey>
          label="Group customers by"
          items={GROUPS.map((g) => g.key)}
          selected={group}
          onSelect={setGroup}
          names={Object.fromEntries(GROUPS.map((g) => [g.key, g.label])) as Record<GroupKey, string>}
          panelId="retention-groups"
          dataAttr="group"
        />
      </header>
      <p class="scroll-hint muted small" aria-hidden="true">
        {RETENTION_COLUMNS.length + 1} columns: swipe the table sideways for the rest →
      </p>
      <div class="scroll-x" id="retention-groups" role="tabpanel" aria-labelledby={`tab-${group}`} tabIndex={0}>
        <table class="retention" data-group={group}>
          <thead>
            <tr>
              <th scope="col">{GROUPS.find((g) => g.key === group)?.label.replace(/s$/, '')}</th>
              {RETENTION_COLUMNS.map((c) => (
                <th key={c.key} scope="col" class="num" title={c.title}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            <GroupRow group={props.data.total} total />
            {rows.map((g) => (
              <GroupRow key={`${g.key}|${g.unattributed}`} group={g} />
            ))}
          </tbody>
        </table>
      </div>
      {rows.length === 0 ? <p class="empty-panel">No customers with a first payment in this range.</p> : null}
    </section>
  );
}

/**
 * `/sites/<domain>/retention?range=…&f=…`: LTV, churn and refunds by the
 * channel, referrer and campaign that brought each customer; the dashboard's
 * filters (`f`) keep the customers whose first payment is credited to a
 * matching visit.
 */
export function RetentionPage(): JSX.Element {
  const { params } = useRoute();
  const { query } = useLocation();
  const domain = params.domain ?? '';
  const filters = useFilters();
  const range = rangeFromQuery(query);
  const data = useData(
    () => api.retention(domain, { ...range, filters: filters.json }),
    `${domain}|${JSON.stringify(range)}|${filters.json ?? ''}`,
  );
  const r = data.data;
  const f = filterParams(filters.chips);
  return (
    <div class="page">
      <SiteHeader domain={domain} search={rangeSearch(range, { f })} current="retention">
        <RangePicker range={range} extra={{ f }} />
      </SiteHeader>
      <FilterBar filters={filters} domain={domain} range={range}>
        <p>
          Only the customers whose first payment is credited to a visit that matches the filters; a first payment
          credited to no visit (Unattributed) matches none.
        </p>
      </FilterBar>
      {data.error ? <ErrorBox error={data.error} retry={data.reload} /> : null}
      {!r && data.loading ? <Loading /> : null}
      {r ? (
        <>
          <p class="headline" data-headline>
            {r.headline ?? 'Not enough payments in this range for a summary yet.'}
          </p>
          {r.day_one ? (
            <div class="notice" role="note" data-day-one>
              <strong>Early days.</strong> Footfall holds under 60 days of payments for this site (
              {formatCount(r.days_of_data)} days of data), so lifetime value and churn describe only the first weeks of
              each customer. Read them as a start, not a verdict; they settle once two months of payments are in.
            </div>
          ) : null}
          <RetentionTable data={r} />
          <p class="muted small">
            Customers are those whose first payment falls in the range, grouped by the channel, referrer or campaign
            credited for that first payment. Subscription status comes from{' '}
            {r.status_sources.length === 0
              ? 'no provider yet'
              : r.status_sources
                  .map((s) => `${s.provider} (${s.subscription_status ? 'subscription status' : 'payment recency'})`)
                  .join(', ')}
            .
          </p>
        </>
      ) : null}
    </div>
  );
}
