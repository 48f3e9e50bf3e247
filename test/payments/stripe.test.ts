import { Stripe } from 'stripe';
import { describe, expect, it } from 'vitest';
import { FootfallError } from '../../lambdas/domain/errors.js';
import type { PaymentFact, ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import {
  PROVIDER_MODULES,
  WebhookPayloadError,
  WebhookSignatureError,
} from '../../lambdas/domain/payments/providers/index.js';
import { converge, fixture, fixtureJson } from './fixture.js';

const stripe = PROVIDER_MODULES.stripe;
const SECRET = 'whsec_footfall_test_secret';
/** The moment the tests "receive" deliveries; 2026-03-02T10:20:00Z. */
const NOW = Date.UTC(2026, 2, 2, 10, 20, 0);

const CUS = 'cus_QXg1o8vcGmoR32';
const PI = 'pi_1PgafyB7WZ01zgkWSjxsAJo3';
const CH = 'ch_1PgafuB7WZ01zgkWXYmPNZs8';
const CS = 'cs_test_a1YS1URlnyQCN5fUUduORoQ7Pw41PJqDWkIVQCpJPqkfIhd6tVY8XB1OLY';
const VISITOR = 'k3x9q2m7p1w8r4t6';
const PAID_S = Date.UTC(2026, 2, 2, 10, 15, 0) / 1000;

const SUB = 'sub_1Pgc6rB7WZ01zgkWNy0Cn5nw';
const IN1 = 'in_1Pgc6tB7WZ01zgkWu9fdqL6I';
const CS_SUB = 'cs_test_b1Pgc6qB7WZ01zgkWsubscr1ptionCheckout0001';
const PI_SUB = 'pi_3Pgc6uB7WZ01zgkW1nv0ice01';
const CH_SUB = 'ch_3Pgc6uB7WZ01zgkW1nv0ice01';
const VISITOR_SUB = 'm4n5b6v7c8x9z0l1';
const START_S = Date.UTC(2026, 2, 4, 14, 0, 0) / 1000;

function headers(body: string, opts: { secret?: string; timestampS?: number } = {}) {
  const header = Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: opts.secret ?? SECRET,
    timestamp: opts.timestampS ?? Math.floor(NOW / 1000),
  });
  return { 'stripe-signature': header };
}

/** Verifies a fixture as delivered now and returns its facts. */
function factsOf(name: string): ProviderFacts | null {
  const body = fixture('stripe', name);
  return stripe.facts(stripe.verify(body, headers(body), SECRET, NOW));
}

/** Facts of a variant event built from a fixture (no signature involved). */
function factsOfEvent(event: unknown): ProviderFacts | null {
  return stripe.facts(event);
}

function withObject(name: string, type: string, patch: Record<string, unknown>): Record<string, unknown> {
  const event = fixtureJson('stripe', name);
  const data = event.data as { object: Record<string, unknown> };
  return { ...event, type, data: { object: { ...data.object, ...patch } } };
}

function onlyPayment(f: ProviderFacts | null): PaymentFact {
  expect(f?.payments).toHaveLength(1);
  return f!.payments[0]!;
}

describe('stripe verify', () => {
  const body = fixture('stripe', 'charge.succeeded.json');

  it('accepts a correctly signed delivery and returns the parsed event', () => {
    expect(stripe.verify(body, headers(body), SECRET, NOW)).toEqual(JSON.parse(body));
  });

  it('accepts a signature up to 300 s old', () => {
    expect(() => stripe.verify(body, headers(body, { timestampS: NOW / 1000 - 299 }), SECRET, NOW)).not.toThrow();
  });

  it.each([
    [
      'wrong secret',
      () => stripe.verify(body, headers(body, { secret: 'whsec_other' }), SECRET, NOW),
      'webhook signature does not match',
    ],
    [
      'tampered body',
      () => stripe.verify(body.replace('"amount": 4900', '"amount": 1'), headers(body), SECRET, NOW),
      'webhook signature does not match',
    ],
    ['missing header', () => stripe.verify(body, {}, SECRET, NOW), 'missing webhook signature'],
    [
      'garbage header',
      () => stripe.verify(body, { 'stripe-signature': 'nonsense' }, SECRET, NOW),
      'malformed webhook signature',
    ],
    [
      'stale timestamp',
      () => stripe.verify(body, headers(body, { timestampS: NOW / 1000 - 301 }), SECRET, NOW),
      'webhook timestamp too old',
    ],
    ['empty secret', () => stripe.verify(body, headers(body), '', NOW), 'webhook signature does not match'],
  ])('rejects a delivery with a %s', (_case, call, message) => {
    let error: unknown;
    try {
      call();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WebhookSignatureError);
    expect(error).toBeInstanceOf(FootfallError);
    expect((error as WebhookSignatureError).status).toBe(400);
    expect((error as WebhookSignatureError).message).toBe(message);
  });

  it('answers a signed body that is not JSON with a payload error', () => {
    const text = 'not json';
    expect(() => stripe.verify(text, headers(text), SECRET, NOW)).toThrow(WebhookPayloadError);
  });
});

