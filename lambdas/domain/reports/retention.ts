import { addDays, daysBetween, localDay, type DateRange } from '../range.js';
import { isCountable, type Payment } from '../payments/payment.js';
import type { Customer } from '../payments/customer.js';
import type { Touch } from '../payments/attribution.js';
import { customerKey } from '../payments/contribution.js';
import { amountUsd, netUsd, type UsdRate } from '../payments/money.js';
import { NONE_LABEL, UNATTRIBUTED_LABEL } from './breakdown.js';
import { ratio, usd } from './periods.js';

/**
 * The retention report (spec §2.7, §4.2; every formula in `docs/retention.md`):
 * the customers whose first payment falls in the range, grouped by the
 * channel, referrer and campaign credited for that first payment, with how
 * much they paid, how much was refunded and whether they are still paying.
 */

const DAY_MS = 86_400_000;
/** `day_one`: under this many days of payments (spec §8). */
export const DAY_ONE_DAYS = 60;
/** The `churn_30d` cohort: first payment this many days before today, both ends inclusive (spec §8). */
export const CHURN_WINDOW = { from: 30, to: 60 } as const;
/** Billing period assumed for a subscription-like customer with a single payment. */
export const DEFAULT_PERIOD_DAYS = 31;
/** Bounds of a billing period inferred from payment intervals. */
export const PERIOD_BOUNDS_DAYS = { min: 7, max: 366 } as const;
/** Late payments tolerated before a recency-judged customer stops counting as paying. */
export const GRACE_DAYS = 7;
/** The headline needs this many customers in total, this many in the channel it names, and this lift over the average. */
export const HEADLINE = { minCustomers: 10, minGroup: 3, minLift: 1.1 } as const;

export const TOTAL_LABEL = 'All customers';

/** A group of customers (spec §2.7 "Group fields"); `total`, channels, referrers and campaigns all carry every field. */
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

/** The retention response (spec §2.7). */
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

/** How a customer's "still paying" was judged. */
type StatusBasis = 'provider' | 'recency' | 'one-off';

/** One payer (a provider customer, or a payment with no customer) and what the report needs of them. */
interface Payer {
  firstDay: string;
  /** The visit credited for the first payment; null when it is unattributed. */
  credit: Touch | null;
  firstCents: number;
  netCents: number;
  refundedCents: number;
  anyRefund: boolean;
  basis: StatusBasis;
  stillPaying: boolean;
}

type Counted = Payment & { ts: number; amount: number; currency: string; usd: number; net: number };

const cents = (dollars: number) => Math.round(dollars * 100);

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/**
 * Whether a payer still pays, and on what basis (`docs/retention.md`
 * "Still paying"): the provider's subscription status when it sent any for
 * the customer; else, for a subscription-like payer (a renewal, a
 * subscription id, or two payments or more), a payment not refunded in full
 * within one billing period plus the grace; a one-off buyer is not paying and
 * cannot churn.
 */
function statusOf(payments: readonly Counted[], customer: Customer | undefined, now: number): { basis: StatusBasis; stillPaying: boolean } {
  const subscriptions = Object.values(customer?.subscriptions ?? {});
  if (subscriptions.length > 0) return { basis: 'provider', stillPaying: subscriptions.some((s) => s.paying) };
  const subscriptionLike = payments.length > 1 || payments.some((p) => p.is_renewal || (p.subscription_id ?? null) !== null);
  if (!subscriptionLike) return { basis: 'one-off', stillPaying: false };
  const gaps = payments.slice(1).map((p, i) => p.ts - (payments[i]?.ts ?? p.ts));
  const period = gaps.length === 0 ? DEFAULT_PERIOD_DAYS * DAY_MS : Math.min(Math.max(median(gaps), PERIOD_BOUNDS_DAYS.min * DAY_MS), PERIOD_BOUNDS_DAYS.max * DAY_MS);
  const last = payments.filter((p) => p.status !== 'refunded').at(-1);
  return { basis: 'recency', stillPaying: last !== undefined && now - last.ts <= period + GRACE_DAYS * DAY_MS };
}

/** Every payer with a countable payment up to `now`, keyed like the overview's distinct payers. */
function payersOf(input: RetentionInput): Payer[] {
  const byPayer = new Map<string, Counted[]>();
  for (const p of input.payments) {
    if (!isCountable(p) || p.ts > input.now) continue;
    const gross = amountUsd(p, input.rate);
    const net = netUsd(p, input.rate);
    if (gross === null || net === null) continue;
    const key = customerKey(p);
    const list = byPayer.get(key) ?? [];
    list.push({ ...p, usd: gross, net });
    byPayer.set(key, list);
  }
  const customers = new Map(input.customers.map((c) => [`${c.provider}:${c.customer_id}`, c]));
  return [...byPayer].map(([key, payments]) => {
    payments.sort((a, b) => a.ts - b.ts || (a.provider_payment_id < b.provider_payment_id ? -1 : 1));
    const first = payments[0] as Counted;
    let netCents = 0;
    let refundedCents = 0;
    for (const p of payments) {
      netCents += cents(p.net);
      refundedCents += cents(p.usd) - cents(p.net);
    }
    return {
      firstDay: localDay(first.ts, input.range.timezone),
      credit: first.touch,
      firstCents: cents(first.net),
      netCents,
      refundedCents,
      anyRefund: payments.some((p) => p.refunded > 0),
      ...statusOf(payments, customers.get(key), input.now),
    };
  });
}

