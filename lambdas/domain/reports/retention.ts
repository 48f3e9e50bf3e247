import { addDays, daysBetween, localDay, type DateRange } from '../range.js';
import type { Payment } from '../payments/payment.js';
import type { Customer } from '../payments/customer.js';
import { customerKey } from '../payments/contribution.js';
import type { UsdRate } from '../payments/money.js';
import { NONE_LABEL, UNATTRIBUTED_LABEL } from './breakdown.js';
import { ratio, usd } from './periods.js';
import {
  NONE,
  OTHER,
  UNATTRIBUTED,
  cohortOf,
  payerPaymentOf,
  payerSummary,
  stillPayingOn,
  totalOf,
  type CohortCounts,
  type CohortGroups,
  type Grouping,
  type PayerPayment,
} from './cohorts.js';
import { dict } from '../dict.js';

/**
 * The retention report (`docs/api.md` "Reports"; every formula in `docs/retention.md`):
 * the customers whose first payment falls in the range, grouped by the
 * channel, referrer and campaign credited for that first payment, with how
 * much they paid, how much was refunded and whether they are still paying.
 */

/** `day_one`: under this many days of payments (`docs/api.md` "Limits"). */
export const DAY_ONE_DAYS = 60;
/** The `churn_30d` cohort: first payment this many days before today, both ends inclusive (`docs/api.md` "Limits"). */
export const CHURN_WINDOW = { from: 30, to: 60 } as const;
export { DEFAULT_PERIOD_DAYS, GRACE_DAYS, PERIOD_BOUNDS_DAYS } from './cohorts.js';
/** The headline needs this many customers in total, this many in the channel it names, and this lift over the average. */
export const HEADLINE = { minCustomers: 10, minGroup: 3, minLift: 1.1 } as const;

export const TOTAL_LABEL = 'All customers';
/** Labels of the referrers or campaigns folded together past `COHORT_KEYS_PER_ITEM` in one cohort item. */
export const OTHER_LABELS: Record<Grouping, string> = {
  channels: '(other channels)',
  referrers: '(other referrers)',
  campaigns: '(other campaigns)',
};

/** A group of customers (`docs/retention.md` "Formulas"); `total`, channels, referrers and campaigns all carry every field. */
export interface RetentionGroup {
  key: string | null;
  label: string;
  unattributed: boolean;
  customers: number;
  still_paying: number;
  first_payment_usd: number;
  refunded_usd: number;
  net_ltv_usd: number;
  avg_ltv_usd: number | null;
  refund_rate: number | null;
  churn_customers: number;
  churned: number;
  churn_30d: number | null;
  share_customers: number | null;
  share_still_paying: number | null;
}

export interface StatusSource {
  provider: string;
  subscription_status: boolean;
}

/** The retention response (`docs/retention.md`). */
export interface RetentionReport {
  site: string;
  range: DateRange;
  days_of_data: number;
  day_one: boolean;
  headline: string | null;
  total: RetentionGroup;
  channels: RetentionGroup[];
  referrers: RetentionGroup[];
  campaigns: RetentionGroup[];
  status_sources: StatusSource[];
}

export interface RetentionInput {
  site: string;
  /** The range of first payments; its timezone is the site's. */
  range: DateRange;
  /** Every customer of the site (their subscription facts). */
  customers: readonly Customer[];
  /** Every payment of the site, any status. */
  payments: readonly Payment[];
  /** Now, ms since epoch: today is its local day, and later payments are ignored. */
  now: number;
  rate: UsdRate;
}

/**
 * What the report reads from the cohort rollups (`docs/retention.md`, "How
 * it is computed"): the cohorts of the range's first-payment days, those of
 * the `churn_30d` window (30–60 local days before today), the site's first
 * day with a countable payment, and the providers seen.
 */
export interface RetentionCohorts {
  considered: CohortGroups;
  window: CohortGroups;
  /** Local day of the site's first countable payment; null when none. */
  firstDay: string | null;
  /** Every provider seen among the site's customers and payments: whether it sent a subscription status. */
  sources: Record<string, boolean>;
}

interface Shares {
  customers: number;
  stillPaying: number;
}

function labelOf(id: string | null, grouping: Grouping): string {
  if (id === null) return TOTAL_LABEL;
  if (id === UNATTRIBUTED) return UNATTRIBUTED_LABEL;
  if (id === NONE) return NONE_LABEL;
  if (id === OTHER) return OTHER_LABELS[grouping];
  return id;
}

/** The fields of one group (`docs/retention.md` "Formulas") from its cohort counters and its `churn_30d` cohort's. */
function groupOf(
  id: string | null,
  grouping: Grouping,
  members: CohortCounts,
  cohort: CohortCounts | undefined,
  today: string,
  totals: Shares | null,
): RetentionGroup {
  const customers = members.customers;
  const stillPaying = stillPayingOn(members, today);
  const cohortJudged = cohort?.judged ?? 0;
  const shares = totals ?? { customers, stillPaying };
  return {
    key: id === null || id === UNATTRIBUTED || id === NONE || id === OTHER ? null : id,
    label: labelOf(id, grouping),
    unattributed: id === UNATTRIBUTED,
    customers,
    still_paying: stillPaying,
    first_payment_usd: usd(members.first),
    refunded_usd: usd(members.refunded),
    net_ltv_usd: usd(members.net),
    avg_ltv_usd: customers > 0 ? usd(members.net / customers) : null,
    refund_rate: customers > 0 ? ratio(members.refunds / customers) : null,
    churn_customers: members.judged,
    churned: members.judged - stillPaying,
    churn_30d: cohort && cohortJudged > 0 ? ratio((cohortJudged - stillPayingOn(cohort, today)) / cohortJudged) : null,
    share_customers: shares.customers > 0 ? ratio(customers / shares.customers) : null,
    share_still_paying: shares.stillPaying > 0 ? ratio(stillPaying / shares.stillPaying) : null,
  };
}

