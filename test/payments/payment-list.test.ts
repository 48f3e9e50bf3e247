import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { PaymentListStore } from '../../lambdas/adapters/dynamo/payments/payment-list-store.js';
import { PaymentListRecompute } from '../../lambdas/adapters/dynamo/payments/payment-list-recompute.js';
import { CapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';
import { emptyPayment, type Payment } from '../../lambdas/domain/payments/payment.js';
import { LIST_CLASSES, classesOf, contributionOf, type ListClass } from '../../lambdas/domain/payments/contribution.js';
import { listPayments, type ReportDeps } from '../../lambdas/services/reports.js';
import { applyProviderFacts, recreditVisitors, type PaymentDeps } from '../../lambdas/services/payments.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { propertyRuns } from '../support/suite.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

const DAY = 86_400_000;
const TZ = 'America/New_York';
const NOW = Date.UTC(2026, 5, 30, 12);
const rate = (currency: string) => (currency === 'EUR' ? 1.1 : null);
const seed = Number(process.env.FOOTFALL_SEED ?? Date.now() % 2 ** 31);

/** 600 payments over three months: attributed or not, refunded, failed, several on the same millisecond. */
function generated(): Payment[] {
  let s = 7;
  const random = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: 600 }, (_, i) => {
    const ts = Date.UTC(2026, 3, 1) + Math.floor(random() * 90) * DAY + (i % 7 === 0 ? 0 : Math.floor(random() * DAY));
    const attributed = random() < 0.6;
    return {
      ...emptyPayment('list.test', 'stripe', `pi_${String(i).padStart(4, '0')}`),
      ts,
      amount: 1000 + i,
      currency: i % 3 === 0 ? 'EUR' : 'USD',
      refunded: random() < 0.15 ? 500 : 0,
      status: random() < 0.05 ? 'failed' : 'paid',
      customer_id: `cus_${i % 40}`,
      visitor: attributed ? `visitor-${i}` : null,
      touch: attributed
        ? {
            session_id: `s${i}`,
            ts: ts - 2 * DAY,
            channel: 'Search',
            referrer_host: null,
            source: null,
            campaign: null,
            landing_page: '/',
            country: null,
            device: 'Desktop',
          }
        : null,
      rev: 1,
    };
  });
}

