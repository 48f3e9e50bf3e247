import { describe, expect, it } from 'vitest';
import { distinctPagesDay, paymentsMonth, visitorsYear } from '../support/scale-items.js';

/**
 * Storage that scales (`docs/benchmarks.md` "Budgets"), at small sizes (minutes on two
 * cores, so in the reliability suite beside the full sizes:
 * 100,000 payments in a month, 100,000 distinct pages and referrers in a
 * day, `scale-items.test.ts`). The long visits (a visit of 50,000 events, a
 * visitor with 200,000 events in one batch) are
 * `test/services/sessionize-long-visits.test.ts`.
 */
// Deterministic, but minutes on a loaded 2-core machine: the timeouts are for that, not for a slow path.
describe('storage that scales, small: every write succeeds, every report answers correctly within budget, every item within its bound', () => {
  it('a month of 1,000 payments (bulk load and webhooks) over 1,000 distinct landing pages and referrers', async () => {
    const { costs, items } = await paymentsMonth({ payments: 1000, webhook: 5, values: 1000 });
    console.log('payments month, small:', JSON.stringify({ costs, items }));
    expect(items.PAYMENT_DIMENSION?.items).toBeGreaterThan(0);
  }, 600_000);

  it('a day of 3,000 distinct 300-character page paths and referrers through the sessionizer and compactor: buckets split into parts', async () => {
    const { costs, items } = await distinctPagesDay({ distinct: 3000, pathChars: 300, batch: 500, compactEvery: 4 });
    console.log('distinct pages day, small:', JSON.stringify({ costs, items }));
    // 3,000 × ~310 bytes of page values in 8 buckets a period: ~116 KB a bucket, so several parts each.
    expect(items['ROLLUP (dimension)']?.max).toBeGreaterThan(24 * 1024);
  }, 600_000);

  it('a year of 1,100 visitors a day (HyperLogLog past 1,000): the series by day reads counts, not visitor sets', async () => {
    const { costs, items } = await visitorsYear({ perDay: 1100 });
    console.log('visitors year, small:', JSON.stringify({ costs, items }));
    // 365 counter items of ~200 B, not 365 sets (the bench year read 8.62 MB here).
    expect(costs['timeseries 12m by day']?.bytes).toBeLessThan(200 * 1024);
    expect(items.ROLLUP_COUNTS?.items).toBe(365 + 13);
  }, 600_000);
});
