import { describe, expect, it } from 'vitest';
import {
  COHORT_KEYS_PER_ITEM,
  NONE,
  OPEN_ENDED,
  OTHER,
  UNATTRIBUTED,
  cohortOf,
  dayCohort,
  keptFrom,
  mergeCohorts,
  monthCohort,
  payerSummary,
  type CohortCounts,
  type GroupValues,
  type PayerPayment,
  type PayerSummary,
} from '../../lambdas/domain/reports/cohorts.js';
import type { SubscriptionState } from '../../lambdas/domain/payments/customer.js';

/**
 * Retention's per-payer and per-cohort rules (`docs/retention.md`, "Still paying" and "How it is
 * computed"), case by case: the payer summary, a day's cohort from its members, merging cohorts.
 */
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 2, 1, 12);
const TZ = 'UTC';
const G: GroupValues = ['Search', 'www.google.com', null];

const pay = (day: number, over: Partial<PayerPayment> = {}): PayerPayment => ({
  key: `stripe:pi_${day}`,
  ts: T0 + day * DAY,
  gross: 1000,
  net: 1000,
  refunded: false,
  full: false,
  renewal: false,
  sub: false,
  g: null,
  ...over,
});
const status = (paying: boolean): SubscriptionState => ({ status: paying ? 'active' : 'canceled', paying, ts: T0 });
const dayOf = (offset: number) => new Date(T0 + offset * DAY).toISOString().slice(0, 10);

describe('payerSummary', () => {
  it('is null without a countable payment', () => {
    expect(payerSummary([], [status(true)], TZ)).toBeNull();
  });

  it.each<[string, PayerPayment[], SubscriptionState[], boolean, string | null]>([
    ['a one-off buyer is neither judged nor paying', [pay(0)], [], false, null],
    [
      'a renewal alone: one default period of 31 days plus 7 of grace',
      [pay(0, { renewal: true })],
      [],
      true,
      dayOf(38),
    ],
    ['a subscription id alone: the same', [pay(0, { sub: true })], [], true, dayOf(38)],
    ['two payments 30 days apart: that period from the latest', [pay(0), pay(30)], [], true, dayOf(67)],
    ['the median interval of three gaps', [pay(0), pay(10), pay(30), pay(70)], [], true, dayOf(97)],
    ['the mean of the middle gaps when even', [pay(0), pay(10), pay(40)], [], true, dayOf(67)],
    ['a period under 7 days is 7', [pay(0), pay(1), pay(2)], [], true, dayOf(16)],
    ['a period over 366 days is 366', [pay(0), pay(400)], [], true, dayOf(773)],
    ['the latest payment refunded in full does not extend it', [pay(0), pay(30, { full: true })], [], true, dayOf(37)],
    ['every payment refunded in full: not paying', [pay(0, { full: true, renewal: true })], [], true, null],
    ['a paying status: open-ended, even for one payment', [pay(0)], [status(false), status(true)], true, OPEN_ENDED],
    ['statuses none paying: churned whatever the payments', [pay(0), pay(30)], [status(false)], true, null],
  ])('%s', (_, entries, statuses, judged, until) => {
    expect(payerSummary(entries, statuses, TZ)).toMatchObject({ judged, until });
  });

  it('takes the first payment by time (then key) for the day, the group and the first net; sums net and refunds', () => {
    const entries = [
      pay(5, { net: 700, refunded: true, g: ['Email', null, 'spring'] }),
      pay(0, { key: 'stripe:pi_b', net: 900, gross: 1000, g: ['Direct', null, null] }),
      pay(0, { key: 'stripe:pi_a', net: 400, gross: 500, g: G }),
    ];
    expect(payerSummary(entries, [], TZ)).toEqual({
      day: dayOf(0),
      g: G,
      first: 400,
      net: 2000,
      refunded: 100 + 100 + 300,
      refund: true,
      judged: true,
      until: dayOf(5 + 7 + 7),
    });
  });

  it('takes the first payment local day: 03-01 03:00Z is February in New York', () => {
    const summary = payerSummary([{ ...pay(0), ts: Date.UTC(2026, 2, 1, 3) }], [], 'America/New_York');
    expect(summary?.day).toBe('2026-02-28');
  });
});

const member = (over: Partial<PayerSummary>): PayerSummary => ({
  day: '2026-05-01',
  g: G,
  first: 1000,
  net: 1000,
  refunded: 0,
  refund: false,
  judged: false,
  until: null,
  ...over,
});
const counts = (over: Partial<CohortCounts>): CohortCounts => ({
  customers: 1,
  judged: 0,
  refunds: 0,
  first: 1000,
  net: 1000,
  refunded: 0,
  until: {},
  ...over,
});