describe('stripe facts: one-time Checkout purchase', () => {
  it('checkout.session.completed (payment mode) is keyed by its PaymentIntent, the session as alias', () => {
    expect(factsOf('checkout.session.completed.payment.json')).toStrictEqual({
      event_id: 'evt_1PgagAB7WZ01zgkWcs0Pay01',
      event_type: 'checkout.session.completed',
      payments: [
        {
          provider: 'stripe',
          id: PI,
          aliases: [CS],
          ts: (PAID_S + 2) * 1000,
          amount: 4900,
          currency: 'USD',
          amount_usd: 49,
          status: 'paid',
          customer_id: CUS,
          visitor_id: VISITOR,
          is_renewal: false,
        },
      ],
      subscriptions: [],
      customers: [{ provider: 'stripe', customer_id: CUS, visitor_id: VISITOR }],
    });
  });

  it('payment_intent.succeeded names its latest charge', () => {
    expect(factsOf('payment_intent.succeeded.json')).toStrictEqual({
      event_id: 'evt_3PgagAB7WZ01zgkWpiSucc01',
      event_type: 'payment_intent.succeeded',
      payments: [
        {
          provider: 'stripe',
          id: PI,
          aliases: [CH],
          ts: (PAID_S + 1) * 1000,
          amount: 4900,
          currency: 'USD',
          amount_usd: 49,
          status: 'paid',
          customer_id: CUS,
        },
      ],
      subscriptions: [],
      customers: [],
    });
  });

  it('payment_intent.succeeded of a partial capture counts what was received, not what was authorized', () => {
    // https://docs.stripe.com/payments/place-a-hold-on-a-payment-method#capture-funds: `amount_received` is what was captured.
    expect(onlyPayment(factsOf('payment_intent.succeeded.partial_capture.json'))).toStrictEqual({
      provider: 'stripe',
      id: 'pi_3PgagAB7WZ01zgkWcapt0001',
      aliases: ['ch_3PgagAB7WZ01zgkWcapt0001'],
      ts: 1772533000 * 1000,
      amount: 6500,
      currency: 'USD',
      amount_usd: 65,
      status: 'paid',
    });
  });

  it('charge.refunded of a charge captured in part states the captured amount, not the authorized one', () => {
    // https://docs.stripe.com/api/charges/object#charge_object-amount_captured: below `amount` after a partial capture.
    const refund = withObject('charge.refunded.partial.json', 'charge.refunded', {
      amount: 8000,
      amount_captured: 6500,
      amount_refunded: 6500,
      refunded: true,
    });
    expect(onlyPayment(factsOfEvent(refund))).toMatchObject({ amount: 6500, refunded: 6500, status: 'refunded' });
  });

  it('charge.succeeded is keyed by its PaymentIntent, the charge as alias', () => {
    expect(onlyPayment(factsOf('charge.succeeded.json'))).toStrictEqual({
      provider: 'stripe',
      id: PI,
      aliases: [CH],
      ts: (PAID_S + 1) * 1000,
      amount: 4900,
      currency: 'USD',
      amount_usd: 49,
      status: 'paid',
      customer_id: CUS,
    });
  });

  it('charge.refunded, partial: cumulative amount_refunded, still paid, no ts but the charge time as a fallback', () => {
    expect(onlyPayment(factsOf('charge.refunded.partial.json'))).toStrictEqual({
      provider: 'stripe',
      id: PI,
      aliases: [CH],
      amount: 4900,
      currency: 'USD',
      amount_usd: 49,
      refunded: 1500,
      status: 'paid',
      customer_id: CUS,
      // the charge's created: the payment's time, standing in until the payment's event comes
      fallback: { ts: 1772446500_000 },
    });
  });

  it('charge.refunded, full: refunded', () => {
    expect(onlyPayment(factsOf('charge.refunded.full.json'))).toStrictEqual({
      provider: 'stripe',
      id: PI,
      aliases: [CH],
      amount: 4900,
      currency: 'USD',
      amount_usd: 49,
      refunded: 4900,
      status: 'refunded',
      customer_id: CUS,
      // the charge's created: the payment's time, standing in until the payment's event comes
      fallback: { ts: 1772446500_000 },
    });
  });

  it('the session, payment intent and charge converge on one payment, then the refunds update it', () => {
    const names = ['charge.succeeded.json', 'checkout.session.completed.payment.json', 'payment_intent.succeeded.json'];
    const purchase = names.map((n) => onlyPayment(factsOf(n)));
    expect(converge(purchase)).toStrictEqual([
      {
        ids: [CH, CS, PI].sort(),
        fact: {
          provider: 'stripe',
          ts: (PAID_S + 1) * 1000,
          amount: 4900,
          currency: 'USD',
          amount_usd: 49,
          status: 'paid',
          customer_id: CUS,
          visitor_id: VISITOR,
          is_renewal: false,
        },
      },
    ]);
    const partial = onlyPayment(factsOf('charge.refunded.partial.json'));
    const [afterPartial] = converge([...purchase, partial]);
    expect(afterPartial).toMatchObject({
      ids: [CH, CS, PI].sort(),
      fact: { refunded: 1500, status: 'paid', visitor_id: VISITOR },
    });
    const full = onlyPayment(factsOf('charge.refunded.full.json'));
    // A delivery of the partial refund arriving after the full one changes nothing.
    expect(converge([...purchase, partial, full, partial])).toStrictEqual([
      {
        ids: [CH, CS, PI].sort(),
        fact: expect.objectContaining({ amount: 4900, refunded: 4900, status: 'refunded', visitor_id: VISITOR }),
      },
    ]);
  });
});