describe('payments list: pages read by counters and Query, never the whole range', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let payments: Payment[];
  const meter = new CapacityMeter();

  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ domain: 'list.test', timezone: TZ }], { capacityMeter: meter }));
    payments = generated();
    await dynamoPaymentStores(conn).bulk.bulkLoad('list.test', TZ, payments, rate);
  }, 120_000);
  afterAll(async () => close());

  it('gives the same pages as sorting every payment, for any filter, offset and limit', async () => {
    const config = new DynamoConfigStore(conn);
    const expected = (filter: ListClass) =>
      payments
        .flatMap((p) => {
          const c = contributionOf(p, TZ, rate);
          return c && classesOf(c).includes(filter) ? [c] : [];
        })
        .sort((a, b) => b.ts - a.ts || (a.key < b.key ? 1 : -1))
        .map((c) => c.key.slice('stripe:'.length));
    console.log(`payments list property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...LIST_CLASSES),
        fc.integer({ min: 0, max: 620 }),
        fc.integer({ min: 1, max: 200 }),
        async (filter, offset, limit) => {
          const store = new DynamoReportStore(conn);
          const deps: ReportDeps = { sites: config, store, rates: async () => rate, clock: () => NOW };
          const { result: page, total } = await meter.measure(() =>
            listPayments(deps, 'acme', 'list.test', { from: '2026-04-01', to: '2026-06-30' }, filter, limit, offset),
          );
          const all = expected(filter);
          expect(page.total).toBe(all.length);
          expect(page.rows.map((r) => r.provider_payment_id)).toEqual(all.slice(offset, offset + limit));
          // The site (1), its first day (2), its imported days (1), counters of the range (3 Queries at most), one
          // month by day, the list of each month the page spans (two Queries each for `all`), two BatchGets.
          expect(total.requests, `${filter} ${offset} ${limit}`).toBeLessThanOrEqual(1 + 2 + 1 + 3 + 1 + 2 * 3 + 2);
        },
      ),
      { seed, numRuns: propertyRuns(8, 25) },
    );
  }, 120_000);

  it('holds one list item per payment and class, each day and month counted', async () => {
    const list = new PaymentListStore(conn);
    const [april] = await list.periods('list.test', 'M', '2026-04', '2026-04');
    const inApril = payments
      .flatMap((p) => contributionOf(p, TZ, rate) ?? [])
      .filter((c) => c.day.startsWith('2026-04'));
    expect(april?.totals.listed).toEqual({
      all: inApril.length,
      attributed: inApril.filter((c) => c.touch_day !== null).length,
      unattributed: inApril.filter((c) => c.touch_day === null).length,
      refunded: inApril.filter((c) => c.refunded).length,
    });
    expect(april?.totals.payments).toBe(inApril.filter((c) => !c.failed).length);
    expect(april?.totals.cents).toBe(inApril.filter((c) => !c.failed).reduce((n, c) => n + c.cents, 0));
  });
});

describe('payments list: a payment that moves leaves nothing behind', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let deps: PaymentDeps;
  let site: SiteConfig;

  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ domain: 'move.test', timezone: 'UTC' }]));
    site = (await new DynamoConfigStore(conn).getSite('move.test'))!;
    deps = { ...dynamoPaymentDeps(conn, () => NOW), rates: async () => rate };
  });
  afterAll(async () => close());

  const listItems = async (pk: string) =>
    (
      await conn.doc.send(
        new QueryCommand({
          TableName: conn.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
        }),
      )
    ).Items ?? [];
  const fact = (f: Partial<PaymentFact>): PaymentFact => ({ provider: 'stripe', id: 'pi_m', aliases: [], ...f });

  it("moves from Unattributed to attributed when its visit lands, to its real time from a refund's stand-in, and into the refunded list", async () => {
    // A refund first: the payment shows at the refund's stand-in time, Unattributed.
    await applyProviderFacts(deps, site, {
      event_id: 'e',
      event_type: 't',
      payments: [
        fact({ refunded: 300, fallback: { ts: NOW - DAY, amount: 1000 }, currency: 'USD', visitor_id: 'visitor-move' }),
      ],
      subscriptions: [],
      customers: [],
    });
    expect((await listItems('PL#move.test#2026-06')).map((i) => i.sk)).toEqual([
      `U#2026-06-29#${NOW - DAY}#stripe:pi_m`,
    ]);
    // The payment itself, with its real time.
    await applyProviderFacts(deps, site, {
      event_id: 'e',
      event_type: 't',
      payments: [fact({ ts: NOW - 3 * DAY, amount: 1000, status: 'paid' })],
      subscriptions: [],
      customers: [],
    });
    expect((await listItems('PL#move.test#2026-06')).map((i) => i.sk)).toEqual([
      `U#2026-06-27#${NOW - 3 * DAY}#stripe:pi_m`,
    ]);
    // Its visit arrives; the sessionizer's re-credit moves it to the attributed list.
    const events = [
      visitEventOf(
        trackedEvent({
          event_id: 'mv-1',
          site: 'move.test',
          visitor_id: 'visitor-move',
          ts: NOW - 4 * DAY,
          channel: 'Search',
        }),
      ),
    ];
    await new DynamoVisitStore(conn).writeVisits(buildVisits('move.test', 'visitor-move', events), []);
    await recreditVisitors(deps, site, [{ visitor: 'visitor-move' }]);
    const items = await listItems('PL#move.test#2026-06');
    expect(items.map((i) => i.sk)).toEqual([`A#2026-06-27#${NOW - 3 * DAY}#stripe:pi_m`]);
    expect(items[0]).not.toHaveProperty('pending');
    expect((await listItems('PLR#move.test#2026-06')).map((i) => i.sk)).toEqual([
      `2026-06-27#${NOW - 3 * DAY}#stripe:pi_m`,
    ]);
    const list = new PaymentListStore(conn);
    const days = await list.periods('move.test', 'D', '2026-06-01', '2026-06-30');
    expect(
      days.map((d) => [d.period, d.totals.listed.all, d.totals.listed.attributed, d.totals.listed.refunded]),
    ).toEqual([
      ['2026-06-27', 1, 1, 1],
      ['2026-06-29', 0, 0, 0],
    ]);
    const [june] = await list.periods('move.test', 'M', '2026-06', '2026-06');
    expect(june?.totals).toMatchObject({
      listed: { all: 1, attributed: 1, unattributed: 0, refunded: 1 },
      payments: 1,
      cents: 700,
      touch: { '2026-06-26': [1, 700] },
    });
    expect(await deps.payments.getPayment('move.test', 'stripe', 'pi_m')).not.toHaveProperty('unlisted');
  });

  it('finishes the recomputes of a sync that crashed half way when the change is delivered again', async () => {
    const f = fact({ id: 'pi_crash', ts: NOW - 10 * DAY, amount: 2000, currency: 'USD', status: 'paid' });
    const list = PaymentListRecompute.prototype;
    const original = list.recomputeMonth;
    list.recomputeMonth = async () => {
      throw new Error('crash');
    };
    await expect(
      applyProviderFacts(deps, site, {
        event_id: 'e',
        event_type: 't',
        payments: [f],
        subscriptions: [],
        customers: [],
      }),
    ).rejects.toThrow('crash');
    list.recomputeMonth = original;
    const store = new PaymentListStore(conn);
    expect((await store.periods('move.test', 'M', '2026-06', '2026-06'))[0]?.totals.cents).toBe(700);
    // The provider retries the webhook: nothing about the payment changed, yet the month is finished.
    await applyProviderFacts(deps, site, {
      event_id: 'e',
      event_type: 't',
      payments: [f],
      subscriptions: [],
      customers: [],
    });
    expect((await store.periods('move.test', 'M', '2026-06', '2026-06'))[0]?.totals).toMatchObject({
      payments: 2,
      cents: 2700,
    });
    expect((await listItems('PL#move.test#2026-06')).every((i) => i.pending === undefined)).toBe(true);
  });
});
