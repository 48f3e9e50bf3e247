import { localDay } from '../range.js';
import { isCountable, type Payment } from '../payments/payment.js';
import type { SubscriptionState } from '../payments/customer.js';
import { paymentKey } from '../payments/contribution.js';
import { amountUsd, netUsd, type UsdRate } from '../payments/money.js';
import { dict, parseDict } from '../dict.js';

/**
 * Retention's storage-independent building blocks (`docs/retention.md`,
 * "How it is computed"): what one payment of a payer contributes
 * (`PayerPayment`), what one payer contributes (`PayerSummary`, decided once
 * per payer from its payments and subscription statuses), and the cohort
 * counters of a set of payers (`CohortGroups`, per group key of each of the
 * three groupings). The whole-site computation (`retentionReport`) and the
 * cohort rollups (`PayerCohortStore`, `CohortRecompute`) are both built from these functions, so the
 * report is the same whichever path computed it.
 */

const DAY_MS = 86_400_000;
/** Billing period assumed for a subscription-like payer with a single payment. */
export const DEFAULT_PERIOD_DAYS = 31;
/** Bounds of a billing period inferred from payment intervals. */
export const PERIOD_BOUNDS_DAYS = { min: 7, max: 366 } as const;
/** Late payments tolerated before a recency-judged payer stops counting as paying. */
export const GRACE_DAYS = 7;
/**
 * The "paying until" of a payer whose provider says a subscription is paying:
 * open-ended. It sorts after every `YYYY-MM-DD` day, so "still paying on day
 * d" is `until >= d` for every payer.
 */
export const OPEN_ENDED = '~';
/**
 * Most group keys one referrer or campaign cohort item holds (referrer hosts
 * and campaigns are free-form); the payers of the keys with the fewest
 * payers beyond it are counted under `OTHER` (`docs/retention.md`,
 * "Bounds"). Channels are a closed list and are never folded.
 */
export const COHORT_KEYS_PER_ITEM = 100;

/** The three groupings of the report, by the credited visit's channel, referrer host and `utm_campaign`. */
export const GROUPINGS = ['channels', 'referrers', 'campaigns'] as const;
export type Grouping = (typeof GROUPINGS)[number];

/** Group ids that are not a value of the credited visit. */
export const UNATTRIBUTED = '\u0000unattributed';
export const NONE = '\u0000none';
export const OTHER = '\u0000other';

/** The credited visit's channel, referrer host and campaign (`Touch` fields), the three groupings' values. */
export type GroupValues = [channel: string, referrer: string | null, campaign: string | null];

/** One countable payment of a payer, as retention needs it (USD cents at the rate in force when settled). */
export interface PayerPayment {
  /** `provider:id`. */
  key: string;
  /** Time of the payment, ms since epoch (UTC). */
  ts: number;
  /** Amount in USD cents, before refunds. */
  gross: number;
  /** Net of refunds, USD cents. */
  net: number;
  /** Any refund (partial or full). */
  refunded: boolean;
  /** Refunded in full (`status` refunded): not a sign of paying. */
  full: boolean;
  renewal: boolean;
  /** Carries a subscription id. */
  sub: boolean;
  /** The credited visit's group values; null when Unattributed. */
  g: GroupValues | null;
}

/** What one payer (a provider customer, or a payment with no customer) brings to its cohort. */
export interface PayerSummary {
  /** Site-local day of the first countable payment: the payer's cohort. */
  day: string;
  /** The first payment's credited visit (its group in every grouping); null when Unattributed. */
  g: GroupValues | null;
  /** USD cents: the first payment's net, every payment's net, every payment's refunds. */
  first: number;
  net: number;
  refunded: number;
  /** Any payment refunded, partly or fully. */
  refund: boolean;
  /** Whether churn can be judged (provider status or recency; not a one-off buyer). */
  judged: boolean;
  /**
   * The last site-local day on which the payer counts as still paying:
   * `OPEN_ENDED` while the provider says a subscription pays; the local day
   * of latest payment not refunded in full + billing period + grace for a
   * payer judged by recency; null when not paying (or a one-off buyer).
   */
  until: string | null;
}

const cents = (dollars: number) => Math.round(dollars * 100);

/**
 * A payment as its payer's retention entry, or null when it is not
 * countable (no time, amount or currency, failed, or no USD rate): failed
 * payments count nowhere (`docs/retention.md`, "Who is counted").
 */