describe('stripe facts: failed payment in JPY', () => {
  it('payment_intent.payment_failed: failed, amount in yen (exponent 0), no USD value', () => {
    expect(onlyPayment(factsOf('payment_intent.payment_failed.json'))).toStrictEqual({
      provider: 'stripe',
      id: 'pi_1PgbJpyB7WZ01zgkWdecl0001',
      aliases: ['ch_1PgbJpyB7WZ01zgkWdecl0001'],
      ts: (Date.UTC(2026, 2, 3, 1, 20, 0) / 1000 + 1) * 1000,
      amount: 5000,
      currency: 'JPY',
      status: 'failed',
      visitor_id: 'a7b7c7d7e7f7g7h7',
    });
  });

  it('charge.failed converges with its PaymentIntent', () => {
    const pi = onlyPayment(factsOf('payment_intent.payment_failed.json'));
    const charge = onlyPayment(factsOf('charge.failed.json'));
    expect(charge).toStrictEqual({ ...pi });
    expect(converge([pi, charge])).toHaveLength(1);
  });
});

describe('stripe facts: subscription through Checkout', () => {
  it('checkout.session.completed (subscription mode) is keyed by its first invoice, with the subscription', () => {
    expect(factsOf('checkout.session.completed.subscription.json')).toStrictEqual({
      event_id: 'evt_1Pgc6vB7WZ01zgkWcsSub001',
      event_type: 'checkout.session.completed',
      payments: [
        {
          provider: 'stripe',
          id: IN1,
          aliases: [CS_SUB],
          ts: (START_S + 3) * 1000,
          amount: 2000,
          currency: 'USD',
          amount_usd: 20,
          status: 'paid',
          customer_id: CUS,
          visitor_id: VISITOR_SUB,
          is_renewal: false,
          subscription_id: SUB,
        },
      ],
      subscriptions: [],
      customers: [{ provider: 'stripe', customer_id: CUS, visitor_id: VISITOR_SUB }],
    });
  });

  it('invoice.paid (basil shape, no PaymentIntent on the invoice): keyed by the invoice, first payment', () => {
    expect(onlyPayment(factsOf('invoice.paid.subscription_create.json'))).toStrictEqual({
      provider: 'stripe',
      id: IN1,
      aliases: [],
      ts: (START_S + 2) * 1000,
      amount: 2000,
      currency: 'USD',
      amount_usd: 20,
      status: 'paid',
      customer_id: CUS,
      visitor_id: VISITOR_SUB,
      is_renewal: false,
      subscription_id: SUB,
    });
  });

  it('invoice.paid with `payments` included finds the PaymentIntent there', () => {
    const event = withObject('invoice.paid.subscription_create.json', 'invoice.paid', {
      payments: {
        object: 'list',
        data: [{ status: 'paid', payment: { type: 'payment_intent', payment_intent: PI_SUB } }],
      },
    });
    expect(onlyPayment(factsOfEvent(event))).toMatchObject({ id: PI_SUB, aliases: [IN1] });
  });

  it('invoice_payment.paid links the invoice to its PaymentIntent and states nothing else', () => {
    expect(onlyPayment(factsOf('invoice_payment.paid.json'))).toStrictEqual({
      provider: 'stripe',
      id: PI_SUB,
      aliases: [IN1],
    });
  });

  it('session, invoice, invoice payment and payment intent of the first payment converge on one payment', () => {
    const names = [
      'payment_intent.succeeded.subscription.json',
      'checkout.session.completed.subscription.json',
      'invoice.paid.subscription_create.json',
      'invoice_payment.paid.json',
    ];
    const merged = converge(names.map((n) => onlyPayment(factsOf(n))));
    expect(merged).toHaveLength(1);
    expect(merged[0]!.ids).toStrictEqual([CH_SUB, CS_SUB, IN1, PI_SUB].sort());
    expect(merged[0]!.fact).toMatchObject({
      amount: 2000,
      status: 'paid',
      visitor_id: VISITOR_SUB,
      is_renewal: false,
      subscription_id: SUB,
    });
  });

  it('without invoice_payment.paid, a basil PaymentIntent stays apart from its invoice (why endpoints must subscribe to it)', () => {
    const names = ['payment_intent.succeeded.subscription.json', 'invoice.paid.subscription_create.json'];
    expect(converge(names.map((n) => onlyPayment(factsOf(n))))).toHaveLength(2);
  });

  it('invoice.paid on a pre-basil endpoint (invoice.payment_intent): renewal keyed by its PaymentIntent', () => {
    expect(factsOf('invoice.paid.subscription_cycle.legacy.json')).toStrictEqual({
      event_id: 'evt_1PgqRoB7WZ01zgkWinPaid02',
      event_type: 'invoice.paid',
      payments: [
        {
          provider: 'stripe',
          id: 'pi_3PgqRnwB7WZ01zgkWrenew0001',
          aliases: ['in_1PgqRnwB7WZ01zgkWrenew0001', 'ch_3PgqRnwB7WZ01zgkWrenew0001'],
          ts: Date.UTC(2026, 3, 4, 15, 2, 0),
          amount: 2000,
          currency: 'USD',
          amount_usd: 20,
          status: 'paid',
          customer_id: CUS,
          visitor_id: VISITOR_SUB,
          is_renewal: true,
          subscription_id: SUB,
        },
      ],
      subscriptions: [],
      customers: [],
    });
  });

  it("invoice.payment_failed: a failed renewal, keyed like its invoice.paid would be, at the attempt's time", () => {
    expect(factsOf('invoice.payment_failed.legacy.json')).toStrictEqual({
      event_id: 'evt_1PhbFaB7WZ01zgkWinFail03',
      event_type: 'invoice.payment_failed',
      payments: [
        {
          provider: 'stripe',
          id: 'pi_3PgqFalB7WZ01zgkWfail000001',
          aliases: ['in_1PgqFalB7WZ01zgkWfail000001', 'ch_3PgqFalB7WZ01zgkWfail000001'],
          ts: Date.UTC(2026, 4, 5, 15, 2, 0),
          amount: 2000,
          currency: 'USD',
          amount_usd: 20,
          status: 'failed',
          customer_id: CUS,
          visitor_id: VISITOR_SUB,
          is_renewal: true,
          subscription_id: SUB,
        },
      ],
      subscriptions: [],
      customers: [],
    });
    // A retry that succeeds is invoice.paid on the same invoice and PaymentIntent: one row, paid.
    const paid = withObject('invoice.payment_failed.legacy.json', 'invoice.paid', {
      status: 'paid',
      paid: true,
      amount_paid: 2000,
      amount_remaining: 0,
      status_transitions: { paid_at: 1778252520 },
    });
    const merged = converge(
      [factsOf('invoice.payment_failed.legacy.json'), factsOfEvent(paid)].map((f) => onlyPayment(f)),
    );
    expect(merged).toHaveLength(1);
    expect(merged[0]!.fact).toMatchObject({ status: 'paid', amount: 2000, is_renewal: true });
    // An invoice with nothing due states no payment.
    expect(
      factsOfEvent(withObject('invoice.payment_failed.legacy.json', 'invoice.payment_failed', { amount_due: 0 }))
        ?.payments,
    ).toStrictEqual([]);
  });

  it('a $0 invoice (trial start) and a no-payment checkout state no payment', () => {
    expect(
      factsOfEvent(withObject('invoice.paid.subscription_create.json', 'invoice.paid', { amount_paid: 0 }))?.payments,
    ).toStrictEqual([]);
    const trial = factsOfEvent(
      withObject('checkout.session.completed.subscription.json', 'checkout.session.completed', {
        payment_status: 'no_payment_required',
        amount_total: 0,
      }),
    );
    expect(trial).toMatchObject({
      payments: [],
      customers: [{ provider: 'stripe', customer_id: CUS, visitor_id: VISITOR_SUB }],
    });
  });

  it.each([
    ['customer.subscription.created.json', 'active', true, (START_S + 1) * 1000],
    ['customer.subscription.updated.json', 'past_due', true, Date.UTC(2026, 4, 4, 15, 0, 0)],
    ['customer.subscription.deleted.json', 'canceled', false, Date.UTC(2026, 4, 20, 15, 0, 0)],
  ])('%s → subscription %s, paying %s', (name, status, paying, ts) => {
    expect(factsOf(name)).toMatchObject({
      payments: [],
      customers: [],
      subscriptions: [
        { provider: 'stripe', subscription_id: SUB, customer_id: CUS, status, paying, visitor_id: VISITOR_SUB, ts },
      ],
    });
    expect(factsOf(name)!.subscriptions[0]).toStrictEqual({
      provider: 'stripe',
      subscription_id: SUB,
      customer_id: CUS,
      status,
      paying,
      visitor_id: VISITOR_SUB,
      ts,
    });
  });
});

