import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Overview, Totals } from '../api.js';
import { formatCount, formatDuration, formatPercent, formatRatio, formatUsdOrDash } from '../format.js';
import { Change } from './ui.js';

/** A figure an explanation is computed from: its name and its value as shown. */
type Figure = [label: string, value: string];

/** A count that the API never leaves null; a missing one still reads as a dash, never as 0. */
const countOrDash = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : formatCount(n));
const usdOrDash = formatUsdOrDash;

/**
 * The overview's figures in the order the tiles show them (`docs/api.md` "Overview" and
 * docs/api.md "Top stats"): how each is shown, the key of `change`, how it is
 * computed in words, and the figures of the same period it is computed from.
 */
export const METRICS: ReadonlyArray<{
  key: keyof Totals;
  label: string;
  format: (n: number | null) => string;
  lowerIsBetter?: boolean;
  payments?: boolean;
  how: string;
  from: (t: Totals) => Figure[];
}> = [
  {
    key: 'visitors',
    label: 'Visitors',
    format: countOrDash,
    how: 'Distinct visitors with an event in the range (exact up to 1,000 a period, else within 0.81%).',
    from: (t) => [['Visits', countOrDash(t.sessions)]],
  },
  {
    key: 'sessions',
    label: 'Visits',
    format: countOrDash,
    how: 'Visits that started in the range; a visit ends after 30 minutes without an event. The breakdowns count these.',
    from: (t) => [['Visitors', countOrDash(t.visitors)]],
  },
  {
    key: 'pageviews',
    label: 'Pageviews',
    format: countOrDash,
    how: 'Page views of the visits that started in the range.',
    from: (t) => [['Visits', countOrDash(t.sessions)]],
  },
  {
    key: 'views_per_visit',
    label: 'Views / visit',
    format: formatRatio,
    how: 'Pageviews ÷ visits.',
    from: (t) => [
      ['Pageviews', countOrDash(t.pageviews)],
      ['Visits', countOrDash(t.sessions)],
    ],
  },
  {
    key: 'bounce_rate',
    label: 'Bounce rate',
    format: formatPercent,
    lowerIsBetter: true,
    how: 'Visits with one page view and no goal ÷ visits.',
    from: (t) => [
      ['Bounced visits', t.bounce_rate === null ? '—' : formatCount(Math.round(t.bounce_rate * t.sessions))],
      ['Visits', countOrDash(t.sessions)],
    ],
  },
  {
    key: 'visit_duration',
    label: 'Visit duration',
    format: formatDuration,
    how: 'Mean time from the first to the last event of the visits with more than one event; one-event visits have no measurable time and are left out.',
    from: (t) => [['Visits', countOrDash(t.sessions)]],
  },
  {
    key: 'revenue_usd',
    label: 'Revenue',
    format: (n) => usdOrDash(n),
    payments: true,
    how: 'Payments in the range that did not fail, in USD net of refunds, whatever visit they are credited to. Matched revenue is the part credited to visits that started in the range.',
    from: (t) => [
      ['Payments', countOrDash(t.payments)],
      ['Matched revenue', usdOrDash(t.matched_revenue_usd)],
      ['Matched payments', countOrDash(t.matched_payments)],
    ],
  },
  {
    key: 'payments',
    label: 'Payments',
    format: countOrDash,
    payments: true,
    how: 'Payments in the range that did not fail. Matched payments are those credited to a visit that started in the range.',
    from: (t) => [
      ['Matched payments', countOrDash(t.matched_payments)],
      ['Customers', countOrDash(t.customers)],
    ],
  },
  {
    key: 'conversion',
    label: 'Conversion',
    format: formatPercent,
    how: 'Converted customers ÷ visitors: customers with a payment credited to a visit that started in the range. No payment matched: —.',
    from: (t) => [
      ['Converted customers', countOrDash(t.converted)],
      ['Visitors', countOrDash(t.visitors)],
      ['Matched payments', countOrDash(t.matched_payments)],
    ],
  },
  {
    key: 'revenue_per_visitor',
    label: 'Revenue / visitor',
    format: usdOrDash,
    how: 'Matched revenue ÷ visitors: revenue of the payments credited to a visit that started in the range, not all revenue. No payment matched: —.',
    from: (t) => [
      ['Matched revenue', usdOrDash(t.matched_revenue_usd)],
      ['Visitors', countOrDash(t.visitors)],
      ['All revenue', usdOrDash(t.revenue_usd)],
    ],
  },
];

/**
 * The top stats as tiles, each with its change against the previous period.
 * A tile is a button: hover, keyboard focus or a tap opens its explanation
 * (how it is computed, the figures it is computed from, and the previous
 * period's value, a dash when the API has none); Escape closes it. Revenue
 * and payments explain with a link to the payments.
 */
export function OverviewCards(props: { overview: Overview; paymentsHref?: string | undefined }): JSX.Element {
  const { current, previous, change } = props.overview;
  const [open, setOpen] = useState<keyof Totals | null>(null);
  return (
    <div class="metrics">
      {METRICS.map((m) => {
        const id = `explain-${m.key}`;
        const isOpen = open === m.key;
        return (
          <div
            key={m.key}
            class={`metric${isOpen ? ' open' : ''}`}
            onKeyDown={(e) => {
              if (e.key === 'Escape') setOpen(null);
            }}
          >
            <button
              type="button"
              class="metric-button"
              aria-expanded={isOpen}
              aria-controls={id}
              onClick={() => setOpen(isOpen ? null : m.key)}
            >
              <span class="metric-label">{m.label}</span>
              <span class="metric-value" data-metric={m.key}>
                {m.format(current[m.key])}
              </span>
              <Change value={change[m.key as keyof Overview['change']]} lowerIsBetter={m.lowerIsBetter} />
            </button>
            <div class="metric-explain" id={id} data-explain={m.key}>
              <p>{m.how}</p>
              <dl>
                {m.from(current).map(([label, value]) => (
                  <div key={label}>
                    <dt>{label}</dt>
                    <dd>{value}</dd>
                  </div>
                ))}
                <div>
                  <dt>Previous period</dt>
                  <dd data-previous={m.key}>{m.format(previous[m.key])}</dd>
                </div>
              </dl>
              {m.payments && props.paymentsHref ? <a href={props.paymentsHref}>Open the payments</a> : null}
            </div>
          </div>
        );
      })}
    </div>
  );
}