/** A dimension of the first payment's credit: a value, `(none)`, or Unattributed. */
type Dim = (t: Touch) => string | null;
const UNATTRIBUTED = '\u0000unattributed';
const NONE = '\u0000none';
const groupId = (p: Payer, dim: Dim) => (p.credit === null ? UNATTRIBUTED : (dim(p.credit) || NONE));

interface Shares {
  customers: number;
  stillPaying: number;
}

/** The fields of one group (`docs/retention.md` "Formulas"). */
function groupOf(id: string | null, members: readonly Payer[], cohort: readonly Payer[], totals: Shares | null): RetentionGroup {
  const customers = members.length;
  const stillPaying = members.filter((m) => m.stillPaying).length;
  const judged = members.filter((m) => m.basis !== 'one-off');
  const netCents = members.reduce((n, m) => n + m.netCents, 0);
  const cohortJudged = cohort.filter((m) => m.basis !== 'one-off');
  const shares = totals ?? { customers, stillPaying };
  return {
    key: id === null || id === UNATTRIBUTED || id === NONE ? null : id,
    label: id === null ? TOTAL_LABEL : id === UNATTRIBUTED ? UNATTRIBUTED_LABEL : id === NONE ? NONE_LABEL : id,
    unattributed: id === UNATTRIBUTED,
    customers,
    still_paying: stillPaying,
    first_payment_usd: usd(members.reduce((n, m) => n + m.firstCents, 0)),
    refunded_usd: usd(members.reduce((n, m) => n + m.refundedCents, 0)),
    net_ltv_usd: usd(netCents),
    avg_ltv_usd: customers > 0 ? usd(netCents / customers) : null,
    refund_rate: customers > 0 ? ratio(members.filter((m) => m.anyRefund).length / customers) : null,
    churn_customers: judged.length,
    churned: judged.filter((m) => !m.stillPaying).length,
    churn_30d: cohortJudged.length > 0 ? ratio(cohortJudged.filter((m) => !m.stillPaying).length / cohortJudged.length) : null,
    share_customers: shares.customers > 0 ? ratio(customers / shares.customers) : null,
    share_still_paying: shares.stillPaying > 0 ? ratio(stillPaying / shares.stillPaying) : null,
  };
}

/** The groups of one dimension, most net LTV first, then most customers, then label. */
function groupsBy(dim: Dim, considered: readonly Payer[], cohort: readonly Payer[], totals: Shares): RetentionGroup[] {
  const ids = [...new Set(considered.map((p) => groupId(p, dim)))];
  return ids
    .map((id) => groupOf(id, considered.filter((p) => groupId(p, dim) === id), cohort.filter((p) => groupId(p, dim) === id), totals))
    .sort((a, b) => b.net_ltv_usd - a.net_ltv_usd || b.customers - a.customers || a.label.localeCompare(b.label));
}

const dollars = (amount: number) =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: amount < 10 ? 2 : 0, maximumFractionDigits: amount < 10 ? 2 : 0 }).format(amount);

/**
 * The one-sentence finding (`docs/retention.md` "Headline"): the attributed
 * channel with the highest average LTV, when there are at least 10 customers,
 * it has at least 3, and it beats the average by 10% or more; otherwise null.
 * Before 60 days of payments it says so, as LTV is then revenue so far.
 */
export function retentionHeadline(total: RetentionGroup, channels: readonly RetentionGroup[], dayOne: boolean): string | null {
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
 * The retention report of a site (spec §2.7): pure, from every customer and
 * payment of the site. Customers considered are the payers whose first
 * countable payment falls on a local day of the range; `churn_30d` looks at
 * the payers whose first payment was 30 to 60 local days before today, in
 * or out of the range.
 */
export function retentionReport(input: RetentionInput): RetentionReport {
  const today = localDay(input.now, input.range.timezone);
  const payers = payersOf(input);
  const considered = payers.filter((p) => p.firstDay >= input.range.from && p.firstDay <= input.range.to);
  const windowFrom = addDays(today, -CHURN_WINDOW.to);
  const windowTo = addDays(today, -CHURN_WINDOW.from);
  const cohort = payers.filter((p) => p.firstDay >= windowFrom && p.firstDay <= windowTo);
  const total = groupOf(null, considered, cohort, null);
  const shares = { customers: total.customers, stillPaying: total.still_paying };
  const channels = groupsBy((t) => t.channel, considered, cohort, shares);
  const firstDay = payers.map((p) => p.firstDay).sort()[0];
  const daysOfData = firstDay === undefined || firstDay > today ? 0 : daysBetween(firstDay, today);
  const dayOne = daysOfData < DAY_ONE_DAYS;
  const providers = new Map<string, boolean>();
  for (const p of input.payments) if (isCountable(p) && p.ts <= input.now) providers.set(p.provider, providers.get(p.provider) ?? false);
  for (const c of input.customers) providers.set(c.provider, (providers.get(c.provider) ?? false) || Object.keys(c.subscriptions ?? {}).length > 0);
  return {
    site: input.site,
    range: input.range,
    days_of_data: daysOfData,
    day_one: dayOne,
    headline: retentionHeadline(total, channels, dayOne),
    total,
    channels,
    referrers: groupsBy((t) => t.referrer_host, considered, cohort, shares),
    campaigns: groupsBy((t) => t.campaign, considered, cohort, shares),
    status_sources: [...providers].sort(([a], [b]) => a.localeCompare(b)).map(([provider, known]) => ({ provider, subscription_status: known })),
  };
}