describe('stripe facts: customers, unused and malformed events', () => {
  it('customer.created with a visitor id in metadata → customer fact', () => {
    expect(factsOf('customer.created.json')).toStrictEqual({
      event_id: 'evt_1Pgc6pB7WZ01zgkWcusCrt01',
      event_type: 'customer.created',
      payments: [],
      subscriptions: [],
      customers: [{ provider: 'stripe', customer_id: CUS, visitor_id: VISITOR_SUB }],
    });
  });

  it('customer.updated without one → no facts; an invalid visitor id is ignored', () => {
    expect(
      factsOfEvent(withObject('customer.created.json', 'customer.updated', { metadata: {} }))?.customers,
    ).toStrictEqual([]);
    expect(
      factsOfEvent(
        withObject('customer.created.json', 'customer.updated', { metadata: { footfall_visitor_id: 'no spaces!' } }),
      )?.customers,
    ).toStrictEqual([]);
  });

  it('event types we do not use → null', () => {
    expect(factsOf('plan.created.json')).toBeNull();
    expect(
      factsOfEvent({ id: 'evt_1', type: 'payout.paid', created: 1, data: { object: { nonsense: true } } }),
    ).toBeNull();
  });

  it.each([
    [
      'a used type with a wrongly typed field',
      () => withObject('charge.succeeded.json', 'charge.succeeded', { amount: '4900' }),
    ],
    [
      'a used type with a missing field',
      () => withObject('invoice.paid.subscription_create.json', 'invoice.paid', { currency: undefined }),
    ],
    ['something that is not an event', () => ({ hello: 'world' })],
    ['null', () => null],
  ])('%s → WebhookPayloadError', (_case, build) => {
    expect(() => factsOfEvent(build())).toThrow(WebhookPayloadError);
  });
});

describe('stripe amounts in ISO minor units', () => {
  function chargeIn(currency: string, amount: number): PaymentFact {
    // Captured in full: `amount_captured` equals `amount`.
    return onlyPayment(
      factsOfEvent(
        withObject('charge.succeeded.json', 'charge.succeeded', { currency, amount, amount_captured: amount }),
      ),
    );
  }

  it('keeps JPY (zero-decimal) and KWD (three-decimal) amounts as Stripe sends them', () => {
    expect(chargeIn('jpy', 5000)).toMatchObject({ amount: 5000, currency: 'JPY' });
    expect(chargeIn('kwd', 12_340)).toMatchObject({ amount: 12_340, currency: 'KWD' });
    expect(chargeIn('jpy', 5000).amount_usd).toBeUndefined();
  });

  it('rescales ISK (two decimals at Stripe, none in ISO 4217) and MGA (none at Stripe, two in ISO 4217)', () => {
    expect(chargeIn('isk', 500_000)).toMatchObject({ amount: 5000, currency: 'ISK' });
    expect(chargeIn('mga', 20_000)).toMatchObject({ amount: 2_000_000, currency: 'MGA' });
  });
});
