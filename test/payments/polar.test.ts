import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PaymentFact, ProviderFacts } from '../../lambdas/domain/payments/facts.js';
import {
  PROVIDER_MODULES,
  WebhookPayloadError,
  WebhookSignatureError,
} from '../../lambdas/domain/payments/providers/index.js';
import { standardWebhooksKey } from '../../lambdas/domain/payments/providers/polar.js';
import { converge, fixture, fixtureJson } from './fixture.js';

const polar = PROVIDER_MODULES.polar;
/** A secret as Polar's dashboard shows it; Polar signs with its UTF-8 bytes. */
const SECRET = 'polar_whs_cDaCgENvOUZEzFk8CqBoxhR5FFz2EnVqWXkrG2Pwm9a';
/** The tests receive deliveries at 2026-03-10T09:31:05Z. */
const NOW = Date.UTC(2026, 2, 10, 9, 31, 5);

const CUS = '992fae2a-2a17-4b7a-8d9e-e287cf90131b';
const SUB = '5a7c9e1b-3d5f-4b8a-9c2e-7f1d3b5a9c0e';
const ORDER1 = '7d9f1b3e-5c7a-4e9b-8d1f-3a5c7e9b1d2f';
const ORDER2 = '2b4d6f8a-0c2e-4a6c-8e0a-4c6e8a0c2e4b';
const VISITOR = 'p0l4r7v1s2t3r9k5';

// The standardwebhooks package also checks the timestamp against the system clock; pin it to NOW.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

function sign(body: string, opts: { key?: string; atMs?: number; id?: string } = {}): Record<string, string> {
  const at = new Date(opts.atMs ?? NOW);
  const id = opts.id ?? 'msg_2t4Pq7Xv9Yb1Zc3Dd5Ff7Hh9Jk';
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(opts.key ?? standardWebhooksKey(SECRET)).sign(id, at, body),
  };
}

