import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PaymentFact, ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import {
  PROVIDER_MODULES,
  WebhookPayloadError,
  WebhookSignatureError,
} from '../../lambdas/domain/payments/providers/index.js';
import { converge, fixture, fixtureJson } from './fixture.js';

const ls = PROVIDER_MODULES.lemonsqueezy;
const SECRET = 'lemon-signing-secret-42';
const NOW = Date.UTC(2026, 2, 2, 10, 20, 0);
const VISITOR = 'l3m0n5qz7v1s2t9k';

function sign(body: string, secret = SECRET): Record<string, string> {
  return { 'x-signature': createHmac('sha256', secret).update(body).digest('hex') };
}

function factsOf(name: string): ProviderFacts | null {
  const body = fixture('lemonsqueezy', name);
  return ls.facts(ls.verify(body, sign(body), SECRET, NOW));
}

/** A fact's fields without its id and aliases: what a merged row holds. */
function withoutIds<T extends { id: string; aliases: string[] }>(fact: T): Omit<T, 'id' | 'aliases'> {
  const { id: _id, aliases: _aliases, ...fields } = fact;
  return fields;
}

function onlyPayment(f: ProviderFacts | null): PaymentFact {
  expect(f?.payments).toHaveLength(1);
  return f!.payments[0]!;
}

/** A fixture with some `data.attributes` replaced. */
function withAttributes(name: string, patch: Record<string, unknown>, eventName?: string): Record<string, unknown> {
  const event = fixtureJson('lemonsqueezy', name) as {
    meta: Record<string, unknown>;
    data: { attributes: Record<string, unknown> };
  };
  return {
    ...event,
    meta: { ...event.meta, ...(eventName ? { event_name: eventName } : {}) },
    data: { ...event.data, attributes: { ...event.data.attributes, ...patch } },
  };
}

describe('lemonsqueezy verify', () => {
  const body = fixture('lemonsqueezy', 'order_created.json');

  it('accepts a correctly signed delivery (hex in either case) and returns the parsed event', () => {
    expect(ls.verify(body, sign(body), SECRET, NOW)).toEqual(JSON.parse(body));
    expect(ls.verify(body, { 'x-signature': sign(body)['x-signature']!.toUpperCase() }, SECRET, NOW)).toEqual(
      JSON.parse(body),
    );
  });

  it('has no timestamp to go stale: a delivery verifies whenever it arrives (facts are idempotent)', () => {
    expect(() => ls.verify(body, sign(body), SECRET, NOW + 365 * 86_400_000)).not.toThrow();
  });

  it.each([
    [
      'wrong secret',
      () => ls.verify(body, sign(body, 'another-secret'), SECRET, NOW),
      'webhook signature does not match',
    ],
    [
      'tampered body',
      () => ls.verify(body.replace('"total": 1199', '"total": 1'), sign(body), SECRET, NOW),
      'webhook signature does not match',
    ],
    ['missing header', () => ls.verify(body, {}, SECRET, NOW), 'missing webhook signature'],
    [
      'truncated signature',
      () => ls.verify(body, { 'x-signature': sign(body)['x-signature']!.slice(0, 20) }, SECRET, NOW),
      'webhook signature does not match',
    ],
    [
      'non-hex signature',
      () => ls.verify(body, { 'x-signature': 'zz' }, SECRET, NOW),
      'webhook signature does not match',
    ],
    ['missing secret', () => ls.verify(body, sign(body, ''), '', NOW), 'webhook secret is not configured'],
  ])('rejects a delivery with a %s', (_case, call, message) => {
    expect(call).toThrow(WebhookSignatureError);
    expect(call).toThrow(message);
  });

  it('answers a signed body that is not JSON with a payload error', () => {
    expect(() => ls.verify('{', sign('{'), SECRET, NOW)).toThrow(WebhookPayloadError);
  });
});

