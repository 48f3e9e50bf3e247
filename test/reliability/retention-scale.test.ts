import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { CapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { cohortItems, cohortPk } from '../../lambdas/adapters/dynamo/payments/cohort-items.js';
import { batchWrite } from '../../lambdas/adapters/dynamo/batch.js';
import { itemBytes } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { localDay, resolveRange } from '../../lambdas/domain/range.js';
import {
  dayCohort,
  monthCohort,
  payerSummary,
  type PeriodCohort,
  type GroupValues,
  type PayerPayment,
  type PayerSummary,
} from '../../lambdas/domain/reports/cohorts.js';
import { retention } from '../../lambdas/services/reports.js';
import { memoryTable } from '../support/dynamo.js';

/**
 * The report budget at scale (`docs/benchmarks.md` "Budgets"): the retention report of a site with 100,000 payments
 * a month reads at most 25 requests and 4 MB, whatever the range, counted at
 * the SDK client (CapacityMeter: every request, the site and range lookups
 * included). The site is a year of payers — 400 new customers a day, each
 * renewing every 30 days until it cancels (6% a month) or today, 3% of
 * payments refunded in full, 10% unattributed, referrers from a long tail of
 * 3,000 hosts and campaigns from 800 — summarized by `payerSummary` and
 * rolled up by `dayCohort` / `monthCohort` exactly as the payment service
 * recomputes them; only the COHORT items the report reads are written (the
 * per-payer items below them are not read by the report). Item sizes are read
 * back from dynalite.
 */
const SITE = 'big.test';
const TZ = 'Europe/Berlin';
const NOW = Date.UTC(2026, 10, 23, 12);
const DAY = 86_400_000;
const NEW_PER_DAY = 400;
const CHANNELS = ['Search', 'Social', 'Communities', 'Email', 'AI', 'Referral', 'Paid Search', 'Video', 'Affiliates'];

function generate(): { members: Map<string, PayerSummary[]>; payments: number; lastMonthPayments: number } {
  let s = 42;
  const random = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  // Zipf-like rank: small ranks far more often.
  const zipf = (n: number) => Math.min(n, Math.floor(1 / (random() * (1 - 1 / n) + 1 / n)));
  const today = localDay(NOW, TZ);
  const members = new Map<string, PayerSummary[]>();
  let payments = 0;
  let lastMonthPayments = 0;
  const start = NOW - 365 * DAY;
  for (let d = 0; d < 365; d++) {
    for (let i = 0; i < NEW_PER_DAY; i++) {
      const first = start + d * DAY + Math.floor(random() * DAY);
      const attributed = random() > 0.1;
      const g: GroupValues | null = attributed
        ? [
            CHANNELS[Math.floor(random() * CHANNELS.length)] as string,
            random() < 0.7 ? `host-${zipf(3000)}.example` : null,
            random() < 0.4 ? `campaign-${zipf(800)}` : null,
          ]
        : null;
      const entries: PayerPayment[] = [];
      for (let k = 0, ts = first; ts <= NOW; k++, ts += 30 * DAY) {
        const full = random() < 0.03;
        entries.push({
          key: `stripe:pi_${d}_${i}_${k}`,
          ts,
          gross: 4900,
          net: full ? 0 : 4900,
          refunded: full,
          full,
          renewal: k > 0,
          sub: true,
          g,
        });
        payments++;
        if (ts > NOW - 30 * DAY) lastMonthPayments++;
        if (random() < 0.06) break;
      }
      const summary = payerSummary(entries, [], TZ) as PayerSummary;
      members.set(summary.day, [...(members.get(summary.day) ?? []), summary]);
    }
  }
  expect(today).toBe('2026-11-23');
  return { members, payments, lastMonthPayments };
}

describe('retention at 100,000 payments a month: ≤ 25 requests and ≤ 4 MB whatever the range', () => {
  const meter = new CapacityMeter();
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let site: { members: Map<string, PayerSummary[]>; payments: number; lastMonthPayments: number };

  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ domain: SITE, timezone: TZ }], { capacityMeter: meter, maxAttempts: 3 }));
    site = generate();
    const today = localDay(NOW, TZ);
    const items: Array<Record<string, unknown>> = [];
    const byMonth = new Map<string, PeriodCohort[]>();
    for (const [day, members] of site.members) {
      // As CohortRecompute.day: bounded, "paying until" days before the recompute's day dropped.
      const cohort = dayCohort(members, today);
      items.push(...cohortItems(SITE, `D#${day}`, cohort.cohort, cohort.payers, 1));
      byMonth.set(day.slice(0, 7), [...(byMonth.get(day.slice(0, 7)) ?? []), cohort]);
    }
    for (const [month, days] of byMonth) {
      const cohort = monthCohort(days, today);
      items.push(...cohortItems(SITE, `M#${month}`, cohort.cohort, cohort.payers, 1));
    }
    await batchWrite(
      conn,
      items.map((Item) => ({ PutRequest: { Item } })),
    );
    meter.reset();
  }, 300_000);
  afterAll(async () => close());

  it("every cohort item stays far under DynamoDB's 400 KB", async () => {
    const sizes: number[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await conn.doc.send(
        new QueryCommand({
          TableName: conn.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': cohortPk(SITE) },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) sizes.push(itemBytes(item));
      start = page.LastEvaluatedKey;
    } while (start);
    const max = Math.max(...sizes);
    console.log(
      `retention scale: ${site.payments} payments (${site.lastMonthPayments} in the last 30 days), ${[...site.members.values()].reduce((n, m) => n + m.length, 0)} customers; ${sizes.length} cohort items, largest ${max} B`,
    );
    expect(site.lastMonthPayments).toBeGreaterThan(90_000);
    expect(max).toBeLessThan(400 * 1024);
  });

  it.each([
    { range: '12m' },
    { range: '90d' },
    { range: '30d' },
    { range: '7d' },
    { range: 'today' },
    { from: '2026-02-14', to: '2026-10-03' },
  ])('answers %o within budget, with every customer of the range', async (query) => {
    const deps = {
      sites: new DynamoConfigStore(conn),
      store: new DynamoReportStore(conn),
      rates: async () => () => 1,
      clock: () => NOW,
    };
    const { result, total } = await meter.measure(() => retention(deps, 'acme', SITE, query));
    const { range } = resolveRange(query, { now: NOW, timezone: TZ, firstDay: null });
    const today = localDay(NOW, TZ);
    let customers = 0;
    let stillPaying = 0;
    for (const [day, members] of site.members) {
      if (day < range.from || day > range.to) continue;
      customers += members.length;
      stillPaying += members.filter((m) => m.until !== null && m.until >= today).length;
    }
    console.log(
      `retention scale ${JSON.stringify(query)}: ${total.requests} requests, ${total.bytesReceived} B received, ${total.rcu} RRU; ${result.total.customers} customers, ${result.referrers.length} referrer groups`,
    );
    expect(result.total.customers).toBe(customers);
    expect(result.total.still_paying).toBe(stillPaying);
    expect(total.requests).toBeLessThanOrEqual(25);
    expect(total.bytesReceived).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});
