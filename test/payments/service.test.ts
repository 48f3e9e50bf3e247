import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dynamoPaymentListLayout } from '../../lambdas/adapters/dynamo/payments/payment-list-layout.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { PaymentListStore } from '../../lambdas/adapters/dynamo/payments/payment-list-store.js';
import { PaymentListPositions } from '../../lambdas/adapters/dynamo/payments/payment-list-positions.js';
import { customerHash } from '../../lambdas/domain/payments/contribution.js';
import {
  applyProviderFacts,
  recreditPending,
  recreditSite,
  settlePayment,
  type PaymentDeps,
} from '../../lambdas/services/payments.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { PaymentFact, ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 30, 12);

const facts = (...payments: PaymentFact[]): ProviderFacts => ({
  event_id: 'evt',
  event_type: 'test',
  payments,
  subscriptions: [],
  customers: [],
});
const stripe = (fact: Partial<PaymentFact> & { id: string }): PaymentFact => ({
  provider: 'stripe',
  aliases: [],
  ...fact,
});

describe('payments: merging, crediting, renewals, refunds, re-crediting', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let deps: PaymentDeps;
  let site: SiteConfig;
  let now = NOW;

  async function visitsOf(visitor: string, list: Array<[number, string]>) {
    const events = list.map(([daysBefore, channel], i) =>
      visitEventOf(
        trackedEvent({
          event_id: `${visitor}-${i}`,
          visitor_id: visitor,
          ts: NOW - daysBefore * DAY,
          channel,
          path: `/${channel.toLowerCase()}`,
        }),
      ),
    );
    await new DynamoVisitStore(conn).writeVisits(buildVisits('example.com', visitor, events), []);
  }
  const store = () => dynamoPaymentStores(conn);
  const get = (id: string) => store().payments.getPayment('example.com', 'stripe', id);

  beforeEach(async () => {
    ({ conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]));
    site = (await new DynamoConfigStore(conn).getSite('example.com'))!;
    now = NOW;
    deps = {
      ...store(),
      list: dynamoPaymentListLayout,
      visits: new DynamoVisitStore(conn),
      rates: async () => (currency) => ({ EUR: 1.1, GBP: 1.25 })[currency] ?? null,
      clock: () => now,
    };
    await visitsOf('visitor-aaaa', [
      [10, 'Search'],
      [5, 'AI'],
      [1, 'Direct'],
    ]);
  });
  afterEach(async () => close());

  it('merges the events of one purchase into one payment, and a redelivery changes nothing', async () => {
    await applyProviderFacts(
      deps,
      site,
      facts(stripe({ id: 'pi_1', aliases: ['cs_1'], visitor_id: 'visitor-aaaa', customer_id: 'cus_1' })),
    );
    await applyProviderFacts(
      deps,
      site,
      facts(stripe({ id: 'pi_1', aliases: ['ch_1'], ts: NOW, amount: 5000, currency: 'USD', status: 'paid' })),
    );
    // An event that only knows the charge id still finds the payment.
    await applyProviderFacts(deps, site, facts(stripe({ id: 'ch_1', aliases: [], status: 'paid' })));
    const payment = await get('pi_1');
    expect(payment).toMatchObject({
      provider_payment_id: 'pi_1',
      aliases: ['ch_1', 'cs_1'],
      ts: NOW,
      amount: 5000,
      currency: 'USD',
      status: 'paid',
      customer_id: 'cus_1',
      visitor: 'visitor-aaaa',
      touch: { channel: 'AI', landing_page: '/ai' },
      first_touch: { channel: 'Search' },
    });
    const rev = payment?.rev;
    await applyProviderFacts(
      deps,
      site,
      facts(stripe({ id: 'pi_1', aliases: ['ch_1'], ts: NOW, amount: 5000, currency: 'USD', status: 'paid' })),
    );
    expect((await get('pi_1'))?.rev).toBe(rev);
    expect(await get('ch_1')).toBeNull();
  });

  it('folds two payments stored apart into one when an event links them', async () => {
    await applyProviderFacts(
      deps,
      site,
      facts(stripe({ id: 'pi_9', ts: NOW, amount: 3000, currency: 'USD', status: 'paid', visitor_id: 'visitor-aaaa' })),
    );
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({
          id: 'in_9',
          ts: NOW,
          amount: 3000,
          currency: 'USD',
          status: 'paid',
          customer_id: 'cus_9',
          is_renewal: false,
        }),
      ),
    );
    expect(await get('in_9')).not.toBeNull();
    // invoice_payment.paid names both.
    await applyProviderFacts(deps, site, facts(stripe({ id: 'in_9', aliases: ['pi_9'] })));
    expect(await get('pi_9')).toBeNull();
    expect(await get('in_9')).toMatchObject({
      aliases: ['pi_9'],
      customer_id: 'cus_9',
      visitor_id: 'visitor-aaaa',
      touch: { channel: 'AI' },
    });
    const listed = await new PaymentListPositions(conn).day('example.com', '2026-06-30');
    expect(listed.map((c) => c.key)).toEqual(['stripe:in_9']);
    expect(listed[0]?.cents).toBe(3000);
    // Later events of either id land on the one payment.
    await applyProviderFacts(deps, site, facts(stripe({ id: 'pi_9', refunded: 1000 })));
    expect(await get('in_9')).toMatchObject({ refunded: 1000 });
    expect(await get('pi_9')).toBeNull();
  });

  it('keeps partial refunds paid, full refunds refunded, and reports net USD in the rollups', async () => {
    const base = stripe({
      id: 'pi_2',
      ts: NOW,
      amount: 10000,
      currency: 'EUR',
      status: 'paid',
      visitor_id: 'visitor-aaaa',
      customer_id: 'cus_2',
    });
    await applyProviderFacts(deps, site, facts(base));
    await applyProviderFacts(deps, site, facts(stripe({ id: 'pi_2', refunded: 2500 })));
    expect(await get('pi_2')).toMatchObject({ status: 'paid', refunded: 2500 });
    const list = new PaymentListStore(conn);
    // 100.00 EUR at 1.1 = 110.00 USD; 75% kept = 82.50 USD.
    expect(await new PaymentListPositions(conn).day('example.com', '2026-06-30')).toEqual([
      {
        key: 'stripe:pi_2',
        rev: 2,
        ts: NOW,
        day: '2026-06-30',
        hour: expect.stringMatching(/^2026-06-30T/),
        cents: 8250,
        customer: customerHash('stripe:cus_2'),
        touch_day: '2026-06-25',
        // The credited visit's id: the payments table of filtered reports joins the visit by it.
        visit: 'visitor-aaaa-1',
        failed: false,
        refunded: true,
        dims: expect.objectContaining({ channel: ['AI'] }),
      },
    ]);
    const [day] = await list.periods('example.com', 'D', '2026-06-30', '2026-06-30');
    expect(day?.totals).toMatchObject({
      listed: { all: 1, attributed: 1, unattributed: 0, refunded: 1 },
      payments: 1,
      cents: 8250,
      touch: { '2026-06-25': [1, 8250] },
    });
    const [month] = await list.periods('example.com', 'M', '2026-06', '2026-06');
    expect(month?.totals).toMatchObject({ listed: { all: 1, refunded: 1 }, payments: 1, cents: 8250 });
    const [channel] = await list.dimension('example.com', 'channel', 'M', '2026-06', '2026-06');
    expect(channel?.values).toEqual({ AI: [1, 8250, [customerHash('stripe:cus_2')]] });
    await applyProviderFacts(deps, site, facts(stripe({ id: 'pi_2', refunded: 10000, status: 'refunded' })));
    expect(await get('pi_2')).toMatchObject({ status: 'refunded', refunded: 10000 });
    // A late "paid" for an earlier attempt does not bring a refunded payment back.
    await applyProviderFacts(deps, site, facts(stripe({ id: 'pi_2', status: 'paid' })));
    expect((await get('pi_2'))?.status).toBe('refunded');
  });

  it("lets renewals without metadata inherit the customer's first attributed visitor and credit", async () => {
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({
          id: 'pi_first',
          ts: NOW,
          amount: 2000,
          currency: 'USD',
          status: 'paid',
          visitor_id: 'visitor-aaaa',
          customer_id: 'cus_3',
        }),
      ),
    );
    now = NOW + 31 * DAY;
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({
          id: 'in_renew',
          ts: NOW + 30 * DAY,
          amount: 2000,
          currency: 'USD',
          status: 'paid',
          customer_id: 'cus_3',
          is_renewal: true,
        }),
      ),
    );
    expect(await get('in_renew')).toMatchObject({
      visitor: 'visitor-aaaa',
      visitor_id: null,
      touch: { channel: 'AI' },
      is_renewal: true,
    });
  });

  it("shows a second visitor's payment under the customer's first attributed visitor", async () => {
    await visitsOf('visitor-bbbb', [[2, 'Email']]);
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({
          id: 'pi_a',
          ts: NOW - DAY,
          amount: 1000,
          currency: 'USD',
          status: 'paid',
          visitor_id: 'visitor-aaaa',
          customer_id: 'cus_4',
        }),
      ),
    );
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({
          id: 'pi_b',
          ts: NOW,
          amount: 1000,
          currency: 'USD',
          status: 'paid',
          visitor_id: 'visitor-bbbb',
          customer_id: 'cus_4',
        }),
      ),
    );
    expect(await get('pi_b')).toMatchObject({ visitor_id: 'visitor-bbbb', visitor: 'visitor-aaaa' });
  });

  it("keeps the credit of the customer's first purchase when a later purchase comes from another visitor", async () => {
    // docs/payments.md "Customers and attribution": a renewal inherits the credit of the customer's first attributed payment.
    await visitsOf('visitor-bbbb', [[2, 'Email']]);
    const purchase = (id: string, ts: number, visitor: string) =>
      stripe({ id, ts, amount: 1000, currency: 'USD', status: 'paid', visitor_id: visitor, customer_id: 'cus_6' });
    // Seven days before NOW the window holds only the Search visit; at NOW the AI visit is the last non-Direct one.
    await applyProviderFacts(deps, site, facts(purchase('pi_one', NOW - 7 * DAY, 'visitor-aaaa')));
    await applyProviderFacts(deps, site, facts(purchase('pi_two', NOW, 'visitor-bbbb')));
    now = NOW + 2 * DAY;
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({
          id: 'in_next',
          ts: NOW + DAY,
          amount: 1000,
          currency: 'USD',
          status: 'paid',
          customer_id: 'cus_6',
          is_renewal: true,
        }),
      ),
    );
    expect(await get('pi_one')).toMatchObject({ visitor: 'visitor-aaaa', touch: { channel: 'Search' } });
    expect(await get('pi_two')).toMatchObject({ visitor: 'visitor-aaaa', touch: { channel: 'AI' } });
    expect(await get('in_next')).toMatchObject({ visitor: 'visitor-aaaa', touch: { channel: 'Search' } });
  });

  it('credits a visit that started exactly lookback_days before the payment, and not a millisecond more', async () => {
    // docs/payments.md: visits that started at most `lookback_days` before the payment count.
    const pay = (id: string, ts: number) =>
      stripe({ id, ts, amount: 500, currency: 'USD', status: 'paid', visitor_id: 'visitor-eeee' });
    await visitsOf('visitor-eeee', [[40, 'Social']]);
    const visitStart = NOW - 40 * DAY;
    await applyProviderFacts(deps, site, facts(pay('pi_edge', visitStart + site.lookback_days * DAY)));
    await applyProviderFacts(deps, site, facts(pay('pi_past', visitStart + site.lookback_days * DAY + 1)));
    expect(site.lookback_days).toBe(30);
    expect((await get('pi_edge'))?.touch).toMatchObject({ channel: 'Social', ts: visitStart });
    expect((await get('pi_past'))?.touch).toBeNull();
  });

  it('credits a payment that arrived before its visit once the visit lands', async () => {
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({ id: 'pi_early', ts: NOW, amount: 900, currency: 'USD', status: 'paid', visitor_id: 'visitor-cccc' }),
      ),
    );
    expect(await get('pi_early')).toMatchObject({ visitor: 'visitor-cccc', touch: null });
    expect(await store().pending.listPending('example.com')).toHaveLength(1);
    await visitsOf('visitor-cccc', [[0.01, 'Social']]);
    expect(await recreditPending(deps, site)).toBe(1);
    expect(await get('pi_early')).toMatchObject({ touch: { channel: 'Social' } });
    expect(await store().pending.listPending('example.com')).toEqual([]);
  });

  it('is Unattributed with no visitor, and stops waiting after a day', async () => {
    await applyProviderFacts(
      deps,
      site,
      facts(stripe({ id: 'pi_anon', ts: NOW, amount: 700, currency: 'USD', status: 'paid' })),
    );
    expect(await get('pi_anon')).toMatchObject({ visitor: null, touch: null, first_touch: null });
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({ id: 'pi_wait', ts: NOW, amount: 700, currency: 'USD', status: 'paid', visitor_id: 'visitor-dddd' }),
      ),
    );
    now = NOW + 2 * DAY;
    await recreditPending(deps, site);
    expect(await store().pending.listPending('example.com')).toEqual([]);
  });

  it('credits every payment again when the model or window changes', async () => {
    await applyProviderFacts(
      deps,
      site,
      facts(stripe({ id: 'pi_m', ts: NOW, amount: 100, currency: 'USD', status: 'paid', visitor_id: 'visitor-aaaa' })),
    );
    expect((await get('pi_m'))?.touch?.channel).toBe('AI');
    for (const [model, channel] of [
      ['first_touch', 'Search'],
      ['last_touch', 'Direct'],
      ['last_non_direct', 'AI'],
    ] as const) {
      site = await new DynamoConfigStore(conn).updateSite('example.com', { attribution: model });
      await recreditSite(deps, site);
      expect((await get('pi_m'))?.touch?.channel, model).toBe(channel);
    }
    site = await new DynamoConfigStore(conn).updateSite('example.com', { lookback_days: 3 });
    await recreditSite(deps, site);
    expect((await get('pi_m'))?.touch?.channel).toBe('Direct');
    const channel = await new PaymentListStore(conn).dimension(
      'example.com',
      'channel',
      'D',
      '2026-06-30',
      '2026-06-30',
    );
    // Only the bucket of the last credit holds the payment; the buckets it left hold nothing.
    expect(channel.flatMap((item) => Object.entries(item.values))).toEqual([
      ['Direct', [1, 100, [customerHash('payment:stripe:pi_m')]]],
    ]);
  });

  it('keeps failed payments out of the dimensions and re-settles idempotently', async () => {
    await applyProviderFacts(
      deps,
      site,
      facts(
        stripe({ id: 'pi_f', ts: NOW, amount: 100, currency: 'USD', status: 'failed', visitor_id: 'visitor-aaaa' }),
      ),
    );
    const [day] = await new PaymentListStore(conn).periods('example.com', 'D', '2026-06-30', '2026-06-30');
    expect(day?.totals).toMatchObject({ listed: { all: 1, attributed: 1 }, payments: 0, cents: 0 });
    const channel = await new PaymentListStore(conn).dimension(
      'example.com',
      'channel',
      'D',
      '2026-06-30',
      '2026-06-30',
    );
    expect(channel.flatMap((item) => Object.entries(item.values))).toEqual([]);
    const again = await settlePayment(deps, site, 'stripe', null, 'pi_f');
    expect(again?.rev).toBe(1);
  });
});
