import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { applyProviderFacts, type PaymentDeps } from '../../lambdas/services/payments.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';
import { propertyRuns } from '../support/suite.js';

/**
 * A customer's credit does not depend on the order its payments arrive in
 * (`docs/payments.md`, "Customers and attribution"): by event time, a
 * purchase is credited among the visits of the visitor of the customer's
 * first attributed payment before it, else of its own visitor; the earliest
 * attributed purchase is the customer's credit, which its renewals inherit.
 * A customer here buys from up to three visitors (a second device, a shared
 * link), and its payments arrive in a random order. A failed payment is
 * credited by its own visitor alone and lends the customer nothing.
 */
const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
const DAY = 86_400_000;
const BASE = Date.UTC(2026, 2, 1);
const CHANNELS = ['Direct', 'Search', 'Email'] as const;

interface GenVisit {
  visitor: number;
  day: number;
  channel: (typeof CHANNELS)[number];
}
interface GenPayment {
  visitor: number;
  day: number;
  minute: number;
  renewal: boolean;
  /** A failed attempt: it inherits no credit and is never the customer's credit. */
  failed: boolean;
}

const visitStart = (v: GenVisit) => BASE + v.day * DAY + 10 * 3_600_000;
const paymentTs = (p: GenPayment) => BASE + p.day * DAY + 9 * 3_600_000 + p.minute * 60_000;

const visitsArb = fc.uniqueArray(
  fc.record({
    visitor: fc.integer({ min: 0, max: 2 }),
    day: fc.integer({ min: 0, max: 40 }),
    channel: fc.constantFrom(...CHANNELS),
  }),
  { selector: (v) => `${v.visitor}:${v.day}`, minLength: 2, maxLength: 10 },
);
const paymentsArb = fc.array(
  fc.record({
    visitor: fc.integer({ min: 0, max: 2 }),
    day: fc.integer({ min: 0, max: 45 }),
    minute: fc.integer({ min: 0, max: 3 }),
    renewal: fc.boolean(),
    failed: fc.constantFrom(false, false, false, true),
  }),
  { minLength: 2, maxLength: 4 },
);

type Credit = { visitor: string; touch: { start: number; channel: string } | null };

/** Each payment's credit straight from the inputs, by event time (last non-Direct, 30 days). */
function directCredits(run: string, visits: readonly GenVisit[], payments: readonly GenPayment[]): Map<string, Credit> {
  const visitorName = (i: number) => `visitor-${run}-${i}`;
  const pick = (visitor: string, ts: number) => {
    const window = visits
      .filter((v) => visitorName(v.visitor) === visitor && visitStart(v) <= ts && visitStart(v) >= ts - 30 * DAY)
      .sort((a, b) => visitStart(a) - visitStart(b));
    const chosen = [...window].reverse().find((v) => v.channel !== 'Direct') ?? window[window.length - 1];
    return chosen ? { start: visitStart(chosen), channel: chosen.channel } : null;
  };
  const ids = payments.map((p, i) => ({ p, id: `pi_${run}_${i}` }));
  // Time, then the payment key, as the service orders payments.
  ids.sort((a, b) => paymentTs(a.p) - paymentTs(b.p) || `stripe:${a.id}`.localeCompare(`stripe:${b.id}`));
  const out = new Map<string, Credit>();
  let credit: Credit | null = null;
  const own = (p: GenPayment) => ({
    visitor: visitorName(p.visitor),
    touch: pick(visitorName(p.visitor), paymentTs(p)),
  });
  for (const { p, id } of ids) if (p.failed) out.set(id, own(p));
  for (const { p, id } of ids) {
    if (p.renewal || p.failed) continue;
    const visitor: string = credit?.visitor ?? visitorName(p.visitor);
    const touch = pick(visitor, paymentTs(p));
    out.set(id, { visitor, touch });
    if (!credit && touch) credit = { visitor, touch };
  }
  for (const { p, id } of ids) if (p.renewal && !p.failed) out.set(id, credit ?? own(p));
  return out;
}

/** Writes the generated visits of run `run`'s visitors (`visitor-<run>-<n>`). */
async function writeVisitsOf(deps: PaymentDeps, run: string, visits: readonly GenVisit[]): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const mine = visits.filter((v) => v.visitor === i);
    if (mine.length === 0) continue;
    const visitor = `visitor-${run}-${i}`;
    const events = mine.map((v, n) =>
      visitEventOf(
        trackedEvent({
          event_id: `${visitor}-${n}`,
          visitor_id: visitor,
          ts: visitStart(v),
          channel: v.channel,
          path: `/${v.channel.toLowerCase()}`,
        }),
      ),
    );
    await deps.visits.writeVisits(buildVisits('example.com', visitor, events), []);
  }
}

/** Payment `n` of run `run`'s customer (`cus_<run>`), as a provider states it. */
function factOf(run: string, n: number, p: GenPayment): PaymentFact {
  return {
    provider: 'stripe',
    id: `pi_${run}_${n}`,
    aliases: [],
    ts: paymentTs(p),
    amount: 1000,
    currency: 'USD',
    status: p.failed ? 'failed' : 'paid',
    customer_id: `cus_${run}`,
    visitor_id: `visitor-${run}-${p.visitor}`,
    is_renewal: p.renewal,
  };
}

