import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { itemBytes } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { CREDITED_VALUES, creditedValuesOf } from '../../lambdas/domain/rollup.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import { applyProviderFacts, type PaymentDeps } from '../../lambdas/services/payments.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

const long = (i: number, chars = 2000) => `/${String(i).padStart(4, '0')}/${'x'.repeat(chars - 6)}`;

describe('credited values: a payment keeps at most CREDITED_VALUES of each dimension of its visit', () => {
  it.each([
    ['short values: the first 100 distinct', Array.from({ length: 300 }, (_, i) => `/p/${i % 150}`), 100, 4096],
    ['long values: as many as fit in 4 KiB', Array.from({ length: 50 }, (_, i) => long(i, 1000)), 4, 4096],
    ['one value longer than 4 KiB alone', [`/${'é'.repeat(2100)}`, '/next'], 1, 4201],
    ['none', [], 0, 0],
    ['duplicates count once, in first-seen order', ['/b', '/a', '/b', '/c'], 3, 6],
  ])('%s', (_, values, count, bytes) => {
    const out = creditedValuesOf(values);
    expect(out).toHaveLength(count);
    expect(out).toEqual([...new Set(values)].slice(0, count));
    const size = out.reduce((n, v) => n + Buffer.byteLength(v), 0);
    // Within the byte cap, unless the first value alone is longer (it is kept: a payment credits at least one).
    expect(size).toBeLessThanOrEqual(out.length > 1 ? CREDITED_VALUES.bytes : Math.max(bytes, CREDITED_VALUES.bytes));
  });

  let conn: DynamoConnection;
  let close: () => Promise<void>;
  beforeAll(async () => ({ conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }])));
  afterAll(async () => close());

  it('settles a payment credited to a visit of 500 distinct 2,000-character pages and outbound links: every item it writes stays small', async () => {
    const t0 = Date.UTC(2026, 5, 1, 9);
    const events = Array.from({ length: 1000 }, (_, i) =>
      visitEventOf(
        trackedEvent({
          event_id: `e${String(i).padStart(5, '0')}`,
          visitor_id: 'visitor-long',
          ts: t0 + i * 1000,
          path: long(i),
          channel: 'Search',
          ...(i % 2 ? { type: 'goal', goal: 'Outbound Link: Click', link: `https://x.org${long(i)}` } : {}),
        }),
      ),
    );
    await new DynamoVisitStore(conn).writeVisits(buildVisits('example.com', 'visitor-long', events), []);
    const site = (await new DynamoConfigStore(conn).getSite('example.com'))!;
    const deps: PaymentDeps = { ...dynamoPaymentDeps(conn, () => t0 + 2_000_000), rates: async () => () => null };
    await applyProviderFacts(deps, site, {
      event_id: 'evt',
      event_type: 'test',
      payments: [
        {
          provider: 'stripe',
          id: 'pi_long',
          aliases: [],
          visitor_id: 'visitor-long',
          customer_id: 'cus_long',
          ts: t0 + 1_500_000,
          amount: 5000,
          currency: 'USD',
          status: 'paid',
        },
      ],
      subscriptions: [],
      customers: [],
    });
    const payment = await deps.payments.getPayment('example.com', 'stripe', 'pi_long');
    expect(payment?.touch?.channel).toBe('Search');
    expect(payment?.touch_dims?.page.length).toBe(2);
    expect(payment?.touch_dims?.goal[0]).toBe('Outbound Link: Click');
    const items = (await scanAll(conn)).filter((i) => ['PAYMENT', 'CUSTOMER', 'PAYMENT_LIST'].includes(String(i.type)));
    expect(items.map((i) => i.type).sort()).toEqual(['CUSTOMER', 'PAYMENT', 'PAYMENT_LIST']);
    for (const item of items) expect(itemBytes(item), String(item.type)).toBeLessThan(20_000);
  });
});