/** The groups of one grouping, most net LTV first, then most customers, then label. */
function groupsBy(grouping: Grouping, c: RetentionCohorts, today: string, totals: Shares): RetentionGroup[] {
  return Object.entries(c.considered[grouping])
    .map(([id, members]) => groupOf(id, grouping, members, c.window[grouping][id], today, totals))
    .sort((a, b) => b.net_ltv_usd - a.net_ltv_usd || b.customers - a.customers || a.label.localeCompare(b.label));
}

const dollars = (amount: number) =>
  new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: amount < 10 ? 2 : 0,
    maximumFractionDigits: amount < 10 ? 2 : 0,
  }).format(amount);

/**
 * The one-sentence finding (`docs/retention.md` "Headline"): the attributed
 * channel with the highest average LTV, when there are at least 10 customers,
 * it has at least 3, and it beats the average by 10% or more; otherwise null.
 * Before 60 days of payments it says so, as LTV is then revenue so far.
 */
export function retentionHeadline(
  total: RetentionGroup,
  channels: readonly RetentionGroup[],
  dayOne: boolean,
): string | null {
  if (total.customers < HEADLINE.minCustomers || total.avg_ltv_usd === null || total.net_ltv_usd <= 0) return null;
  const exactAvg = (g: RetentionGroup) => g.net_ltv_usd / g.customers;
  const best = channels
    .filter((g) => !g.unattributed && g.customers >= HEADLINE.minGroup)
    .sort((a, b) => exactAvg(b) - exactAvg(a) || b.customers - a.customers || a.label.localeCompare(b.label))[0];
  if (!best) return null;
  const lift = exactAvg(best) / exactAvg(total);
  if (lift < HEADLINE.minLift) return null;
  const figures = `${dollars(exactAvg(best))}, ${lift.toFixed(1)}× the average of ${dollars(exactAvg(total))}.`;
  return dayOne
    ? `Early days (under ${DAY_ONE_DAYS} days of payments): customers from ${best.label} have brought the most revenue so far: ${figures}`
    : `Customers from ${best.label} have the highest average LTV: ${figures}`;
}

/**
 * The retention report (`docs/retention.md`) from cohort counters: customers
 * considered are the payers whose first countable payment falls on a local
 * day of the range; `churn_30d` looks at the payers whose first payment was
 * 30 to 60 local days before today, in or out of the range. Pure: `now` is
 * the caller's clock, and "still paying" is read as of its local day.
 */
export function retentionFromCohorts(
  site: string,
  range: DateRange,
  now: number,
  c: RetentionCohorts,
): RetentionReport {
  const today = localDay(now, range.timezone);
  const total = groupOf(null, 'channels', totalOf(c.considered.channels), totalOf(c.window.channels), today, null);
  const shares = { customers: total.customers, stillPaying: total.still_paying };
  const channels = groupsBy('channels', c, today, shares);
  const daysOfData = c.firstDay === null || c.firstDay > today ? 0 : daysBetween(c.firstDay, today);
  const dayOne = daysOfData < DAY_ONE_DAYS;
  return {
    site,
    range,
    days_of_data: daysOfData,
    day_one: dayOne,
    headline: retentionHeadline(total, channels, dayOne),
    total,
    channels,
    referrers: groupsBy('referrers', c, today, shares),
    campaigns: groupsBy('campaigns', c, today, shares),
    status_sources: Object.entries(c.sources)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([provider, known]) => ({ provider, subscription_status: known })),
  };
}

/** The `churn_30d` window of first-payment days (both inclusive) for today's local day. */
export function churnWindow(today: string): { from: string; to: string } {
  return { from: addDays(today, -CHURN_WINDOW.to), to: addDays(today, -CHURN_WINDOW.from) };
}

/**
 * The retention report of a site (`docs/retention.md`) from every customer and payment
 * of the site: each payer's summary (`payerSummary`) from its countable
 * payments up to `now`, then the same cohort counters the cohort rollups
 * keep. The reference the cohort rollups are tested against, and the path of
 * a generation written before them (`docs/retention.md`).
 */
export function retentionReport(input: RetentionInput): RetentionReport {
  const tz = input.range.timezone;
  const byPayer = new Map<string, PayerPayment[]>();
  const providers = dict<boolean>();
  for (const p of input.payments) {
    if (p.ts === null || p.ts > input.now) continue;
    const entry = payerPaymentOf(p, input.rate);
    if (!entry) continue;
    providers[p.provider] ??= false;
    const key = customerKey(p);
    byPayer.set(key, [...(byPayer.get(key) ?? []), entry]);
  }
  const customers = new Map(input.customers.map((c) => [`${c.provider}:${c.customer_id}`, c]));
  for (const c of input.customers)
    providers[c.provider] = (providers[c.provider] ?? false) || Object.keys(c.subscriptions ?? {}).length > 0;
  const payers = [...byPayer].flatMap(
    ([key, entries]) => payerSummary(entries, Object.values(customers.get(key)?.subscriptions ?? {}), tz) ?? [],
  );
  const window = churnWindow(localDay(input.now, tz));
  return retentionFromCohorts(input.site, input.range, input.now, {
    considered: cohortOf(payers.filter((p) => p.day >= input.range.from && p.day <= input.range.to)),
    window: cohortOf(payers.filter((p) => p.day >= window.from && p.day <= window.to)),
    firstDay: payers.map((p) => p.day).sort()[0] ?? null,
    sources: providers,
  });
}