describe("a customer's credit, whatever order its payments arrive in", () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let deps: PaymentDeps;
  let site: SiteConfig;
  let runs = 0;

  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]));
    site = (await new DynamoConfigStore(conn).getSite('example.com'))!;
    deps = { ...dynamoPaymentDeps(conn, () => BASE + 90 * DAY), rates: async () => () => null };
  });
  afterAll(async () => close());

  it('an imported purchase earlier than a stored one takes the credit, and the stored purchase and renewal follow', async () => {
    const run = 'import';
    await writeVisitsOf(deps, run, [
      { visitor: 0, day: 5, channel: 'Search' },
      { visitor: 0, day: 18, channel: 'Email' },
      { visitor: 1, day: 19, channel: 'Email' },
    ]);
    const later = factOf(run, 1, { visitor: 1, day: 20, minute: 0, renewal: false, failed: false });
    const renewal = factOf(run, 2, { visitor: 1, day: 40, minute: 0, renewal: true, failed: false });
    const facts = (f: PaymentFact) => ({
      event_id: `evt_${f.id}`,
      event_type: 'test',
      payments: [f],
      subscriptions: [],
      customers: [],
    });
    await applyProviderFacts(deps, site, facts(later));
    await applyProviderFacts(deps, site, facts(renewal));
    expect((await deps.payments.getPayment('example.com', 'stripe', renewal.id))?.visitor).toBe('visitor-import-1');
    // `footfall import payments` of the customer's earlier purchase, from visitor 0.
    const earlier = factOf(run, 0, { visitor: 0, day: 10, minute: 0, renewal: false, failed: false });
    await importPayments({ ...dynamoPaymentDeps(conn, deps.clock), rates: deps.rates }, site, [facts(earlier)]);
    const credit = async (id: string) => {
      const p = await deps.payments.getPayment('example.com', 'stripe', id);
      return { visitor: p?.visitor, touch: p?.touch ? { start: p.touch.ts, channel: p.touch.channel } : null };
    };
    const search = { start: visitStart({ visitor: 0, day: 5, channel: 'Search' }), channel: 'Search' };
    const email = { start: visitStart({ visitor: 0, day: 18, channel: 'Email' }), channel: 'Email' };
    expect(await credit(earlier.id)).toEqual({ visitor: 'visitor-import-0', touch: search });
    expect(await credit(later.id)).toEqual({ visitor: 'visitor-import-0', touch: email });
    expect(await credit(renewal.id)).toEqual({ visitor: 'visitor-import-0', touch: search });
  });

  it("a failed renewal gets the same credit whether it arrives before or after the purchase: its own visitor's", async () => {
    const credits: unknown[] = [];
    for (const order of ['renewal first', 'purchase first']) {
      const run = `failed-${order.split(' ')[0]}`;
      // The purchase's visit is outside the renewal's window; the renewal's visitor visited the day before it.
      await writeVisitsOf(deps, run, [
        { visitor: 0, day: 2, channel: 'Search' },
        { visitor: 0, day: 39, channel: 'Email' },
      ]);
      const purchase = factOf(run, 0, { visitor: 0, day: 8, minute: 0, renewal: false, failed: false });
      const renewal = factOf(run, 1, { visitor: 0, day: 40, minute: 0, renewal: true, failed: true });
      for (const f of order === 'renewal first' ? [renewal, purchase] : [purchase, renewal])
        await applyProviderFacts(deps, site, {
          event_id: `evt_${f.id}`,
          event_type: 'test',
          payments: [f],
          subscriptions: [],
          customers: [],
        });
      const stored = await deps.payments.getPayment('example.com', 'stripe', renewal.id);
      credits.push({ visitor: stored?.visitor, channel: stored?.touch?.channel, ts: stored?.touch?.ts });
    }
    const email = visitStart({ visitor: 0, day: 39, channel: 'Email' });
    expect(credits).toEqual([
      { visitor: 'visitor-failed-renewal-0', channel: 'Email', ts: email },
      { visitor: 'visitor-failed-purchase-0', channel: 'Email', ts: email },
    ]);
  });

  it('equals the credit by event time: first attributed purchase, its visitor for later purchases, renewals inherit', async () => {
    console.log(`customer credit order property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(visitsArb, paymentsArb, fc.infiniteStream(fc.nat()), async (visits, payments, noise) => {
        // Each run its own customer and visitors in the shared table.
        const run = String(++runs);
        await writeVisitsOf(deps, run, visits);
        const facts = payments.map((p, i) => factOf(run, i, p));
        const arrival = [...facts].sort(() => ((noise.next().value as number) % 2 === 0 ? -1 : 1));
        for (const fact of arrival)
          await applyProviderFacts(deps, site, {
            event_id: `evt_${fact.id}`,
            event_type: 'test',
            payments: [fact],
            subscriptions: [],
            customers: [],
          });
        const expected = directCredits(run, visits, payments);
        for (const fact of facts) {
          const stored = await deps.payments.getPayment('example.com', 'stripe', fact.id);
          const touch = stored?.touch ? { start: stored.touch.ts, channel: stored.touch.channel } : null;
          expect({ id: fact.id, visitor: stored?.visitor, touch }).toEqual({ id: fact.id, ...expected.get(fact.id) });
        }
      }),
      { seed, numRuns: propertyRuns(4, 15), endOnFailure: true },
    );
  }, 120_000);
});
