import { describe, expect, it } from 'vitest';
import {
  retentionHeadline,
  retentionReport,
  type RetentionGroup,
  type RetentionInput,
} from '../../lambdas/domain/reports/retention.js';
import { retentionResponse } from '../../lambdas/domain/reports/schemas.js';
import { emptyPayment, type Payment } from '../../lambdas/domain/payments/payment.js';
import { emptyCustomer, type Customer, type SubscriptionState } from '../../lambdas/domain/payments/customer.js';
import type { Touch } from '../../lambdas/domain/payments/attribution.js';
import type { Provider } from '../../lambdas/domain/payments/facts.js';

/**
 * A hand-computed retention scenario (every number below is worked out by
 * hand; formulas in docs/retention.md). Site in Europe/Berlin, today
 * 2026-04-02 (now 10:00Z), range March 2026. The churn_30d cohort is first
 * payments on local days 2026-02-01 … 2026-03-03 (60 to 30 days ago), across
 * the February/March boundary and partly outside the range.
 *
 * In the range (12 customers; first net / net LTV / refunded; still paying):
 * C1  stripe cus_1   Communities news.ycombinator.com launch  03-01 (02-28 23:30Z) 100/200/0, renewal; sub active → paying
 * C2  stripe cus_2   Communities news.ycombinator.com launch  03-05 60/60/40 (partial refund); sub canceled → churned
 * C3  stripe cus_3   Communities news.ycombinator.com launch  03-10 150/150/0, a failed renewal; sub past_due (paying) → paying
 * C12 stripe cus_12  Communities www.reddit.com (none)        03-07 200/200/0 (a failed HN-credited attempt on 03-06); sub active → paying
 * C4  stripe cus_4   Search www.google.com (none)             03-03 23:30 local 50/100/0, renewal today; sub active → paying
 * C5  stripe cus_5   Search www.google.com (none)             03-15 0/0/50 (refunded in full); sub canceled → churned
 * C6  lemonsqueezy   Search www.google.com (none)             03-04 00:30 local 30/30/0, subscription id, no status: recency 31+7 d → paying
 * C7  lemonsqueezy   AI chatgpt.com (none)                    03-01 20/60/0, weekly: 7+7 d, last 18 d ago → churned
 * C8  lemonsqueezy   AI chatgpt.com (none)                    03-20 20/20/0, one-off: not judged
 * C9  paddle, no customer id, Unattributed                    03-12 25/25/0, one-off
 * C10 paddle ctm_10, Unattributed, EUR at 1.1                 03-20 110/154/11, two payments 1 h apart: period clamped to 7 d, +7 → paying
 * C11 stripe cus_11  Email (none) spring                      03-25 80/80/0, subscription id, no status → paying; a payment after now ignored
 * Outside the range: W1 stripe Communities HN launch 02-01 00:30 local (sub canceled),
 * W2 lemonsqueezy Search 02-15 + 03-15 (28 d period → paying), W3 stripe Search 02-20 one-off,
 * O1 stripe Search 01-31 23:30 local (61 days ago: outside the cohort), polar customer with a failed payment only.
 */
const SITE = 'shop.test';
const TZ = 'Europe/Berlin';
const NOW = Date.UTC(2026, 3, 2, 10);
const MARCH = { from: '2026-03-01', to: '2026-03-31', timezone: TZ };

const touch = (channel: string, referrer_host: string | null, campaign: string | null): Touch => ({
  session_id: `s-${channel}-${referrer_host}`,
  ts: 0,
  channel,
  referrer_host,
  source: null,
  campaign,
  landing_page: '/',
  country: 'DE',
  device: 'Desktop',
});
const HN = touch('Communities', 'news.ycombinator.com', 'launch');
const REDDIT = touch('Communities', 'www.reddit.com', null);
const GOOGLE = touch('Search', 'www.google.com', null);
const CHATGPT = touch('AI', 'chatgpt.com', null);
const NEWSLETTER = touch('Email', null, 'spring');

