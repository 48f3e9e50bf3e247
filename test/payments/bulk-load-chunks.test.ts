import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startMemoryDynalite } from '../../local/dynalite.js';
import { createDynamoConnection, type DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { applyProviderFacts } from '../../lambdas/services/payments.js';
import { buildVisits, visitEventOf, type Visit } from '../../lambdas/domain/visit.js';
import { namespaceOf, type SiteConfig } from '../../lambdas/domain/site.js';
import type { Payment } from '../../lambdas/domain/payments/payment.js';
import type { Customer } from '../../lambdas/domain/payments/customer.js';
import { rng } from '../../local/demo/workload.js';
import { paymentsIn, subscriptionWebhooks } from '../../bench/bench-site.js';
import { scanAll } from '../support/dynamo.js';
import { site as siteConfig, trackedEvent } from '../support/events.js';
import { compared, normalize } from '../support/comparable-items.js';
import { propertyRuns } from '../support/suite.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

/**
 * The bulk load in chunks (`DynamoPaymentStore.bulkLoader`: the
 * 1M-payments bench point and the import hold one chunk of
 * payments at a time): whatever the chunks (one, one per payment, any
 * boundaries, any order of the payments), the table ends item for item as
 * after one `bulkLoad` of every payment, and that table holds the items the
 * webhook path leaves (less its bookkeeping: `comparable-items.ts`).
 *
 * The payments: 14 subscribing customers (`subscriptionWebhooks`, the bench
 * site's model: renewals every 30 days, refunds, cancellations, EUR, some
 * not attributed) of six visitors with visits over 200 days, and a one-off
 * Paddle payment without a customer, settled through the payment service.
 */
const DAY = 86_400_000;
const TZ = 'Europe/Berlin';
const NOW = Date.UTC(2026, 10, 20, 12);
const rate = (currency: string) => (currency === 'EUR' ? 1.16 : null);
const seed = Number(process.env.FOOTFALL_SEED ?? Date.now() % 2 ** 31);
const VISITORS: Record<string, { channel: string; referrer_host: string | null; utm_campaign: string | null }> = {
  'vis-a': { channel: 'Search', referrer_host: 'www.google.com', utm_campaign: null },
  'vis-b': { channel: 'Communities', referrer_host: 'news.ycombinator.com', utm_campaign: 'launch' },
  'vis-c': { channel: 'Email', referrer_host: null, utm_campaign: 'spring' },
  'vis-d': { channel: 'Direct', referrer_host: null, utm_campaign: null },
  'vis-e': { channel: 'Social', referrer_host: 'www.reddit.com', utm_campaign: null },
  'vis-f': { channel: 'Referral', referrer_host: 'blog.example.org', utm_campaign: 'partner' },
};

describe('the bulk load in chunks', () => {
  let db: Awaited<ReturnType<typeof startMemoryDynalite>>;
  let webhooks: DynamoConnection;
  let site: SiteConfig;
  let payments: Payment[];
  let customers: Customer[];
  let oneShot: Array<Record<string, unknown>>;
  const opened: DynamoConnection[] = [];

  /** A fresh table in the same dynalite with the site's customers, then the payments bulk-loaded chunk by chunk; every item of it. */
  async function load(chunks: ReadonlyArray<readonly Payment[]>): Promise<Array<Record<string, unknown>>> {
    const conn = createDynamoConnection({ table: `chunks${opened.length}`, endpoint: db.endpoint, maxAttempts: 1 });
    opened.push(conn);
    await ensureTable(conn);
    // The bulk load's RECENT_PAYMENT_MARK reset is keyed by the clock: the same for every load.
    const store = dynamoPaymentStores(conn, () => NOW);
    await store.customers.bulkLoadCustomers(customers);
    const loader = store.bulk.bulkLoader(namespaceOf(site), TZ, rate, { now: NOW });
    for (const chunk of chunks) await loader.add(chunk);
    await loader.finish();
    return scanAll(conn);
  }

  /** The payments cut before each index of `cuts` (after reordering them by `order`). */
  const cut = (order: readonly number[], cuts: readonly number[]): Payment[][] => {
    const ordered = order.map((i) => payments[i] as Payment);
    const bounds = [0, ...[...new Set(cuts)].sort((a, b) => a - b), ordered.length];
    return bounds.slice(1).map((to, i) => ordered.slice(bounds[i], to));
  };

  beforeAll(async () => {
    db = await startMemoryDynalite();
    webhooks = createDynamoConnection({ table: 'webhooks', endpoint: db.endpoint, maxAttempts: 1 });
    await ensureTable(webhooks);
    const config = new DynamoConfigStore(webhooks);
    await config.addAccount('acme', new Date(NOW));
    site = await config.addSite(siteConfig({ domain: 'chunks.test', timezone: TZ }));
    const visits = new DynamoVisitStore(webhooks);
    const visitsOf = new Map<string, Visit[]>();
    for (const [visitor, attrs] of Object.entries(VISITORS)) {
      const events = Array.from({ length: 9 }, (_, k) =>
        visitEventOf(
          trackedEvent({
            event_id: `${visitor}-${k}`,
            site: site.domain,
            visitor_id: visitor,
            ts: NOW - (200 - 22 * k) * DAY,
            ...attrs,
          }),
        ),
      );
      const built = buildVisits(site.domain, visitor, events);
      visitsOf.set(visitor, built);
      await visits.writeVisits(built, []);
    }
    const deps = { ...dynamoPaymentDeps(webhooks, () => NOW), rates: async () => rate };
    const random = rng(7);
    let made = 0;
    for (let i = 0; i < 14; i++) {
      const own = visitsOf.get(Object.keys(VISITORS)[i % 6] as string) as Visit[];
      const visit = own[Math.floor(random() * (own.length - 1))] as Visit;
      const facts = subscriptionWebhooks(`cus_${i}`, visit, NOW, random, 6, made);
      for (const f of facts) await applyProviderFacts(deps, site, f);
      made += paymentsIn(facts);
    }
    await applyProviderFacts(deps, site, {
      event_id: 'evt_oneoff',
      event_type: 'transaction.completed',
      customers: [],
      subscriptions: [],
      payments: [
        {
          provider: 'paddle',
          id: 'txn_oneoff',
          aliases: [],
          ts: NOW - 40 * DAY,
          amount: 1900,
          currency: 'USD',
          status: 'paid',
          visitor_id: 'vis-c',
        },
      ],
    });
    const store = dynamoPaymentStores(webhooks);
    [payments, customers] = await Promise.all([
      store.payments.listPayments(namespaceOf(site)),
      store.customers.listCustomers(namespaceOf(site)),
    ]);
    oneShot = await load([payments]);
  }, 300_000);

  afterAll(async () => {
    webhooks?.doc.destroy();
    for (const conn of opened) conn.doc.destroy();
    await db?.close();
  });

  it('has renewals, refunds, unattributed payments, cancellations and a payment without a customer to load', () => {
    expect(payments.length).toBeGreaterThan(40);
    expect(payments.filter((p) => p.is_renewal).length).toBeGreaterThan(20);
    expect(payments.filter((p) => (p.refunded ?? 0) > 0).length).toBeGreaterThan(0);
    expect(payments.filter((p) => !p.visitor).length).toBeGreaterThan(0);
    expect(payments.filter((p) => !p.customer_id).length).toBe(1);
    expect(customers.some((c) => Object.values(c.subscriptions).some((s) => !s.paying))).toBe(true);
    for (const type of [
      'PAYMENT',
      'VISITOR_PAYMENT',
      'VISITOR_PAYMENTS',
      'PAYMENT_LIST',
      'PAYMENT_TOTALS',
      'PAYMENT_DIMENSION',
      'PAYER_PAYMENT',
      'PAYER_STATE',
      'COHORT_MEMBER',
      'COHORT',
    ]) {
      expect(oneShot.some((i) => i.type === type)).toBe(true);
    }
  });

  it('leaves the items the webhook path leaves', async () => {
    const keyed = (items: Array<Record<string, unknown>>) =>
      new Map(items.filter(compared).map((i) => [`${i.pk} ${i.sk}`, normalize(i)]));
    const ours = keyed(oneShot);
    // The webhook table also holds the configuration and the visits, which the bulk load does not write.
    const theirs = new Map(
      [...keyed(await scanAll(webhooks))].filter(
        ([, item]) =>
          !['ACCOUNT', 'SITE', 'SITE_DOMAIN', 'VISIT', 'VISIT_CHUNK', 'VISITOR'].includes(String(item.type)) &&
          String(item.pk).includes(site.domain),
      ),
    );
    expect([...ours.keys()].sort()).toEqual([...theirs.keys()].sort());
    const differences = [...theirs]
      .filter(([key, item]) => !isDeepStrictEqual(ours.get(key), item))
      .map(([key, item]) => ({ key, bulk: ours.get(key), webhooks: item }));
    expect(differences.slice(0, 3)).toEqual([]);
  });

  it('leaves the same items a payment per chunk, and in reverse order three at a time', async () => {
    const order = payments.map((_, i) => i);
    expect(await load(cut(order, order.slice(1)))).toEqual(oneShot);
    expect(
      await load(
        cut(
          [...order].reverse(),
          order.filter((i) => i % 3 === 0 && i > 0),
        ),
      ),
    ).toEqual(oneShot);
  }, 120_000);

  it('leaves the same items whatever the chunk boundaries and the order of the payments (property)', async () => {
    console.log(`bulk load chunks property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const n = payments.length;
    const indices = Array.from({ length: n }, (_, i) => i);
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(indices, { minLength: n, maxLength: n }),
        fc.uniqueArray(fc.integer({ min: 1, max: n - 1 }), { maxLength: n - 1 }),
        async (order, cuts) => {
          expect(await load(cut(order, cuts))).toEqual(oneShot);
        },
      ),
      { seed, numRuns: propertyRuns(2, 8) },
    );
  }, 300_000);

  it('refuses a chunk after finish, and a second finish', async () => {
    const loader = dynamoPaymentStores(webhooks).bulk.bulkLoader(namespaceOf(site), TZ, rate);
    await loader.finish();
    await expect(loader.add(payments.slice(0, 1))).rejects.toThrow(/after finish/);
    await expect(loader.finish()).rejects.toThrow(/finished twice/);
  });
});
