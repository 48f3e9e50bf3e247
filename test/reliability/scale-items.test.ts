import { describe, expect, it } from 'vitest';
import { distinctPagesDay, paymentsMonth, visitorsYear } from '../support/scale-items.js';

/**
 * Storage that scales (`docs/benchmarks.md` "Budgets") at full sizes (the small
 * version: `scale-items-small.test.ts`): a site
 * with 100,000 payments in one month (bulk load, plus payments settled
 * through the webhook path), and a day with 100,000 distinct page paths and
 * referrers through the sessionizer and compactor. Every write succeeds,
 * every report answers as a direct computation does within 25 requests and
 * 4 MB counted at the SDK client, and every item read back from dynalite is
 * within its type's bound (`docs/data-model.md`).
 */
const long = process.env.FOOTFALL_RELIABILITY === 'long';
/** The sizes in the long form; a twentieth in the short form that runs on every landing. */
const PAYMENTS = long ? 100_000 : 5_000;
const DISTINCT = long ? 100_000 : 5_000;
/** 1M visits a month: at most ~33,000 distinct visitors a day. */
const PER_DAY = long ? 33_000 : 1_650;

describe('storage that scales at full sizes', () => {
  it(`a month of ${PAYMENTS} payments over ${PAYMENTS / 5} distinct landing pages and referrers`, async () => {
    const { costs, items } = await paymentsMonth({ payments: PAYMENTS, webhook: 20, values: PAYMENTS / 5 });
    console.log(`[reliability] ${JSON.stringify({ check: 'payments month', payments: PAYMENTS, costs, items })}`);
    expect(items.PAYMENT_LIST?.items).toBe(PAYMENTS + 20);
  }, 3_600_000);

  it(`a day of ${DISTINCT} distinct page paths and referrers through the sessionizer and compactor`, async () => {
    const { costs, items } = await distinctPagesDay({
      distinct: DISTINCT,
      pathChars: 20,
      batch: 2000,
      compactEvery: 7,
    });
    console.log(`[reliability] ${JSON.stringify({ check: 'distinct pages day', distinct: DISTINCT, costs, items })}`);
    expect(items['ROLLUP (dimension)']?.items).toBeGreaterThan(DISTINCT / 1000);
  }, 3_600_000);

  it(`a year of ${PER_DAY} visitors a day: time series and overviews within budget`, async () => {
    const { costs, items } = await visitorsYear({ perDay: PER_DAY });
    console.log(`[reliability] ${JSON.stringify({ check: 'visitors year', perDay: PER_DAY, costs, items })}`);
    expect(items.ROLLUP_COUNTS?.items).toBe(365 + 13);
  }, 3_600_000);
});
