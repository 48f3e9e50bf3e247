import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoPaymentListLayout } from '../../lambdas/adapters/dynamo/payment-list-layout.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoPaymentStore } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { applyProviderFacts, type PaymentDeps } from '../../lambdas/services/payments.js';
import type { PaymentFact, ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import { memoryTable } from '../support/dynamo.js';
import { site as siteConfig } from '../support/events.js';

/**
 * A new generation's retention items are marked complete (`ready`) by its
 * first payment, whatever that payment is: a site whose first webhook was a
 * failed charge (no payer counts it, so no payer summary is written) must
 * still read retention from its cohorts once countable payments follow,
 * rather than from every payment of the site for ever (found by the cohort
 * property test, seed 159275674).
 */
const NOW = Date.UTC(2026, 5, 30, 15);
const facts = (payment: PaymentFact): ProviderFacts => ({
  event_id: 'e',
  event_type: 't',
  payments: [payment],
  subscriptions: [],
  customers: [],
});

let conn: DynamoConnection;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ conn, close } = await memoryTable([]));
});
afterAll(async () => close());

describe('retention cohorts of a new generation', () => {
  it.each([
    { first: 'failed', status: 'failed' as const },
    { first: 'paid', status: 'paid' as const },
  ])('are ready after a first payment that is $first, then a countable one', async ({ first, status }) => {
    const site = await new DynamoConfigStore(conn).addSite(
      siteConfig({ domain: `ready-${first}.test`, timezone: 'UTC' }),
    );
    const payments = new DynamoPaymentStore(conn);
    const deps: PaymentDeps = {
      payments,
      list: dynamoPaymentListLayout,
      visits: new DynamoVisitStore(conn),
      rates: async () => () => null,
      clock: () => NOW,
    };
    await applyProviderFacts(
      deps,
      site,
      facts({
        provider: 'stripe',
        id: 'pay_1',
        aliases: [],
        ts: NOW - 86_400_000,
        amount: 900,
        currency: 'USD',
        status,
      }),
    );
    expect((await payments.cohorts.sourceFlags(site.domain, true)).ready).toBe(true);
    await applyProviderFacts(
      deps,
      site,
      facts({
        provider: 'stripe',
        id: 'pay_2',
        aliases: [],
        ts: NOW - 3_600_000,
        amount: 1200,
        currency: 'USD',
        status: 'paid',
      }),
    );
    expect((await payments.cohorts.sourceFlags(site.domain, true)).ready).toBe(true);
  });
});
