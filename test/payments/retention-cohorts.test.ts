import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores, type DynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { payerPk } from '../../lambdas/adapters/dynamo/payments/payer-items.js';
import { memberPk } from '../../lambdas/adapters/dynamo/payments/cohort-member-items.js';
import { cohortPk } from '../../lambdas/adapters/dynamo/payments/cohort-items.js';
import { retentionReport, type RetentionReport } from '../../lambdas/domain/reports/retention.js';
import { applyProviderFacts, recreditVisitors, type PaymentDeps } from '../../lambdas/services/payments.js';
import { emptyPayment, type Payment } from '../../lambdas/domain/payments/payment.js';
import { emptyCustomer } from '../../lambdas/domain/payments/customer.js';
import { retention, type ReportDeps } from '../../lambdas/services/reports.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { PaymentFact, Provider, ProviderFacts, SubscriptionFact } from '../../lambdas/domain/payments/facts.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable } from '../support/dynamo.js';
import { site as siteConfig, trackedEvent } from '../support/events.js';
import { propertyRuns, reliabilityOnly } from '../support/suite.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';

/**
 * Retention from cohort rollups (`docs/retention.md` "How it is
 * computed"): payments, refunds and subscription statuses arriving in any
 * order, any number of times, through the real payment service, leave
 * cohorts from which the report equals the whole-site computation
 * (`retentionReport` over every stored PAYMENT and CUSTOMER item, the
 * computation retention used before the cohorts); a crash at any write of a
 * summary or cohort recompute, then the retry, ends the same.
 */
const DAY = 86_400_000;
const TZ = 'America/New_York';
const NOW = Date.UTC(2026, 5, 30, 15);
const rate = (currency: string) => (currency === 'EUR' ? 1.1 : null);
const seed = Number(process.env.FOOTFALL_SEED ?? Date.now() % 2 ** 31);
const RANGES = [
  { from: '2026-01-01', to: '2026-06-30' },
  { from: '2026-03-15', to: '2026-05-31' },
  { from: '2026-06-10', to: '2026-06-30' },
];
/** Visitors with a visit every 20 days (their channel, referrer and campaign), so payments of the last 150 days are credited. */
const VISITORS: Record<string, { channel: string; referrer_host: string | null; utm_campaign: string | null }> = {
  'vis-a': { channel: 'Search', referrer_host: 'www.google.com', utm_campaign: null },
  'vis-b': { channel: 'Communities', referrer_host: 'news.ycombinator.com', utm_campaign: 'launch' },
  'vis-c': { channel: 'Email', referrer_host: null, utm_campaign: 'spring' },
  'vis-d': { channel: 'Direct', referrer_host: null, utm_campaign: null },
};

interface GenPayment {
  day: number;
  amount: number;
  eur: boolean;
  refund: 'none' | 'partial' | 'full';
  failed: boolean;
  renewal: boolean;
  sub: boolean;
}
interface GenPayer {
  provider: Provider;
  customer: boolean;
  visitor: string | null;
  payments: GenPayment[];
  statuses: Array<{ paying: boolean; day: number }>;
}

const paymentArb = fc.record({
  day: fc.integer({ min: 0, max: 150 }),
  amount: fc.integer({ min: 500, max: 5000 }),
  eur: fc.boolean(),
  refund: fc.constantFrom('none' as const, 'none' as const, 'partial' as const, 'full' as const),
  failed: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  renewal: fc.boolean(),
  sub: fc.boolean(),
});
const payerArb = fc.record({
  provider: fc.constantFrom<Provider>('stripe', 'lemonsqueezy', 'paddle'),
  customer: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
  visitor: fc.constantFrom(null, ...Object.keys(VISITORS)),
  payments: fc.array(paymentArb, { minLength: 1, maxLength: 3 }),
  statuses: fc.array(fc.record({ paying: fc.boolean(), day: fc.integer({ min: 0, max: 150 }) }), { maxLength: 2 }),
});