let n = 0;
const pay = (
  provider: Provider,
  customer: string | null,
  iso: string,
  amount: number,
  o: Partial<Payment> = {},
): Payment => ({
  ...emptyPayment(SITE, provider, `pay_${++n}`),
  ts: Date.parse(iso),
  amount,
  currency: 'USD',
  status: 'paid',
  customer_id: customer,
  rev: 1,
  ...o,
});
const sub = (status: string, paying: boolean): SubscriptionState => ({
  status,
  paying,
  ts: Date.parse('2026-03-20T00:00:00Z'),
});
const customer = (provider: Provider, id: string, subscriptions: Record<string, SubscriptionState> = {}): Customer => ({
  ...emptyCustomer(SITE, provider, id),
  subscriptions,
});

const PAYMENTS: Payment[] = [
  pay('stripe', 'cus_1', '2026-02-28T23:30:00Z', 10000, { touch: HN }),
  pay('stripe', 'cus_1', '2026-03-31T10:00:00Z', 10000, { touch: HN, is_renewal: true }),
  pay('stripe', 'cus_2', '2026-03-05T10:00:00Z', 10000, { touch: HN, refunded: 4000 }),
  pay('stripe', 'cus_3', '2026-03-10T10:00:00Z', 15000, { touch: HN }),
  pay('stripe', 'cus_3', '2026-03-30T10:00:00Z', 15000, { touch: HN, is_renewal: true, status: 'failed' }),
  pay('stripe', 'cus_12', '2026-03-06T10:00:00Z', 20000, { touch: HN, status: 'failed' }),
  pay('stripe', 'cus_12', '2026-03-07T10:00:00Z', 20000, { touch: REDDIT }),
  pay('stripe', 'cus_4', '2026-03-03T22:30:00Z', 5000, { touch: GOOGLE }),
  pay('stripe', 'cus_4', '2026-04-02T08:00:00Z', 5000, { touch: GOOGLE, is_renewal: true }),
  pay('stripe', 'cus_5', '2026-03-15T10:00:00Z', 5000, { touch: GOOGLE, refunded: 5000, status: 'refunded' }),
  pay('lemonsqueezy', 'cust_6', '2026-03-03T23:30:00Z', 3000, { touch: GOOGLE, subscription_id: 'sub_ls6' }),
  pay('lemonsqueezy', 'cust_7', '2026-03-01T09:00:00Z', 2000, { touch: CHATGPT }),
  pay('lemonsqueezy', 'cust_7', '2026-03-08T09:00:00Z', 2000, { touch: CHATGPT, is_renewal: true }),
  pay('lemonsqueezy', 'cust_7', '2026-03-15T09:00:00Z', 2000, { touch: CHATGPT, is_renewal: true }),
  pay('lemonsqueezy', 'cust_8', '2026-03-20T10:00:00Z', 2000, { touch: CHATGPT }),
  pay('paddle', null, '2026-03-12T10:00:00Z', 2500),
  pay('paddle', 'ctm_10', '2026-03-20T11:00:00Z', 10000, { currency: 'EUR' }),
  pay('paddle', 'ctm_10', '2026-03-20T12:00:00Z', 5000, { currency: 'EUR', refunded: 1000 }),
  pay('stripe', 'cus_11', '2026-03-25T10:00:00Z', 8000, { touch: NEWSLETTER, subscription_id: 'sub_11' }),
  pay('stripe', 'cus_11', '2026-04-05T10:00:00Z', 8000, {
    touch: NEWSLETTER,
    subscription_id: 'sub_11',
    is_renewal: true,
  }),
  pay('stripe', 'cus_w1', '2026-01-31T23:30:00Z', 10000, { touch: HN }),
  pay('lemonsqueezy', 'cust_w2', '2026-02-15T10:00:00Z', 3000, { touch: GOOGLE }),
  pay('lemonsqueezy', 'cust_w2', '2026-03-15T10:00:00Z', 3000, { touch: GOOGLE, is_renewal: true }),
  pay('stripe', 'cus_w3', '2026-02-20T10:00:00Z', 4000, { touch: GOOGLE }),
  pay('stripe', 'cus_o1', '2026-01-31T22:30:00Z', 9000, { touch: GOOGLE }),
  pay('polar', 'pol_13', '2026-03-10T10:00:00Z', 9900, { status: 'failed' }),
];