describe('cohortOf: a set of payers counted per group', () => {
  const members = [
    member({ judged: true, until: OPEN_ENDED, net: 3000, refunded: 500, refund: true }),
    member({ judged: true, until: '2026-05-20', g: ['Search', 'www.bing.com', 'spring'] }),
    member({ g: null, first: 200, net: 200 }),
    member({ g: ['Direct', null, ''], judged: true, until: '2026-04-30' }),
  ];
  it.each<[string, 'channels' | 'referrers', string, Record<string, CohortCounts>]>([
    [
      'each credited channel, Unattributed apart',
      'channels',
      '',
      {
        Search: counts({
          customers: 2,
          judged: 2,
          refunds: 1,
          first: 2000,
          net: 4000,
          refunded: 500,
          until: { [OPEN_ENDED]: 1, '2026-05-20': 1 },
        }),
        Direct: counts({ judged: 1, until: { '2026-04-30': 1 } }),
        [UNATTRIBUTED]: counts({ first: 200, net: 200 }),
      },
    ],
    [
      'a credit without a referrer is (none); "until" days before fromDay dropped',
      'referrers',
      '2026-05-01',
      {
        'www.google.com': counts({ judged: 1, refunds: 1, net: 3000, refunded: 500, until: { [OPEN_ENDED]: 1 } }),
        'www.bing.com': counts({ judged: 1, until: { '2026-05-20': 1 } }),
        [NONE]: counts({ judged: 1 }),
        [UNATTRIBUTED]: counts({ first: 200, net: 200 }),
      },
    ],
  ])('%s (%s from %j)', (_, grouping, fromDay, expected) => {
    expect({ ...cohortOf(members, fromDay)[grouping] }).toEqual(expected);
  });

  it('campaigns: an empty campaign is (none) too', () => {
    expect(Object.keys(cohortOf(members).campaigns).sort()).toEqual([NONE, UNATTRIBUTED, 'spring'].sort());
  });

  const many = Array.from({ length: COHORT_KEYS_PER_ITEM + 2 }, (_, i) =>
    member({ g: ['Referral', `site${String(i).padStart(3, '0')}.com`, `c${i}`] }),
  );
  const crowded = [...many, member({ g: ['Referral', 'site101.com', 'c101'] })];
  it.each<[string, boolean, number, number]>([
    ['unbounded keeps every referrer', false, COHORT_KEYS_PER_ITEM + 2, 0],
    ['bounded folds the fewest beyond the bound into (other), ties larger id first', true, COHORT_KEYS_PER_ITEM, 3],
  ])('%s', (_, bounded, keys, other) => {
    const cohort = cohortOf(crowded, '', bounded);
    for (const grouping of ['referrers', 'campaigns'] as const) {
      expect(Object.keys(cohort[grouping])).toHaveLength(keys);
      expect(cohort[grouping][OTHER]?.customers ?? 0).toBe(other);
    }
    expect(cohort.referrers['site101.com']?.customers).toBe(2);
    expect(cohort.channels.Referral?.customers).toBe(crowded.length);
    expect(cohort.referrers['site097.com']?.customers).toBe(1);
    expect(cohort.referrers['site098.com']?.customers).toBe(bounded ? undefined : 1);
  });
});

describe('mergeCohorts, dayCohort, monthCohort', () => {
  const a = cohortOf([member({ judged: true, until: '2026-06-01' }), member({ g: null })]);
  const b = cohortOf([member({ judged: true, until: '2026-07-01', net: 500, first: 500 })]);

  it.each<[string, string, CohortCounts]>([
    [
      'sums every counter',
      '',
      counts({ customers: 2, judged: 2, first: 1500, net: 1500, until: { '2026-06-01': 1, '2026-07-01': 1 } }),
    ],
    [
      'drops "until" days before fromDay',
      '2026-06-02',
      counts({ customers: 2, judged: 2, first: 1500, net: 1500, until: { '2026-07-01': 1 } }),
    ],
  ])('%s', (_, fromDay, search) => {
    const merged = mergeCohorts([a, b], fromDay);
    expect(merged.channels.Search).toEqual(search);
    expect(merged.channels[UNATTRIBUTED]).toEqual(counts({}));
  });

  it('a day: its members bounded, its payers counted; a month: its days merged, their payers summed', () => {
    const crowded = Array.from({ length: COHORT_KEYS_PER_ITEM + 1 }, (_, i) =>
      member({ g: ['Referral', `r${i}`, null], judged: true, until: i % 2 ? '2026-05-01' : '2026-05-09' }),
    );
    const day = dayCohort(crowded, '2026-05-05');
    expect(day.payers).toBe(COHORT_KEYS_PER_ITEM + 1);
    expect(Object.keys(day.cohort.referrers)).toHaveLength(COHORT_KEYS_PER_ITEM);
    expect(day.cohort.channels.Referral?.until).toEqual({ '2026-05-09': 51 });

    const other = dayCohort([member({ g: ['Referral', 'x', null] })], '');
    const month = monthCohort([day, other], '2026-05-05');
    expect(month.payers).toBe(COHORT_KEYS_PER_ITEM + 2);
    expect(month.cohort.channels.Referral?.customers).toBe(COHORT_KEYS_PER_ITEM + 2);
    expect(Object.keys(month.cohort.referrers)).toHaveLength(COHORT_KEYS_PER_ITEM);
  });

  it.each<[number | undefined, string, string]>([
    [undefined, 'UTC', ''],
    [Date.UTC(2026, 5, 30, 2), 'UTC', '2026-06-30'],
    [Date.UTC(2026, 5, 30, 2), 'America/New_York', '2026-06-29'],
  ])('keptFrom(%s, %s) is %j', (now, tz, day) => {
    expect(keptFrom(now, tz)).toBe(day);
  });
});
