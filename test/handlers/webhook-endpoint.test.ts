import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Stripe } from 'stripe';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { dynamoPaymentStores } from '../../lambdas/adapters/dynamo/payment-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import { fixture } from '../payments/fixture.js';
import { startTestService } from '../support/local.js';
import { trackedEvent } from '../support/events.js';

const SECRET = 'whsec_footfall_endpoint_test';
const PI = 'pi_1PgafyB7WZ01zgkWSjxsAJo3';
const VISITOR = 'k3x9q2m7p1w8r4t6';
/** The fixtures' purchase happened at 2026-03-02 10:15Z; deliveries arrive a few minutes later. */
const NOW = Date.UTC(2026, 2, 2, 10, 20);

type Service = Awaited<ReturnType<typeof startTestService>>;

describe('POST /api/webhooks/{provider}/{domain} (Stripe, signed real payloads)', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startTestService([{ domain: 'example.com', timezone: 'UTC' }, { domain: 'other.org' }], {
      clock: () => NOW,
    });
    await new DynamoConfigStore(svc.dynamo, svc.secrets).connectProvider('example.com', 'stripe', SECRET, new Date());
    // The buyer came from Hacker News two days before paying.
    const visit = buildVisits('example.com', VISITOR, [
      visitEventOf(
        trackedEvent({
          event_id: 'e1',
          visitor_id: VISITOR,
          ts: NOW - 2 * 86_400_000,
          channel: 'Communities',
          referrer_host: 'news.ycombinator.com',
          source: 'Hacker News',
          path: '/launch',
        }),
      ),
    ]);
    await new DynamoVisitStore(svc.dynamo).writeVisits(visit, []);
  });
  afterAll(async () => svc.cleanup());

  const deliver = (name: string, opts: { secret?: string; path?: string; body?: string } = {}) => {
    const body = opts.body ?? fixture('stripe', name);
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: opts.secret ?? SECRET,
      timestamp: Math.floor(NOW / 1000),
    });
    return fetch(`${svc.url}${opts.path ?? '/api/webhooks/stripe/example.com'}`, {
      method: 'POST',
      headers: { 'stripe-signature': signature, 'content-type': 'application/json' },
      body,
    });
  };
  const payment = () => dynamoPaymentStores(svc.dynamo).payments.getPayment('example.com', 'stripe', PI);

  it('stores one payment from the checkout session, payment intent and charge, credited to the visit', async () => {
    for (const name of ['checkout.session.completed.payment', 'payment_intent.succeeded', 'charge.succeeded']) {
      const res = await deliver(`${name}.json`);
      expect(res.status, name).toBe(200);
      expect(await res.json()).toMatchObject({ received: true });
    }
    expect(await payment()).toMatchObject({
      provider: 'stripe',
      provider_payment_id: PI,
      amount: 4900,
      currency: 'USD',
      status: 'paid',
      visitor: VISITOR,
      touch: { channel: 'Communities', source: 'Hacker News', landing_page: '/launch' },
    });
  });

  it('changes nothing when an event is delivered again', async () => {
    const before = await payment();
    expect((await deliver('charge.succeeded.json')).status).toBe(200);
    expect(await payment()).toEqual(before);
  });

  it('records a partial refund', async () => {
    expect((await deliver('charge.refunded.partial.json')).status).toBe(200);
    expect(await payment()).toMatchObject({ status: 'paid', refunded: expect.any(Number) });
    expect((await payment())?.refunded).toBeGreaterThan(0);
  });

  it('answers 400 with a JSON error for a bad signature or a tampered body, and stores nothing', async () => {
    const before = await payment();
    const wrong = await deliver('charge.refunded.full.json', { secret: 'whsec_not_the_secret' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({ error: expect.stringContaining('signature') });
    const body = fixture('stripe', 'charge.refunded.full.json');
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: SECRET,
      timestamp: Math.floor(NOW / 1000),
    });
    const tampered = await fetch(`${svc.url}/api/webhooks/stripe/example.com`, {
      method: 'POST',
      headers: { 'stripe-signature': signature },
      body: body.replace('"refunded": true', '"refunded": false '),
    });
    expect(tampered.status).toBe(400);
    const stale = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: SECRET,
      timestamp: Math.floor(NOW / 1000) - 3600,
    });
    expect(
      (
        await fetch(`${svc.url}/api/webhooks/stripe/example.com`, {
          method: 'POST',
          headers: { 'stripe-signature': stale },
          body,
        })
      ).status,
    ).toBe(400);
    expect((await fetch(`${svc.url}/api/webhooks/stripe/example.com`, { method: 'POST', body })).status).toBe(400);
    expect(await payment()).toEqual(before);
  });

  it('answers 404 for an unknown provider, an unknown site, or a provider not connected', async () => {
    for (const path of [
      '/api/webhooks/square/example.com',
      '/api/webhooks/stripe/nosuch.com',
      '/api/webhooks/stripe/other.org',
      '/api/webhooks/paddle/example.com',
    ]) {
      const res = await deliver('charge.succeeded.json', { path });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toHaveProperty('error');
    }
  });

  it('answers 200 and ignores event types it does not use', async () => {
    const res = await deliver('plan.created.json');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true, ignored: true });
  });
});

describe('webhook storage failure', () => {
  it('answers 503 so that the provider retries', async () => {
    const { createWebhookHandler } = await import('../../lambdas/handlers/webhook.js');
    const { Logger } = await import('@aws-lambda-powertools/logger');
    const { Metrics } = await import('@aws-lambda-powertools/metrics');
    const { localContext } = await import('../../local/api-gateway.js');
    const { site } = await import('../support/events.js');
    const down = () => Promise.reject(new Error('ProvisionedThroughputExceededException'));
    const handler = createWebhookHandler({
      logger: new Logger({ logLevel: 'SILENT' }),
      metrics: new Metrics({ namespace: 'T' }),
      sites: { getSite: async () => site({ timezone: 'UTC' }) },
      secrets: { providerSecret: async () => SECRET },
      payments: new Proxy({}, { get: () => down }) as never,
      customers: new Proxy({}, { get: () => down }) as never,
      timeline: new Proxy({}, { get: () => down }) as never,
      pending: new Proxy({}, { get: () => down }) as never,
      derived: new Proxy({}, { get: () => down }) as never,
      payers: new Proxy({}, { get: () => down }) as never,
      list: new Proxy({}, { get: () => down }) as never,
      visits: new Proxy({}, { get: () => down }) as never,
      rates: async () => () => 1,
      clock: () => NOW,
    });
    const body = fixture('stripe', 'charge.succeeded.json');
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: SECRET,
      timestamp: Math.floor(NOW / 1000),
    });
    const res = await handler(
      {
        version: '2.0',
        routeKey: 'POST /api/webhooks/{provider}/{domain}',
        rawPath: '/api/webhooks/stripe/example.com',
        rawQueryString: '',
        headers: { 'stripe-signature': signature },
        pathParameters: { provider: 'stripe', domain: 'example.com' },
        isBase64Encoded: false,
        body,
        requestContext: {
          http: { method: 'POST', path: '/', protocol: 'HTTP/1.1', sourceIp: '1.1.1.1', userAgent: 'Stripe/1.0' },
        } as never,
      },
      localContext('webhook'),
    );
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body ?? '{}')).toHaveProperty('error');
  });
});