/** Every webhook the payers' history stands for: a payment, its refund apart, each subscription status. */
function factsOf(payers: readonly GenPayer[]): ProviderFacts[] {
  const out: ProviderFacts[] = [];
  const wrap = (payments: PaymentFact[], subscriptions: SubscriptionFact[]): ProviderFacts => ({
    event_id: 'e',
    event_type: 't',
    payments,
    subscriptions,
    customers: [],
  });
  payers.forEach((payer, i) => {
    const customer = payer.customer ? { customer_id: `cus_${i}` } : {};
    payer.payments.forEach((p, j) => {
      const id = `pay_${i}_${j}`;
      const ts = NOW - p.day * DAY - 3_600_000 * (1 + j);
      const fact: PaymentFact = {
        provider: payer.provider,
        id,
        aliases: [],
        ts,
        amount: p.amount,
        currency: p.eur ? 'EUR' : 'USD',
        status: p.failed ? 'failed' : 'paid',
        is_renewal: p.renewal && j > 0,
        ...customer,
      };
      if (payer.visitor) fact.visitor_id = payer.visitor;
      if (p.sub && payer.customer) fact.subscription_id = `sub_${i}`;
      out.push(wrap([fact], []));
      if (p.refund !== 'none' && !p.failed)
        out.push(
          wrap(
            [
              {
                provider: payer.provider,
                id,
                aliases: [],
                refunded: p.refund === 'full' ? p.amount : Math.floor(p.amount / 3),
              },
            ],
            [],
          ),
        );
    });
    if (payer.customer) {
      payer.statuses.forEach((s, k) =>
        out.push(
          wrap(
            [],
            [
              {
                provider: payer.provider,
                subscription_id: `sub_${i}_${k}`,
                customer_id: `cus_${i}`,
                status: s.paying ? 'active' : 'canceled',
                paying: s.paying,
                ts: NOW - s.day * DAY,
              },
            ],
          ),
        ),
      );
    }
  });
  return out;
}

/** Facts in the order of their sort keys, each repeated when its duplicate flag is set. */
function arrange(facts: readonly ProviderFacts[], keys: readonly number[], dups: readonly boolean[]): ProviderFacts[] {
  const copies = facts.flatMap((f, i) =>
    (dups[i % dups.length] ? [f, f] : [f]).map((fact, c) => ({
      fact,
      key: (keys[(i + c * 7) % keys.length] ?? 0) * 100 + i,
    })),
  );
  return copies.sort((a, b) => a.key - b.key).map((c) => c.fact);
}

const items = async (conn: DynamoConnection, pk: string) => {
  const out: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await conn.doc.send(
      new QueryCommand({
        TableName: conn.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ExclusiveStartKey: start,
      }),
    );
    out.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
};

/** One dynalite table for the file; each run adds a site of its own. */
let conn: DynamoConnection;
let close: () => Promise<void>;
let config: DynamoConfigStore;
let runs = 0;
beforeAll(async () => {
  ({ conn, close } = await memoryTable([]));
  config = new DynamoConfigStore(conn);
});
afterAll(async () => close());

const reportDeps = (): ReportDeps => ({
  sites: config,
  store: new DynamoReportStore(conn),
  rates: async () => rate,
  clock: () => NOW,
});

