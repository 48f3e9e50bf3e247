import { createHmac } from 'node:crypto';
import { emptyPayment, mergePaymentFact } from '../../lambdas/domain/payments/payment.js';
import { describe, expect, it } from 'vitest';
import type { PaymentFact, ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import {
  PROVIDER_MODULES,
  WebhookPayloadError,
  WebhookSignatureError,
} from '../../lambdas/domain/payments/providers/index.js';
import { fixture, fixtureJson } from './fixture.js';

const paddle = PROVIDER_MODULES.paddle;
const SECRET = 'pdl_ntfset_01h8dzxgkvdwemdhbpcapj2tbj_6bzKGq2mlkXE4B0K6JqLQhKRVbUb7ds9';
/** The tests receive deliveries at 2023-09-11T08:08:00Z. */
const NOW = Date.UTC(2023, 8, 11, 8, 8, 0);

const CTM = 'ctm_01h7hswb86rtps5ggbq7ybydcw';
const SUB = 'sub_01h7ht5z5wdg9pz18jx1fagp8k';
const TXN1 = 'txn_01h7hst69d7tar4rm6vyeb0j36';
const VISITOR = 'p4d9l3e8v1s2t7r5';

function sign(body: string, opts: { secret?: string; tsS?: number } = {}): Record<string, string> {
  const ts = opts.tsS ?? Math.floor(NOW / 1000);
  const h1 = createHmac('sha256', opts.secret ?? SECRET)
    .update(`${ts}:${body}`)
    .digest('hex');
  return { 'paddle-signature': `ts=${ts};h1=${h1}` };
}

function factsOf(name: string): ProviderFacts | null {
  const body = fixture('paddle', name);
  return paddle.facts(paddle.verify(body, sign(body), SECRET, NOW));
}

function onlyPayment(f: ProviderFacts | null): PaymentFact {
  expect(f?.payments).toHaveLength(1);
  return f!.payments[0]!;
}

function withData(name: string, patch: Record<string, unknown>, eventType?: string): Record<string, unknown> {
  const event = fixtureJson('paddle', name) as { data: Record<string, unknown> };
  return { ...event, ...(eventType ? { event_type: eventType } : {}), data: { ...event.data, ...patch } };
}

describe('paddle verify', () => {
  const body = fixture('paddle', 'transaction.completed.json');

  it('accepts a correctly signed delivery and returns the parsed event', () => {
    expect(paddle.verify(body, sign(body), SECRET, NOW)).toEqual(JSON.parse(body));
  });

  it('accepts any matching h1 while a secret is rotated, and a signature up to 5 minutes old', () => {
    const ts = Math.floor(NOW / 1000) - 299;
    const good = sign(body, { tsS: ts })['paddle-signature']!.split(';h1=')[1];
    const header = `ts=${ts};h1=${'0'.repeat(64)};h1=${good}`;
    expect(() => paddle.verify(body, { 'paddle-signature': header }, SECRET, NOW)).not.toThrow();
  });

  it.each([
    [
      'wrong secret',
      () => paddle.verify(body, sign(body, { secret: 'pdl_ntfset_other' }), SECRET, NOW),
      'webhook signature does not match',
    ],
    [
      'tampered body',
      () => paddle.verify(body.replace('"grand_total": "65215"', '"grand_total": "1"'), sign(body), SECRET, NOW),
      'webhook signature does not match',
    ],
    ['missing header', () => paddle.verify(body, {}, SECRET, NOW), 'missing webhook signature'],
    [
      'header without h1',
      () => paddle.verify(body, { 'paddle-signature': `ts=${NOW / 1000}` }, SECRET, NOW),
      'malformed webhook signature',
    ],
    [
      'non-numeric ts',
      () => paddle.verify(body, { 'paddle-signature': 'ts=soon;h1=abc' }, SECRET, NOW),
      'malformed webhook signature',
    ],
    [
      'signature for another ts',
      () =>
        paddle.verify(
          body,
          { 'paddle-signature': sign(body)['paddle-signature']!.replace(/ts=\d+/, 'ts=1') },
          SECRET,
          NOW,
        ),
      'webhook signature does not match',
    ],
    [
      'stale timestamp',
      () => paddle.verify(body, sign(body, { tsS: NOW / 1000 - 301 }), SECRET, NOW),
      'webhook timestamp too old',
    ],
    ['missing secret', () => paddle.verify(body, sign(body), '', NOW), 'webhook secret is not configured'],
  ])('rejects a delivery with a %s', (_case, call, message) => {
    expect(call).toThrow(WebhookSignatureError);
    expect(call).toThrow(message);
  });
});

describe('paddle facts: subscription story', () => {
  it('transaction.completed (checkout) → the transaction, first payment, paid at capture', () => {
    expect(factsOf('transaction.completed.json')).toStrictEqual({
      event_id: 'evt_01h8e1jxjnw9ra6zarhnz1a7y1',
      event_type: 'transaction.completed',
      payments: [
        {
          provider: 'paddle',
          id: TXN1,
          aliases: [],
          ts: Date.parse('2023-08-11T08:07:34.792Z'),
          amount: 65215,
          currency: 'USD',
          amount_usd: 652.15,
          status: 'paid',
          customer_id: CTM,
          visitor_id: VISITOR,
          is_renewal: false,
          subscription_id: SUB,
        },
      ],
      subscriptions: [],
      customers: [],
    });
  });

  it('transaction.completed with origin subscription_recurring → renewal', () => {
    expect(onlyPayment(factsOf('transaction.completed.renewal.json'))).toStrictEqual({
      provider: 'paddle',
      id: 'txn_01h9x4b8mzv6r5q7c2k1d3f9e0',
      aliases: [],
      ts: Date.parse('2023-09-11T08:07:39.441Z'),
      amount: 65215,
      currency: 'USD',
      amount_usd: 652.15,
      status: 'paid',
      customer_id: CTM,
      visitor_id: VISITOR,
      is_renewal: true,
      subscription_id: SUB,
    });
  });

  it('adjustment.created awaiting approval states nothing; adjustment.updated approved → refund of that transaction', () => {
    expect(factsOf('adjustment.created.json')).toStrictEqual({
      event_id: 'evt_01h8c6tc8aa58zqj6h8a13r103',
      event_type: 'adjustment.created',
      payments: [],
      subscriptions: [],
      customers: [],
    });
    expect(onlyPayment(factsOf('adjustment.updated.json'))).toStrictEqual({
      provider: 'paddle',
      id: TXN1,
      aliases: [],
      currency: 'USD',
      refunds: [{ id: 'adj_01h8c6tbrkpdd7vx61w7b1r0ap', amount: 100 }],
      customer_id: CTM,
      subscription_id: SUB,
      // a partial refund: its time stands in for the payment's, its amount cannot
      fallback: { ts: 1692626923297 },
    });
  });

  it('the payment and its refund are one payment, still paid', () => {
    const payment = [
      onlyPayment(factsOf('transaction.completed.json')),
      onlyPayment(factsOf('adjustment.updated.json')),
    ].reduce(mergePaymentFact, emptyPayment('example.com', 'paddle', TXN1));
    expect(payment).toMatchObject({ amount: 65215, refunded: 100, status: 'paid', visitor_id: VISITOR });
    // A second partial refund of the same transaction adds up; a redelivery of either does not.
    const second = { ...onlyPayment(factsOf('adjustment.updated.json')), refunds: [{ id: 'adj_second', amount: 250 }] };
    const twice = [second, onlyPayment(factsOf('adjustment.updated.json')), second].reduce(mergePaymentFact, payment);
    expect(twice).toMatchObject({ refunded: 350, status: 'paid' });
  });

  it('credits and chargebacks are not refunds', () => {
    expect(paddle.facts(withData('adjustment.updated.json', { action: 'credit' }))?.payments).toStrictEqual([]);
    expect(paddle.facts(withData('adjustment.updated.json', { action: 'chargeback' }))?.payments).toStrictEqual([]);
  });

  it.each([
    ['subscription.created.json', 'active', true, '2023-08-11T08:07:38.334150Z'],
    ['subscription.activated.json', 'active', true, null],
    ['subscription.past_due.json', 'past_due', true, null],
    ['subscription.canceled.json', 'canceled', false, '2023-08-11T15:23:01.697145Z'],
  ])('%s → subscription %s, paying %s', (name, status, paying, occurredAt) => {
    const event = fixtureJson('paddle', name) as { event_id: string; event_type: string; occurred_at: string };
    expect(factsOf(name)).toStrictEqual({
      event_id: event.event_id,
      event_type: event.event_type,
      payments: [],
      subscriptions: [
        {
          provider: 'paddle',
          subscription_id: SUB,
          customer_id: CTM,
          status,
          paying,
          visitor_id: VISITOR,
          ts: Date.parse(occurredAt ?? event.occurred_at),
        },
      ],
      customers: [],
    });
  });
});

describe('paddle facts: one-time EUR purchase, refunded in full', () => {
  const TXN_EUR = 'txn_01h8f7sq2v5e6r7t8y9u0i1o2p';

  it('transaction.completed in EUR: USD value from payout_totals (paid out in USD)', () => {
    expect(onlyPayment(factsOf('transaction.completed.eur.json'))).toStrictEqual({
      provider: 'paddle',
      id: TXN_EUR,
      aliases: [],
      ts: Date.parse('2023-08-23T10:02:08.903Z'),
      amount: 23681,
      currency: 'EUR',
      amount_usd: 257.47,
      status: 'paid',
      customer_id: 'ctm_01h8f7rr1w2x3c4v5b6n7m8k9j',
      visitor_id: 'e8u2r5o9p3a6y1b4',
      is_renewal: false,
    });
  });

  it('no USD value when the payout currency is not USD either', () => {
    const event = fixtureJson('paddle', 'transaction.completed.eur.json') as {
      data: { details: Record<string, unknown> };
    };
    const details = { ...event.data.details, payout_totals: { grand_total: '23681', currency_code: 'EUR' } };
    const fact = onlyPayment(paddle.facts({ ...event, data: { ...event.data, details } }));
    expect(fact.amount_usd).toBeUndefined();
  });

  it('a full refund adjustment marks the payment refunded', () => {
    expect(onlyPayment(factsOf('adjustment.updated.full.json'))).toStrictEqual({
      provider: 'paddle',
      id: TXN_EUR,
      aliases: [],
      currency: 'EUR',
      refunds: [{ id: 'adj_01h8k2kz3x5c7v9b1n3m5q7w9e', amount: 23681 }],
      status: 'refunded',
      customer_id: 'ctm_01h8f7rr1w2x3c4v5b6n7m8k9j',
      // refunded in full: the refund's time and amount stand in for the transaction's
      fallback: { ts: 1692967131623, amount: 23681 },
    });
    const payment = [
      onlyPayment(factsOf('transaction.completed.eur.json')),
      onlyPayment(factsOf('adjustment.updated.full.json')),
    ].reduce(mergePaymentFact, emptyPayment('example.com', 'paddle', TXN_EUR));
    expect(payment).toMatchObject({ amount: 23681, refunded: 23681, status: 'refunded' });
  });
});

describe('paddle facts: unused and malformed events', () => {
  it('event types we do not use → null', () => {
    expect(factsOf('transaction.paid.json')).toBeNull();
  });

  it('a $0 transaction (trial, payment-method change) states no payment', () => {
    const event = fixtureJson('paddle', 'transaction.completed.json') as {
      data: { details: { totals: Record<string, unknown> } };
    };
    const details = { ...event.data.details, totals: { ...event.data.details.totals, grand_total: '0' } };
    expect(paddle.facts({ ...event, data: { ...event.data, details } })?.payments).toStrictEqual([]);
  });

  it.each([
    [
      'an amount sent as a number',
      () => withData('adjustment.updated.json', { totals: { total: 100, currency_code: 'USD' } }),
    ],
    [
      'a negative amount string',
      () => withData('adjustment.updated.json', { totals: { total: '-100', currency_code: 'USD' } }),
    ],
    ['a transaction without details', () => withData('transaction.completed.json', { details: null })],
    // Found by the reliability fuzz: an empty id became an empty DynamoDB key, a 503 the provider would retry for ever.
    ['a transaction with an empty id', () => withData('transaction.completed.json', { id: '' })],
    ['a subscription without status', () => withData('subscription.created.json', { status: undefined })],
    ['no event_id', () => ({ event_type: 'transaction.completed', occurred_at: '2023-08-22T07:15:45Z', data: {} })],
  ])('%s → WebhookPayloadError', (_case, build) => {
    expect(() => paddle.facts(build())).toThrow(WebhookPayloadError);
  });
});