const CUSTOMERS: Customer[] = [
  customer('stripe', 'cus_1', { sub_1: sub('active', true) }),
  customer('stripe', 'cus_2', { sub_2: sub('canceled', false) }),
  customer('stripe', 'cus_3', { sub_3: sub('past_due', true) }),
  customer('stripe', 'cus_12', { sub_12: sub('active', true) }),
  customer('stripe', 'cus_4', { sub_4: sub('active', true) }),
  customer('stripe', 'cus_5', { sub_5: sub('canceled', false) }),
  customer('stripe', 'cus_11'),
  customer('stripe', 'cus_w1', { sub_w1: sub('canceled', false) }),
  customer('stripe', 'cus_w3'),
  customer('stripe', 'cus_o1', { sub_o1: sub('canceled', false) }),
  customer('lemonsqueezy', 'cust_6'),
  customer('lemonsqueezy', 'cust_7'),
  customer('lemonsqueezy', 'cust_8'),
  customer('lemonsqueezy', 'cust_w2'),
  customer('paddle', 'ctm_10'),
  customer('polar', 'pol_13'),
];

const rate = (currency: string) => (currency === 'EUR' ? 1.1 : null);
const input = (o: Partial<RetentionInput> = {}): RetentionInput => ({
  site: SITE,
  range: MARCH,
  customers: CUSTOMERS,
  payments: PAYMENTS,
  now: NOW,
  rate,
  ...o,
});

type Fields = [
  customers: number,
  still: number,
  first: number,
  refunded: number,
  net: number,
  avg: number | null,
  refundRate: number | null,
  churnCustomers: number,
  churned: number,
  churn30: number | null,
  share: number | null,
  shareStill: number | null,
];
const group = (key: string | null, label: string, unattributed: boolean, f: Fields): RetentionGroup => ({
  key,
  label,
  unattributed,
  customers: f[0],
  still_paying: f[1],
  first_payment_usd: f[2],
  refunded_usd: f[3],
  net_ltv_usd: f[4],
  avg_ltv_usd: f[5],
  refund_rate: f[6],
  churn_customers: f[7],
  churned: f[8],
  churn_30d: f[9],
  share_customers: f[10],
  share_still_paying: f[11],
});

// Groups that recur under several dimensions (same members).
const UNATTRIBUTED = group(null, 'Unattributed', true, [2, 1, 135, 11, 179, 89.5, 0.5, 1, 0, null, 0.166667, 0.142857]);
const SEARCH_MEMBERS: Fields = [3, 2, 80, 50, 130, 43.33, 0.333333, 3, 1, 0, 0.25, 0.285714];
const AI_MEMBERS: Fields = [2, 0, 40, 0, 80, 40, 0, 1, 1, 1, 0.166667, 0];
const C11: Fields = [1, 1, 80, 0, 80, 80, 0, 1, 0, null, 0.083333, 0.142857];
const LAUNCH: Fields = [3, 2, 310, 40, 410, 136.67, 0.333333, 3, 1, 0.5, 0.25, 0.285714];

const HEADLINE = 'Customers from Communities have the highest average LTV: $153, 1.7× the average of $90.';

function expectSumsMatch(total: RetentionGroup, groups: readonly RetentionGroup[]) {
  const sum = (
    k:
      | 'customers'
      | 'still_paying'
      | 'first_payment_usd'
      | 'net_ltv_usd'
      | 'refunded_usd'
      | 'churn_customers'
      | 'churned',
  ) => Math.round(groups.reduce((s, g) => s + g[k] * 100, 0)) / 100;
  for (const k of [
    'customers',
    'still_paying',
    'first_payment_usd',
    'net_ltv_usd',
    'refunded_usd',
    'churn_customers',
    'churned',
  ] as const)
    expect(sum(k), k).toBe(total[k]);
}