function factsOf(name: string): ProviderFacts | null {
  const body = fixture('polar', name);
  return polar.facts(polar.verify(body, sign(body), SECRET, NOW));
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

function withData(name: string, patch: Record<string, unknown>, type?: string): Record<string, unknown> {
  const event = fixtureJson('polar', name) as { data: Record<string, unknown> };
  return { ...event, ...(type ? { type } : {}), data: { ...event.data, ...patch } };
}

describe('polar verify', () => {
  const body = fixture('polar', 'order.paid.json');

  it('accepts a correctly signed delivery and returns the parsed event', () => {
    expect(polar.verify(body, sign(body), SECRET, NOW)).toEqual(JSON.parse(body));
  });

  it('uses the UTF-8 bytes of the dashboard secret as the HMAC key (base64-encoded for Standard Webhooks)', () => {
    expect(standardWebhooksKey('abc')).toBe('YWJj');
    const signedWithRawBytes = sign(body, { key: Buffer.from(SECRET, 'utf8').toString('base64') });
    expect(() => polar.verify(body, signedWithRawBytes, SECRET, NOW)).not.toThrow();
    // Taking the dashboard secret itself as base64 (a common mistake) does not verify.
    expect(() =>
      polar.verify(body, sign(body, { key: 'cDaCgENvOUZEzFk8CqBoxhR5FFz2EnVqWXkrG2Pwm9a=' }), SECRET, NOW),
    ).toThrow(WebhookSignatureError);
  });

  it('accepts a signature up to 5 minutes old', () => {
    expect(() => polar.verify(body, sign(body, { atMs: NOW - 299_000 }), SECRET, NOW)).not.toThrow();
  });

  it.each([
    [
      'wrong secret',
      () => polar.verify(body, sign(body, { key: standardWebhooksKey('polar_whs_other') }), SECRET, NOW),
      'webhook signature does not match',
    ],
    [
      'tampered body',
      () => polar.verify(body.replace('"total_amount": 9720', '"total_amount": 1'), sign(body), SECRET, NOW),
      'webhook signature does not match',
    ],
    [
      'another message id',
      () => polar.verify(body, { ...sign(body), 'webhook-id': 'msg_other' }, SECRET, NOW),
      'webhook signature does not match',
    ],
    [
      'missing signature header',
      () => polar.verify(body, { ...sign(body), 'webhook-signature': undefined }, SECRET, NOW),
      'missing webhook signature',
    ],
    [
      'missing id header',
      () => polar.verify(body, { ...sign(body), 'webhook-id': undefined }, SECRET, NOW),
      'missing webhook signature',
    ],
    [
      'non-numeric timestamp',
      () => polar.verify(body, { ...sign(body), 'webhook-timestamp': 'now' }, SECRET, NOW),
      'malformed webhook signature',
    ],
    [
      'stale timestamp',
      () => polar.verify(body, sign(body, { atMs: NOW - 301_000 }), SECRET, NOW),
      'webhook timestamp too old',
    ],
    [
      'timestamp from the future',
      () => polar.verify(body, sign(body, { atMs: NOW + 301_000 }), SECRET, NOW),
      'webhook timestamp too new',
    ],
    ['missing secret', () => polar.verify(body, sign(body), '', NOW), 'webhook secret is not configured'],
  ])('rejects a delivery with a %s', (_case, call, message) => {
    expect(call).toThrow(WebhookSignatureError);
    expect(call).toThrow(message);
  });

  it('answers a signed body that is not JSON with a payload error', () => {
    expect(() => polar.verify('nope', sign('nope'), SECRET, NOW)).toThrow(WebhookPayloadError);
  });
});

describe('polar facts: subscription story', () => {
  it('order.created while pending states nothing (order.paid follows)', () => {
    expect(factsOf('order.created.pending.json')).toStrictEqual({
      event_id: `order.created:${ORDER1}@2026-02-10T09:30:10.119Z`,
      event_type: 'order.created',
      payments: [],
      subscriptions: [],
      customers: [],
    });
  });

  it('order.paid (subscription_create) → the order, first payment', () => {
    expect(factsOf('order.paid.json')).toStrictEqual({
      event_id: `order.paid:${ORDER1}@2026-02-10T09:30:12.950Z`,
      event_type: 'order.paid',
      payments: [
        {
          provider: 'polar',
          id: ORDER1,
          aliases: [],
          ts: Date.parse('2026-02-10T09:30:12.950Z'),
          amount: 9720,
          currency: 'USD',
          amount_usd: 97.2,
          status: 'paid',
          customer_id: CUS,
          visitor_id: VISITOR,
          is_renewal: false,
          subscription_id: SUB,
        },
      ],
      subscriptions: [],
      customers: [],
    });
  });

  const renewal = {
    provider: 'polar',
    id: ORDER2,
    aliases: [],
    amount: 9720,
    currency: 'USD',
    amount_usd: 97.2,
    customer_id: CUS,
    visitor_id: VISITOR,
    is_renewal: true,
    subscription_id: SUB,
  };

  it('order.paid (subscription_cycle) → renewal; the visitor id comes from the customer’s metadata', () => {
    expect(onlyPayment(factsOf('order.paid.renewal.json'))).toStrictEqual({
      ...renewal,
      ts: Date.parse('2026-03-10T09:31:02.377Z'),
      status: 'paid',
    });
  });

  it('order.refunded, partial → paid with the cumulative refunded_amount; full → refunded; no ts', () => {
    // The order's creation stands in for the payment's time until order.paid states it.
    const fallback = { ts: Date.parse('2026-03-10T09:30:58.630Z') };
    expect(onlyPayment(factsOf('order.refunded.partial.json'))).toStrictEqual({
      ...renewal,
      refunded: 4860,
      status: 'paid',
      fallback,
    });
    expect(onlyPayment(factsOf('order.refunded.full.json'))).toStrictEqual({
      ...renewal,
      refunded: 9720,
      status: 'refunded',
      fallback,
    });
  });

  it('the renewal’s events are one payment, ending refunded', () => {
    const names = ['order.paid.renewal.json', 'order.refunded.full.json', 'order.refunded.partial.json'];
    expect(converge(names.map((n) => onlyPayment(factsOf(n))))).toStrictEqual([
      {
        ids: [ORDER2],
        fact: {
          ...withoutIds(renewal),
          ts: Date.parse('2026-03-10T09:31:02.377Z'),
          refunded: 9720,
          status: 'refunded',
        },
      },
    ]);
  });

  it.each([
    ['subscription.created.json', 'subscription.created', 'active', true, '2026-02-10T09:30:12.612Z'],
    ['subscription.active.json', 'subscription.active', 'active', true, '2026-02-10T09:30:12.804Z'],
    // Canceled at period end: still active, and paying, until Polar revokes it.
    ['subscription.canceled.json', 'subscription.canceled', 'active', true, '2026-03-20T17:02:40.333Z'],
    ['subscription.revoked.json', 'subscription.revoked', 'canceled', false, '2026-04-10T09:30:14.021Z'],
  ])('%s → subscription %s, paying %s', (name, type, status, paying, at) => {
    expect(factsOf(name)).toStrictEqual({
      event_id: `${type}:${SUB}@${at}`,
      event_type: type,
      payments: [],
      subscriptions: [
        {
          provider: 'polar',
          subscription_id: SUB,
          customer_id: CUS,
          status,
          paying,
          visitor_id: VISITOR,
          ts: Date.parse(at),
        },
      ],
      customers: [],
    });
  });

  it.each(['subscription.updated', 'subscription.uncanceled', 'subscription.past_due'])(
    '%s is a subscription event too',
    (type) => {
      expect(polar.facts(withData('subscription.created.json', {}, type))?.subscriptions).toHaveLength(1);
    },
  );
});

describe('polar facts: one-time EUR purchase, other events', () => {
  it('order.created already paid → the order; EUR, so no USD value', () => {
    expect(onlyPayment(factsOf('order.created.paid.eur.json'))).toStrictEqual({
      provider: 'polar',
      id: '9e1a3c5e-7a9c-4e1a-8c3e-5a7c9e1a3c5f',
      aliases: [],
      ts: Date.parse('2026-02-20T18:44:31.270Z'),
      amount: 5831,
      currency: 'EUR',
      status: 'paid',
      customer_id: '4c6e8a0c-2e4a-4c6e-8a0c-2e4a6c8e0a2c',
      visitor_id: 'e7u6r5o4p3a2y1b0',
      is_renewal: false,
    });
  });

  it('event types we do not use → null', () => {
    expect(factsOf('checkout.created.json')).toBeNull();
    expect(
      polar.facts({ type: 'benefit.created', timestamp: '2026-02-10T09:30:12.612Z', data: { whatever: 1 } }),
    ).toBeNull();
  });

  it('a $0 order states no payment', () => {
    expect(polar.facts(withData('order.paid.json', { total_amount: 0 }))?.payments).toStrictEqual([]);
  });

  it.each([
    ['a wrongly typed amount', () => withData('order.paid.json', { total_amount: '9720' })],
    ['a missing billing_reason', () => withData('order.paid.json', { billing_reason: undefined })],
    ['a subscription without customer_id', () => withData('subscription.created.json', { customer_id: null })],
    ['a bad timestamp', () => ({ ...fixtureJson('polar', 'order.paid.json'), timestamp: 'soon' })],
    ['no type', () => ({ data: {} })],
  ])('%s → WebhookPayloadError', (_case, build) => {
    expect(() => polar.facts(build())).toThrow(WebhookPayloadError);
  });
});