describe('lemonsqueezy facts: subscription story', () => {
  it('order_created (first payment of the subscription) → the order, USD value from total_usd', () => {
    expect(factsOf('order_created.json')).toStrictEqual({
      event_id: 'order_created:1',
      event_type: 'order_created',
      payments: [
        {
          provider: 'lemonsqueezy',
          id: '1',
          aliases: [],
          ts: Date.UTC(2021, 7, 11, 13, 47, 26),
          amount: 1199,
          currency: 'USD',
          amount_usd: 11.99,
          status: 'paid',
          customer_id: '1',
          visitor_id: VISITOR,
          is_renewal: false,
        },
      ],
      subscriptions: [],
      customers: [],
    });
  });

  it('subscription_payment_success with billing_reason initial states no payment (the order already did)', () => {
    expect(factsOf('subscription_payment_success.initial.json')).toStrictEqual({
      event_id: 'subscription_payment_success:1',
      event_type: 'subscription_payment_success',
      payments: [],
      subscriptions: [],
      customers: [],
    });
  });

  it('subscription_payment_success for a renewal → keyed by the subscription invoice', () => {
    expect(onlyPayment(factsOf('subscription_payment_success.renewal.json'))).toStrictEqual({
      provider: 'lemonsqueezy',
      id: 'subscription-invoice:2',
      aliases: [],
      ts: Date.UTC(2021, 8, 12, 0, 0, 4),
      amount: 1199,
      currency: 'USD',
      amount_usd: 11.99,
      status: 'paid',
      customer_id: '1',
      visitor_id: VISITOR,
      is_renewal: true,
      subscription_id: '1',
    });
  });

  it('subscription_payment_refunded → the same invoice, partly refunded', () => {
    const refund = onlyPayment(factsOf('subscription_payment_refunded.json'));
    expect(refund).toMatchObject({ id: 'subscription-invoice:2', refunded: 500, status: 'paid' });
    const renewal = onlyPayment(factsOf('subscription_payment_success.renewal.json'));
    expect(converge([renewal, refund])).toStrictEqual([
      {
        ids: ['subscription-invoice:2'],
        fact: expect.objectContaining({ amount: 1199, refunded: 500, status: 'paid', is_renewal: true }),
      },
    ]);
  });

  it('an order and a subscription invoice with the same number stay two payments', () => {
    const order = onlyPayment(factsOf('order_created.json'));
    const renewal = onlyPayment(factsOf('subscription_payment_success.renewal.json'));
    const invoiceOne = { ...renewal, id: 'subscription-invoice:1' };
    expect(converge([order, invoiceOne])).toHaveLength(2);
  });

  it.each([
    ['subscription_created.json', 'active', true, Date.UTC(2021, 7, 11, 13, 54, 19)],
    ['subscription_cancelled.json', 'cancelled', false, Date.UTC(2022, 9, 30, 18, 22, 5)],
    ['subscription_expired.json', 'expired', false, Date.UTC(2022, 10, 12, 0, 0, 7)],
  ])('%s → subscription %s, paying %s', (name, status, paying, ts) => {
    expect(factsOf(name)).toStrictEqual({
      event_id: `${name.replace('.json', '')}:1`,
      event_type: name.replace('.json', ''),
      payments: [],
      subscriptions: [
        { provider: 'lemonsqueezy', subscription_id: '1', customer_id: '1', status, paying, visitor_id: VISITOR, ts },
      ],
      customers: [],
    });
  });

  it.each(['subscription_updated', 'subscription_resumed', 'subscription_paused', 'subscription_unpaused'])(
    '%s is a subscription event too',
    (name) => {
      expect(ls.facts(withAttributes('subscription_created.json', {}, name))?.subscriptions).toHaveLength(1);
    },
  );

  it('on_trial and past_due subscriptions are paying, paused and unpaid are not', () => {
    const paying = (status: string) =>
      ls.facts(withAttributes('subscription_created.json', { status }))!.subscriptions[0]!.paying;
    expect([paying('on_trial'), paying('past_due'), paying('paused'), paying('unpaid')]).toStrictEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('lemonsqueezy facts: one-time EUR purchase, refunded in part then in full', () => {
  const base = {
    provider: 'lemonsqueezy',
    id: '2',
    aliases: [],
    ts: Date.UTC(2021, 8, 2, 15, 4, 11),
    amount: 3000,
    currency: 'EUR',
    amount_usd: 32.4,
    customer_id: '2',
    visitor_id: 'q8w7e6r5t4y3u2i1',
    is_renewal: false,
  };

  it('order_created: EUR minor units, Lemon Squeezy’s own USD value', () => {
    expect(onlyPayment(factsOf('order_created.eur.json'))).toStrictEqual({ ...base, status: 'paid' });
  });

  it('order_refunded, partial → paid with refunded > 0; full → refunded', () => {
    expect(onlyPayment(factsOf('order_refunded.partial.json'))).toStrictEqual({
      ...base,
      refunded: 1000,
      status: 'paid',
    });
    expect(onlyPayment(factsOf('order_refunded.full.json'))).toStrictEqual({
      ...base,
      refunded: 3000,
      status: 'refunded',
    });
  });

  it('the three events are one payment', () => {
    const names = ['order_created.eur.json', 'order_refunded.partial.json', 'order_refunded.full.json'];
    expect(converge(names.map((n) => onlyPayment(factsOf(n))))).toStrictEqual([
      { ids: ['2'], fact: { ...withoutIds(base), refunded: 3000, status: 'refunded' } },
    ]);
  });
});

describe('lemonsqueezy facts: unused and malformed events', () => {
  it('event names we do not use → null', () => {
    expect(factsOf('subscription_payment_failed.json')).toBeNull();
    expect(
      ls.facts({
        meta: { event_name: 'license_key_created' },
        data: { type: 'license-keys', id: '1', attributes: {} },
      }),
    ).toBeNull();
  });

  it('a $0 order states no payment', () => {
    expect(ls.facts(withAttributes('order_created.json', { total: 0, total_usd: 0 }))?.payments).toStrictEqual([]);
  });

  it.each([
    ['a wrongly typed total', () => withAttributes('order_created.json', { total: '1199' })],
    ['a missing currency', () => withAttributes('order_created.json', { currency: undefined })],
    [
      'a renewal without subscription_id',
      () => withAttributes('subscription_payment_success.renewal.json', { subscription_id: null }),
    ],
    ['a subscription with a bad date', () => withAttributes('subscription_created.json', { updated_at: 'yesterday' })],
    ['no meta', () => ({ data: { type: 'orders', id: '1', attributes: {} } })],
  ])('%s → WebhookPayloadError', (_case, build) => {
    expect(() => ls.facts(build())).toThrow(WebhookPayloadError);
  });
});
