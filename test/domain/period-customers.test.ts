import { describe, expect, it } from 'vitest';
import { dayCustomers, mergeCustomers, type Contribution } from '../../lambdas/domain/payments/contribution.js';
import { EXACT_LIMIT } from '../../lambdas/domain/visitor-sketch.js';

/** A counted payment of payer `customer`, credited to a visit of `touchDay`. */
const paid = (customer: string, touchDay: string): Contribution => ({
  key: `stripe:pi_${customer}_${touchDay}`,
  rev: 1,
  ts: Date.UTC(2026, 2, 2),
  day: '2026-03-02',
  hour: '2026-03-02T00',
  cents: 100,
  customer,
  touch_day: touchDay,
  failed: false,
  refunded: false,
  dims: null,
});
const payers = (n: number, touchDay: string, from = 0) =>
  Array.from({ length: n }, (_, i) => paid(`c${from + i}`, touchDay));

/**
 * A period's converted payers stay exact while they hold at most `EXACT_LIMIT` touch days in all,
 * then become a sketch (`docs/data-model.md`, PAYMENT_CUSTOMERS): the count of days held is kept
 * as payers are added, not summed again for each, and must still switch at the limit exactly.
 */
describe('touched payers of a period', () => {
  it('a day switches to a sketch past EXACT_LIMIT payers, not at it', () => {
    expect(dayCustomers(payers(EXACT_LIMIT, '2026-03-01')).touched.kind).toBe('exact');
    expect(dayCustomers(payers(EXACT_LIMIT + 1, '2026-03-01')).touched.kind).toBe('sketch');
  });

  it('a month counts each payer touch day once, over its days', () => {
    const half = EXACT_LIMIT / 2;
    // The same payers touched on the same day, paying in two days of the month: 3/4 of EXACT_LIMIT days, not 3/2.
    const most = (EXACT_LIMIT * 3) / 4;
    const same = mergeCustomers([dayCustomers(payers(most, '2026-03-01')), dayCustomers(payers(most, '2026-03-01'))]);
    expect(same.touched.kind).toBe('exact');
    // The same payers, another touch day each: EXACT_LIMIT days, then one more.
    const two = [dayCustomers(payers(half, '2026-03-01')), dayCustomers(payers(half, '2026-03-02'))];
    expect(mergeCustomers(two).touched.kind).toBe('exact');
    const over = mergeCustomers([...two, dayCustomers([paid('c0', '2026-03-03')])]);
    expect(over.touched.kind).toBe('sketch');
  });
});