export function payerPaymentOf(p: Payment, rate: UsdRate): PayerPayment | null {
  if (!isCountable(p)) return null;
  const gross = amountUsd(p, rate);
  const net = netUsd(p, rate);
  if (gross === null || net === null) return null;
  return {
    key: paymentKey(p),
    ts: p.ts,
    gross: cents(gross),
    net: cents(net),
    refunded: p.refunded > 0,
    full: p.status === 'refunded',
    renewal: p.is_renewal,
    sub: (p.subscription_id ?? null) !== null,
    g: p.touch ? [p.touch.channel, p.touch.referrer_host, p.touch.campaign] : null,
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/**
 * A payer's summary from its countable payments (any order) and its
 * subscriptions' statuses, or null without a countable payment. "Still
 * paying" (`docs/retention.md`): the provider's status when it sent any;
 * else, for a subscription-like payer (a renewal, a subscription id, or two
 * payments or more), through the local day on which one billing period
 * (median interval, bounded to 7–366 days; 31 days for one payment) plus 7
 * days of grace after its latest payment not refunded in full ends; a
 * one-off buyer is not paying and not judged.
 */
export function payerSummary(
  entries: readonly PayerPayment[],
  statuses: readonly SubscriptionState[],
  timezone: string,
): PayerSummary | null {
  const payments = [...entries].sort((a, b) => a.ts - b.ts || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const first = payments[0];
  if (!first) return null;
  let net = 0;
  let refunded = 0;
  for (const p of payments) {
    net += p.net;
    refunded += p.gross - p.net;
  }
  const base = {
    day: localDay(first.ts, timezone),
    g: first.g,
    first: first.net,
    net,
    refunded,
    refund: payments.some((p) => p.refunded),
  };
  if (statuses.length > 0) return { ...base, judged: true, until: statuses.some((s) => s.paying) ? OPEN_ENDED : null };
  const subscriptionLike = payments.length > 1 || payments.some((p) => p.renewal || p.sub);
  if (!subscriptionLike) return { ...base, judged: false, until: null };
  const gaps = payments.slice(1).map((p, i) => p.ts - (payments[i]?.ts ?? p.ts));
  const period =
    gaps.length === 0
      ? DEFAULT_PERIOD_DAYS * DAY_MS
      : Math.min(Math.max(median(gaps), PERIOD_BOUNDS_DAYS.min * DAY_MS), PERIOD_BOUNDS_DAYS.max * DAY_MS);
  const last = payments.filter((p) => !p.full).at(-1);
  return { ...base, judged: true, until: last ? localDay(last.ts + period + GRACE_DAYS * DAY_MS, timezone) : null };
}

/** Counters of one group of payers (USD cents). */
export interface CohortCounts {
  customers: number;
  /** Payers whose churn can be judged. */
  judged: number;
  /** Payers with a refund. */
  refunds: number;
  first: number;
  net: number;
  refunded: number;
  /** Payers by their "paying until" day (`OPEN_ENDED` included); days before the item was computed are dropped. */
  until: Record<string, number>;
}

/** Cohort counters per group id, for each grouping. */
export type CohortGroups = Record<Grouping, Record<string, CohortCounts>>;

/** Group ids are credited values (referrer hosts, campaigns: visitor text), so each grouping is a dict. */
export const emptyCohort = (): CohortGroups => ({ channels: dict(), referrers: dict(), campaigns: dict() });
const emptyCounts = (): CohortCounts => ({
  customers: 0,
  judged: 0,
  refunds: 0,
  first: 0,
  net: 0,
  refunded: 0,
  until: {},
});

/** A payer's group id in a grouping: the credited value, `NONE` for an empty one, `UNATTRIBUTED` without a credit. */
export function groupId(g: GroupValues | null, grouping: Grouping): string {
  if (g === null) return UNATTRIBUTED;
  return g[GROUPINGS.indexOf(grouping)] || NONE;
}

function addCounts(into: CohortCounts, c: CohortCounts, fromDay: string): void {
  into.customers += c.customers;
  into.judged += c.judged;
  into.refunds += c.refunds;
  into.first += c.first;
  into.net += c.net;
  into.refunded += c.refunded;
  for (const [day, n] of Object.entries(c.until)) if (day >= fromDay) into.until[day] = (into.until[day] ?? 0) + n;
}

/** Folds the groups with the fewest payers beyond `COHORT_KEYS_PER_ITEM` into `OTHER` (ties: the larger id folds first). */
function fold(groups: Record<string, CohortCounts>): Record<string, CohortCounts> {
  const ids = Object.keys(groups);
  if (ids.length <= COHORT_KEYS_PER_ITEM) return groups;
  const order = ids
    .filter((id) => id !== OTHER)
    .sort((a, b) => (groups[b]?.customers ?? 0) - (groups[a]?.customers ?? 0) || (a < b ? -1 : 1));
  const kept = new Set(order.slice(0, COHORT_KEYS_PER_ITEM - 1));
  const out = dict<CohortCounts>();
  const other = emptyCounts();
  for (const id of ids) {
    const c = groups[id] as CohortCounts;
    if (kept.has(id)) out[id] = c;
    else addCounts(other, c, '');
  }
  out[OTHER] = other;
  return out;
}

/**
 * The cohort counters of a set of payers (a day's, for its cohort items).
 * "Paying until" days before `fromDay` are dropped (nobody reads them as
 * paying again: a report's today is never earlier than when an item was
 * computed); `fromDay` '' keeps every one. With `bounded`, referrers and
 * campaigns keep at most `COHORT_KEYS_PER_ITEM` groups each.
 */
export function cohortOf(members: readonly PayerSummary[], fromDay = '', bounded = false): CohortGroups {
  const out = emptyCohort();
  for (const m of members) {
    const counts: CohortCounts = {
      customers: 1,
      judged: m.judged ? 1 : 0,
      refunds: m.refund ? 1 : 0,
      first: m.first,
      net: m.net,
      refunded: m.refunded,
      until: m.until !== null ? { [m.until]: 1 } : {},
    };
    for (const grouping of GROUPINGS) {
      const id = groupId(m.g, grouping);
      addCounts((out[grouping][id] ??= emptyCounts()), counts, fromDay);
    }
  }
  return bounded ? boundCohort(out) : out;
}

/** The sum of several cohorts (a month from its days, a range from its periods), dropping "until" days before `fromDay`. */
export function mergeCohorts(cohorts: readonly CohortGroups[], fromDay = '', bounded = false): CohortGroups {
  const out = emptyCohort();
  for (const c of cohorts)
    for (const grouping of GROUPINGS)
      for (const [id, counts] of Object.entries(c[grouping]))
        addCounts((out[grouping][id] ??= emptyCounts()), counts, fromDay);
  return bounded ? boundCohort(out) : out;
}

/**
 * The first "paying until" day a cohort recompute at `now` keeps: its site-local day (nobody can be
 * paying again on an earlier one, `docs/retention.md` "How it is computed: payer summaries and cohort
 * rollups"); '' (every day) without a clock.
 *
 * @param now ms since epoch, or undefined
 */
export const keptFrom = (now: number | undefined, timezone: string): string =>
  now === undefined ? '' : localDay(now, timezone);

/** A period's cohort counters (bounded, as its items hold them) and its payers. */
export interface PeriodCohort {
  cohort: CohortGroups;
  payers: number;
}

/** A day's cohort from the summaries of its members (the payers whose first payment is on it). */
export function dayCohort(members: readonly PayerSummary[], fromDay: string): PeriodCohort {
  return { cohort: cohortOf(members, fromDay, true), payers: members.length };
}

/** A month's cohort from its days' cohorts: their counters merged, their payers summed. */
export function monthCohort(days: readonly PeriodCohort[], fromDay: string): PeriodCohort {
  return {
    cohort: mergeCohorts(
      days.map((d) => d.cohort),
      fromDay,
      true,
    ),
    payers: days.reduce((n, d) => n + d.payers, 0),
  };
}

function boundCohort(c: CohortGroups): CohortGroups {
  return { channels: c.channels, referrers: fold(c.referrers), campaigns: fold(c.campaigns) };
}

/** Payers of a group still paying on local day `today`. */
export function stillPayingOn(c: CohortCounts, today: string): number {
  let n = 0;
  for (const [day, count] of Object.entries(c.until)) if (day >= today) n += count;
  return n;
}

/** The payers of every group of a grouping together (the channels of a cohort are every payer once). */
export function totalOf(groups: Record<string, CohortCounts>): CohortCounts {
  const out = emptyCounts();
  for (const c of Object.values(groups)) addCounts(out, c, '');
  return out;
}

/** Compact JSON of one grouping's counters: `{id: [customers, judged, refunds, first, net, refunded, {until: n}]}`. */
export function serializeGroups(groups: Record<string, CohortCounts>): string {
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(groups).map(([id, c]) => [
        id,
        [c.customers, c.judged, c.refunds, c.first, c.net, c.refunded, c.until],
      ]),
    ),
  );
}

export function deserializeGroups(json: string): Record<string, CohortCounts> {
  const raw = parseDict<[number, number, number, number, number, number, Record<string, number>]>(json);
  return dict(
    Object.entries(raw).map(
      ([id, [customers, judged, refunds, first, net, refunded, until]]): [string, CohortCounts] => [
        id,
        { customers, judged, refunds, first, net, refunded, until },
      ],
    ),
  );
}