describe('retention report (docs/retention.md), hand-computed', () => {
  const report = retentionReport(input());

  it('validates against the response schema and echoes site and range', () => {
    expect(retentionResponse.parse(report)).toEqual(report);
    expect(report.site).toBe(SITE);
    expect(report.range).toEqual(MARCH);
  });

  it('counts days of data from the first local day with a payment, today included', () => {
    // First payment 2026-01-31 23:30 Berlin: Jan 31 … Apr 2 is 62 days.
    expect(report.days_of_data).toBe(62);
    expect(report.day_one).toBe(false);
  });

  it('gives the total over the 12 customers whose first payment is in March (local days)', () => {
    expect(report.total).toEqual(
      group(null, 'All customers', false, [12, 7, 845, 101, 1079, 89.92, 0.25, 10, 3, 0.4, 1, 1]),
    );
  });

  it('groups by the channel credited for the first payment, most net LTV first', () => {
    expect(report.channels).toEqual([
      group('Communities', 'Communities', false, [4, 3, 510, 40, 610, 152.5, 0.25, 4, 1, 0.5, 0.333333, 0.428571]),
      UNATTRIBUTED,
      group('Search', 'Search', false, SEARCH_MEMBERS),
      group('AI', 'AI', false, AI_MEMBERS),
      group('Email', 'Email', false, C11),
    ]);
  });

  it('groups by referrer, with (none) for an attributed first payment without one', () => {
    expect(report.referrers).toEqual([
      group('news.ycombinator.com', 'news.ycombinator.com', false, LAUNCH),
      group('www.reddit.com', 'www.reddit.com', false, [1, 1, 200, 0, 200, 200, 0, 1, 0, null, 0.083333, 0.142857]),
      UNATTRIBUTED,
      group('www.google.com', 'www.google.com', false, SEARCH_MEMBERS),
      group('chatgpt.com', 'chatgpt.com', false, AI_MEMBERS),
      group(null, '(none)', false, C11),
    ]);
  });

  it('groups by campaign; equal net LTV is ordered by customers', () => {
    expect(report.campaigns).toEqual([
      group(null, '(none)', false, [6, 3, 320, 50, 410, 68.33, 0.166667, 5, 2, 0.333333, 0.5, 0.428571]),
      group('launch', 'launch', false, LAUNCH),
      UNATTRIBUTED,
      group('spring', 'spring', false, C11),
    ]);
  });

  it('adds the groups of every dimension up to the total', () => {
    for (const groups of [report.channels, report.referrers, report.campaigns]) expectSumsMatch(report.total, groups);
  });

  it('lists each provider and whether it sent subscription status', () => {
    expect(report.status_sources).toEqual([
      { provider: 'lemonsqueezy', subscription_status: false },
      { provider: 'paddle', subscription_status: false },
      { provider: 'polar', subscription_status: false },
      { provider: 'stripe', subscription_status: true },
    ]);
  });

  it('names the channel with the highest average LTV in the headline', () => {
    expect(report.headline).toBe(HEADLINE);
  });

  it('takes first payments by local day: 02-28 23:30Z is March in Berlin, 01-31 23:30Z is February', () => {
    const feb = retentionReport(input({ range: { from: '2026-02-01', to: '2026-02-28', timezone: TZ } }));
    // W1 (02-01 00:30 local), W2, W3; not C1 (03-01 00:30 local) nor O1 (01-31 23:30 local).
    expect(feb.total).toMatchObject({
      customers: 3,
      still_paying: 1,
      first_payment_usd: 170,
      net_ltv_usd: 200,
      churn_customers: 2,
      churned: 1,
      churn_30d: 0.4,
    });
    // Equal net LTV ($100 each): more customers first.
    expect(feb.channels.map((g) => [g.label, g.customers, g.net_ltv_usd, g.churn_30d])).toEqual([
      ['Search', 2, 100, 0],
      ['Communities', 1, 100, 0.5],
    ]);
    expect(feb.headline).toBeNull();
  });

  it('keeps churn_30d on the 30–60-day cohort whatever the range, and null without one', () => {
    const lateMarch = retentionReport(input({ range: { from: '2026-03-20', to: '2026-03-26', timezone: TZ } }));
    expect(lateMarch.total).toMatchObject({ customers: 3, churn_30d: 0.4 });
    const later = retentionReport(input({ now: Date.UTC(2026, 6, 1, 10) }));
    expect(later.total.churn_30d).toBeNull();
  });

  it('is day one under 60 days of payments, and says so in the headline', () => {
    const before = new Set(['cus_w1', 'cust_w2', 'cus_w3', 'cus_o1']);
    const recent = PAYMENTS.filter((p) => !before.has(p.customer_id ?? ''));
    const early = retentionReport(input({ payments: recent }));
    expect(early.days_of_data).toBe(33);
    expect(early.day_one).toBe(true);
    expect(early.total).toMatchObject({ customers: 12, net_ltv_usd: 1079, churn_30d: 0.333333 });
    expect(early.headline).toBe(
      'Early days (under 60 days of payments): customers from Communities have brought the most revenue so far: $153, 1.7× the average of $90.',
    );
  });

  it('has no headline under 10 customers', () => {
    const early = retentionReport(input({ range: { from: '2026-03-01', to: '2026-03-10', timezone: TZ } }));
    expect(early.total.customers).toBe(7);
    expect(early.headline).toBeNull();
  });

  it('does not count a payment refunded in full as a sign of paying (recency)', () => {
    const payments = [
      pay('lemonsqueezy', 'cust_r', '2026-02-01T10:00:00Z', 2000, { touch: CHATGPT }),
      pay('lemonsqueezy', 'cust_r', '2026-03-01T10:00:00Z', 2000, {
        touch: CHATGPT,
        is_renewal: true,
        refunded: 2000,
        status: 'refunded',
      }),
    ];
    // Period 28 days + 7: the last payment kept is 60 days old, so churned; the refunded one (32 days) does not count.
    const r = retentionReport(
      input({
        payments,
        customers: [customer('lemonsqueezy', 'cust_r')],
        range: { from: '2026-02-01', to: '2026-02-28', timezone: TZ },
      }),
    );
    expect(r.total).toEqual(group(null, 'All customers', false, [1, 0, 20, 20, 20, 20, 1, 1, 1, 1, 1, null]));
  });

  it('gives an empty report for a site without payments', () => {
    const empty = retentionReport(input({ customers: [], payments: [] }));
    expect(retentionResponse.parse(empty)).toEqual(empty);
    expect(empty).toMatchObject({
      days_of_data: 0,
      day_one: true,
      headline: null,
      channels: [],
      referrers: [],
      campaigns: [],
      status_sources: [],
    });
    expect(empty.total).toEqual(
      group(null, 'All customers', false, [0, 0, 0, 0, 0, null, null, 0, 0, null, null, null]),
    );
  });
});

