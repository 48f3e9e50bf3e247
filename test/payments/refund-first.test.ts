import { describe, expect, it } from 'vitest';
import type { PaymentFact, Provider } from '../../lambdas/domain/payments/facts.js';
import { emptyPayment, isCountable, mergePaymentFact } from '../../lambdas/domain/payments/payment.js';
import { PROVIDER_MODULES } from '../../lambdas/domain/payments/providers/index.js';
import { fixtureJson } from './fixture.js';

/** The one payment fact of a fixture delivery. */
function factOf(provider: Provider, name: string): PaymentFact {
  const facts = PROVIDER_MODULES[provider].facts(fixtureJson(provider, name));
  expect(facts?.payments).toHaveLength(1);
  return facts!.payments[0]!;
}

const merge = (facts: PaymentFact[]) =>
  facts.reduce(mergePaymentFact, emptyPayment('example.com', facts[0]!.provider, facts[0]!.id));

// [provider, payment delivery, full refund delivery, the time the refund alone shows the payment at]
const STORIES: Array<[Provider, string, string, string]> = [
  ['stripe', 'payment_intent.succeeded.json', 'charge.refunded.full.json', '2026-03-02T10:15:00.000Z'], // the charge's created
  ['polar', 'order.paid.renewal.json', 'order.refunded.full.json', '2026-03-10T09:30:58.630Z'], // the order's created_at
  ['paddle', 'transaction.completed.eur.json', 'adjustment.updated.full.json', '2023-08-25T12:38:51.623Z'], // the refund's created_at
  ['lemonsqueezy', 'order_created.eur.json', 'order_refunded.full.json', ''], // every order event states the order's time
];

describe('a refund that arrives before its payment', () => {
  it.each(STORIES)('%s: the refund alone shows and counts, refunded, with a time', (provider, _payment, refund, at) => {
    const alone = merge([factOf(provider, refund)]);
    expect(isCountable(alone)).toBe(true);
    expect(alone.status).toBe('refunded');
    expect(alone.refunded).toBeGreaterThan(0);
    expect(alone.amount).toBe(alone.refunded);
    if (at) {
      expect(alone.ts).toBe(Date.parse(at));
      expect(alone.provisional).toContain('ts');
    }
  });

  it.each(STORIES)(
    '%s: refund then payment converges on what payment then refund gives, with no stand-in left',
    (provider, payment, refund) => {
      const inOrder = merge([factOf(provider, payment), factOf(provider, refund)]);
      const refundFirst = merge([factOf(provider, refund), factOf(provider, payment)]);
      expect(refundFirst).toEqual(inOrder);
      expect(inOrder.provisional).toBeUndefined();
      expect(inOrder.ts).toBe(factOf(provider, payment).ts);
      expect(inOrder.amount).toBe(factOf(provider, payment).amount);
    },
  );

  it('a partial Paddle refund cannot stand in for the amount: the payment waits for its transaction', () => {
    const alone = merge([factOf('paddle', 'adjustment.updated.json')]);
    expect(alone.ts).not.toBeNull();
    expect(alone.amount).toBeNull();
    expect(isCountable(alone)).toBe(false);
  });

  it('a redelivered refund changes nothing, before or after the payment', () => {
    const refund = factOf('stripe', 'charge.refunded.full.json');
    const once = merge([refund]);
    expect(mergePaymentFact(once, refund)).toEqual(once);
    const paid = merge([refund, factOf('stripe', 'payment_intent.succeeded.json')]);
    expect(mergePaymentFact(paid, refund)).toEqual(paid);
  });
});