describe('retention from cohort rollups equals the whole-site computation', () => {
  /** A new site with the visitors' visits (a visit every 20 days from 160 days ago). */
  async function freshSite(): Promise<{ site: SiteConfig; deps: PaymentDeps & Pick<DynamoPaymentStores, 'bulk'> }> {
    const site = await config.addSite(siteConfig({ domain: `r${++runs}.test`, timezone: TZ }));
    const visits = new DynamoVisitStore(conn);
    for (const [visitor, attrs] of Object.entries(VISITORS)) {
      const events = Array.from({ length: 9 }, (_, k) =>
        visitEventOf(
          trackedEvent({
            event_id: `${site.domain}-${visitor}-${k}`,
            site: site.domain,
            visitor_id: visitor,
            ts: NOW - (160 - 20 * k) * DAY,
            ...attrs,
          }),
        ),
      );
      await visits.writeVisits(buildVisits(site.domain, visitor, events), []);
    }
    return {
      site,
      deps: { ...dynamoPaymentDeps(conn, () => NOW), rates: async () => rate },
    };
  }

  /** The report of each range from the cohorts (asserting they are what the service read) and from every stored payment and customer. */
  async function both(site: SiteConfig): Promise<Array<{ cohorts: RetentionReport; whole: RetentionReport }>> {
    const payments = dynamoPaymentStores(conn);
    const [all, customers] = await Promise.all([
      payments.payments.listPayments(site.domain),
      payments.customers.listCustomers(site.domain),
    ]);
    return Promise.all(
      RANGES.map(async (query) => {
        const cohorts = await retention(reportDeps(), 'acme', site.domain, query);
        return {
          cohorts,
          whole: retentionReport({ site: site.domain, range: cohorts.range, customers, payments: all, now: NOW, rate }),
        };
      }),
    );
  }

  it('for any order and duplication of payments, refunds and subscription statuses', async () => {
    console.log(`retention cohorts property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(payerArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 40, maxLength: 40 }),
        fc.array(fc.boolean(), { minLength: 13, maxLength: 13 }),
        async (payers, keys, dups) => {
          const { site, deps } = await freshSite();
          for (const facts of arrange(factsOf(payers), keys, dups)) await applyProviderFacts(deps, site, facts);
          for (const { cohorts, whole } of await both(site)) expect(cohorts).toEqual(whole);
          // Every recompute finished: nothing left pending.
          expect(
            (await items(conn, payerPk(site.domain))).filter((i) => i.pending !== undefined || i.pend !== undefined),
          ).toEqual([]);
        },
      ),
      { seed, numRuns: propertyRuns(1, 5) },
    );
  }, 300_000);

  /** The bulk path (`bulkLoader`) over every PAYMENT item of the site, `pageSize` at a time, its payment items left as they are. */
  async function bulkLoadAll(
    deps: PaymentDeps & Pick<DynamoPaymentStores, 'bulk'>,
    site: SiteConfig,
    pageSize?: number,
  ): Promise<number> {
    const load = deps.bulk.bulkLoader(site.domain, site.timezone, await deps.rates(), {
      writePayments: false,
      now: deps.clock(),
    });
    let read = 0;
    for await (const page of deps.payments.paymentPages(site.domain, pageSize)) {
      await load.add(page);
      read += page.length;
    }
    await load.finish();
    return read;
  }

  it('gives the same cohorts through the bulk path (one page or a payment at a time) as through the webhooks', async () => {
    const payers: GenPayer[] = [
      {
        provider: 'stripe',
        customer: true,
        visitor: 'vis-b',
        payments: [
          { day: 100, amount: 4900, eur: false, refund: 'none', failed: false, renewal: false, sub: true },
          { day: 70, amount: 4900, eur: false, refund: 'partial', failed: false, renewal: true, sub: true },
        ],
        statuses: [],
      },
      {
        provider: 'paddle',
        customer: false,
        visitor: 'vis-a',
        payments: [{ day: 40, amount: 900, eur: true, refund: 'none', failed: false, renewal: false, sub: false }],
        statuses: [],
      },
      {
        provider: 'lemonsqueezy',
        customer: true,
        visitor: null,
        payments: [{ day: 35, amount: 1500, eur: false, refund: 'full', failed: false, renewal: false, sub: true }],
        statuses: [{ paying: true, day: 30 }],
      },
    ];
    const { site, deps } = await freshSite();
    for (const facts of factsOf(payers)) await applyProviderFacts(deps, site, facts);
    const viaWebhooks = await both(site);
    const cohortItems = async () =>
      (await items(conn, cohortPk(site.domain)))
        .filter((i) => String(i.sk).startsWith('D#') || String(i.sk).startsWith('M#'))
        .map((i) => [i.sk, i.v, i.n]);
    const before = await cohortItems();
    // The bulk path writes every item again from the PAYMENT and CUSTOMER items.
    await bulkLoadAll(deps, site);
    expect(await cohortItems()).toEqual(before);
    expect(await both(site)).toEqual(viaWebhooks);
    // Again a page of one payment at a time: a payer's payments in several chunks of the bulk load.
    const summaries = async () =>
      (await items(conn, payerPk(site.domain)))
        .concat(await items(conn, memberPk(site.domain)))
        .map((i) => [i.sk, i.e ?? i.m ?? [...(i.held as Set<string>)]]);
    const oneShot = await summaries();
    expect(await bulkLoadAll(deps, site, 1)).toBe(4);
    expect(await cohortItems()).toEqual(before);
    expect(await summaries()).toEqual(oneShot);
    expect(await both(site)).toEqual(viaWebhooks);
    expect(viaWebhooks[0]?.cohorts.total).toMatchObject({ customers: 3, churn_customers: 2 });
  });

  it('moves customers to their channel when a re-credit batch credits payments imported before their visits', async () => {
    const site = await config.addSite(siteConfig({ domain: `r${++runs}.test`, timezone: TZ }));
    const visits = new DynamoVisitStore(conn);
    const deps: PaymentDeps = { ...dynamoPaymentDeps(conn, () => NOW), rates: async () => rate };
    const payers: GenPayer[] = ['vis-a', 'vis-b', 'vis-b'].map((visitor, i) => ({
      provider: 'stripe',
      customer: true,
      visitor,
      payments: [
        { day: 90 - 20 * i, amount: 1000, eur: false, refund: 'none', failed: false, renewal: false, sub: true },
        { day: 60 - 20 * i, amount: 1000, eur: false, refund: 'none', failed: false, renewal: true, sub: true },
      ],
      statuses: [],
    }));
    for (const facts of factsOf(payers)) await applyProviderFacts(deps, site, facts);
    expect((await both(site))[0]?.cohorts.channels.map((g) => [g.label, g.customers])).toEqual([['Unattributed', 3]]);
    // The visits arrive after their payments; the sessionizer's re-credit of these visitors (one batch) credits them.
    for (const [visitor, attrs] of Object.entries(VISITORS)) {
      const events = Array.from({ length: 9 }, (_, k) =>
        visitEventOf(
          trackedEvent({
            event_id: `${site.domain}-${visitor}-${k}`,
            site: site.domain,
            visitor_id: visitor,
            ts: NOW - (160 - 20 * k) * DAY,
            ...attrs,
          }),
        ),
      );
      await visits.writeVisits(buildVisits(site.domain, visitor, events), []);
    }
    await recreditVisitors(deps, site, [{ visitor: 'vis-a' }, { visitor: 'vis-b' }]);
    const after = await both(site);
    for (const { cohorts, whole } of after) expect(cohorts).toEqual(whole);
    expect(after[0]?.cohorts.channels.map((g) => [g.label, g.customers])).toEqual([
      ['Communities', 2],
      ['Search', 1],
    ]);
    expect(
      (await items(conn, payerPk(site.domain))).filter((i) => i.pending !== undefined || i.pend !== undefined),
    ).toEqual([]);
  });
});

class Crash extends Error {}

/** Makes the k-th write (0-based) to a retention partition throw, as a process dying at that point would. */
function crashAt(conn: DynamoConnection, k: number): { writes: () => number; disarm: () => void } {
  const send = conn.doc.send.bind(conn.doc);
  let writes = 0;
  let armed = true;
  const retentionWrite = (command: unknown) => {
    const input = (command as { input: { Item?: Record<string, unknown>; Key?: Record<string, unknown> } }).input;
    const pk = String((input.Item ?? input.Key)?.pk ?? '');
    return /^(CP|CM|CH)#/.test(pk);
  };
  conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
    if (
      (command instanceof PutCommand || command instanceof UpdateCommand || command instanceof DeleteCommand) &&
      retentionWrite(command)
    ) {
      if (armed && writes === k) throw new Crash(`crash at retention write ${k}`);
      writes++;
    }
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as typeof conn.doc.send;
  return { writes: () => writes, disarm: () => void ((armed = false), (conn.doc.send = send)) };
}

reliabilityOnly('retention cohorts: a crash at any write of a recompute, then the retry, ends as a clean run', () => {
  const touch = {
    session_id: 's1',
    ts: NOW - 60 * DAY,
    channel: 'Communities',
    referrer_host: 'news.ycombinator.com',
    source: null,
    campaign: 'launch',
    landing_page: '/',
    country: 'DE',
    device: 'Desktop',
  };
  const pay = (site: string, id: string, o: Partial<Payment>): Payment => ({
    ...emptyPayment(site, 'stripe', id),
    amount: 4900,
    currency: 'USD',
    status: 'paid',
    rev: 1,
    ...o,
  });
  // What the payment service asks of the cohorts, step by step: a first payment, a renewal partly
  // refunded (revision 2: an older one is skipped), a subscription status, a payment without customer, the same payment
  // when its customer id is learnt (it changes payer). Each step is safe to repeat: a retry repeats it.
  const steps = (site: string, store: DynamoPaymentStores): Array<() => Promise<void>> => [
    () =>
      store.payers.syncPayment(
        site,
        TZ,
        pay(site, 'pi_1', { ts: NOW - 50 * DAY, customer_id: 'cus_1', subscription_id: 'sub_1', touch }),
        rate,
        NOW,
      ),
    () =>
      store.payers.syncPayment(
        site,
        TZ,
        pay(site, 'pi_2', {
          ts: NOW - 20 * DAY,
          customer_id: 'cus_1',
          is_renewal: true,
          touch,
          refunded: 1000,
          rev: 2,
        }),
        rate,
        NOW,
      ),
    async () => {
      await store.customers.putCustomer({
        ...emptyCustomer(site, 'stripe', 'cus_1'),
        subscriptions: { sub_1: { status: 'canceled', paying: false, ts: NOW - DAY } },
        ver: 1,
      });
      await store.payers.syncCustomer(site, TZ, 'stripe', 'cus_1', NOW);
    },
    () => store.payers.syncPayment(site, TZ, pay(site, 'pi_3', { ts: NOW - 40 * DAY, amount: 2000 }), rate, NOW),
    async () => {
      await store.payers.dropPayment(site, TZ, 'payment:stripe:pi_3', 'stripe:pi_3', NOW);
      await store.payers.syncPayment(
        site,
        TZ,
        pay(site, 'pi_3', { ts: NOW - 40 * DAY, amount: 2000, customer_id: 'cus_3', rev: 2 }),
        rate,
        NOW,
      );
    },
  ];

  async function run(
    k: number,
  ): Promise<{ report: RetentionReport; members: unknown[]; cohorts: unknown[]; writes: number }> {
    const site = await config.addSite(siteConfig({ domain: `c${++runs}.test`, timezone: TZ }));
    const store = dynamoPaymentStores(conn);
    const fault = crashAt(conn, k);
    const all = steps(site.domain, store);
    let from = all.length;
    for (const [i, step] of all.entries()) {
      try {
        await step();
      } catch (error) {
        if (!(error instanceof Crash)) throw error;
        from = i;
        break;
      }
    }
    const writes = fault.writes();
    fault.disarm();
    // The retry repeats the step that failed (a provider's redelivery settles the payment again), then the rest come.
    for (const step of all.slice(from)) await step();
    const report = await retention(reportDeps(), 'acme', site.domain, { from: '2026-01-01', to: '2026-06-30' });
    const members = (await items(conn, memberPk(site.domain))).map((i) => [i.sk, i.m]);
    const cohorts = (await items(conn, cohortPk(site.domain)))
      .filter((i) => /^[DM]#/.test(String(i.sk)))
      .map((i) => [i.sk, i.v, i.n]);
    expect(
      (await items(conn, payerPk(site.domain))).filter((i) => i.pending !== undefined || i.pend !== undefined),
    ).toEqual([]);
    return { report: { ...report, site: 'crash.test' }, members, cohorts, writes };
  }

  it('at every write point', async () => {
    const clean = await run(Number.POSITIVE_INFINITY);
    // cus_1: $49 + $49 less $10, churned by its status; cus_3: one-off $20.
    expect(clean.report.total).toMatchObject({
      customers: 2,
      churn_customers: 1,
      churned: 1,
      net_ltv_usd: 108,
      refunded_usd: 10,
      refund_rate: 0.5,
    });
    expect(clean.report.referrers.map((g) => g.label)).toEqual(['news.ycombinator.com', 'Unattributed']);
    console.log(`retention crash points: ${clean.writes}`);
    for (let k = 0; k < clean.writes; k++) {
      const crashed = await run(k);
      expect(crashed.report, `crash at retention write ${k}`).toEqual(clean.report);
      expect(crashed.members, `crash at retention write ${k}`).toEqual(clean.members);
      expect(crashed.cohorts, `crash at retention write ${k}`).toEqual(clean.cohorts);
    }
  }, 300_000);
});