describe('retentionHeadline thresholds', () => {
  const g = (label: string, customers: number, net: number, unattributed = false): RetentionGroup =>
    group(unattributed ? null : label, label, unattributed, [
      customers,
      0,
      0,
      0,
      net,
      net / customers,
      0,
      0,
      0,
      null,
      null,
      null,
    ]);
  const total = g('All customers', 12, 1200);

  it('names the best attributed channel with at least 3 customers', () => {
    expect(
      retentionHeadline(total, [g('Search', 3, 600), g('Social', 2, 500), g('Unattributed', 3, 1000, true)], false),
    ).toBe('Customers from Search have the highest average LTV: $200, 2.0× the average of $100.');
  });

  it.each([
    ['under 10 customers in total', g('All customers', 9, 900), [g('Search', 3, 600)]],
    ['no attributed channel with 3 customers', total, [g('Search', 2, 600), g('Unattributed', 5, 500, true)]],
    ['no channel 10% above the average', total, [g('Search', 4, 430), g('AI', 8, 770)]],
    ['no revenue', g('All customers', 12, 0), [g('Search', 12, 0)]],
  ])('is null with %s', (_name, t, channels) => {
    expect(retentionHeadline(t, channels, false)).toBeNull();
  });

  it('shows small averages with cents', () => {
    expect(retentionHeadline(g('All customers', 10, 40), [g('Email', 4, 30)], false)).toBe(
      'Customers from Email have the highest average LTV: $7.50, 1.9× the average of $4.00.',
    );
  });
});
