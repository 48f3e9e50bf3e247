import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PROVIDER_MODULES } from '../../lambdas/domain/payments/providers/index.js';
import { emptyPayment, mergePaymentFact, type Payment } from '../../lambdas/domain/payments/payment.js';
import type { PaymentFact } from '../../lambdas/domain/payments/facts.js';

/**
 * One Stripe payment's events merged in every arrival order give one row, the
 * one the objects describe (`docs/payments.md`, "Statuses" and "One payment,
 * many events"): its time is the earliest an event states, its amount what
 * was captured (`amount_received`, `amount_captured`: a partial capture), its
 * refunds the cumulative total, and a declined attempt's event arriving after
 * the success leaves it paid with the captured amount.
 */
const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
const PI = 'pi_3QmergeOrderB7WZ01zgkW0001';
const CH = 'ch_3QmergeOrderB7WZ01zgkW0001';
const IN = 'in_1QmergeOrderB7WZ01zgkW0001';
const PAID_S = Date.UTC(2026, 2, 2, 10, 15, 0) / 1000;

interface Generated {
  captured: number;
  /** Authorized beyond what was captured (a manual capture of part of the hold). */
  uncaptured: number;
  /** Seconds after the payment's time each event was created. */
  intentLagS: number;
  chargeLagS: number;
  /** A subscription invoice paid at the payment's time (only when captured in full, as invoices are). */
  invoice: boolean;
  /** Part of the captured amount refunded (cumulative `amount_refunded`); 1 is a full refund. */
  refundedPart: 0 | 0.5 | 1;
  /** A declined attempt on the same PaymentIntent whose event arrives after the success. */
  declinedLagS: number | null;
}

const generated = fc.record({
  captured: fc.integer({ min: 100, max: 100_000 }),
  uncaptured: fc.constantFrom(0, 0, 2_500),
  intentLagS: fc.integer({ min: 0, max: 90 }),
  chargeLagS: fc.integer({ min: 0, max: 90 }),
  invoice: fc.boolean(),
  refundedPart: fc.constantFrom<0 | 0.5 | 1>(0, 0.5, 1),
  declinedLagS: fc.option(fc.integer({ min: 0, max: 90 })),
});

const event = (type: string, createdS: number, object: Record<string, unknown>) => ({
  id: `evt_${type}`,
  object: 'event',
  api_version: '2024-06-20',
  type,
  created: createdS,
  livemode: false,
  data: { object },
});

/** The Stripe events of one generated payment (object shapes of https://docs.stripe.com/api/events/types). */
function eventsOf(g: Generated): unknown[] {
  const authorized = g.captured + g.uncaptured;
  const refunded = Math.floor(g.captured * g.refundedPart);
  const out: unknown[] = [
    event('payment_intent.succeeded', PAID_S + g.intentLagS, {
      id: PI,
      object: 'payment_intent',
      amount: authorized,
      amount_received: g.captured,
      capture_method: g.uncaptured > 0 ? 'manual' : 'automatic',
      currency: 'usd',
      latest_charge: CH,
      metadata: {},
      status: 'succeeded',
    }),
    event('charge.succeeded', PAID_S + g.chargeLagS, {
      id: CH,
      object: 'charge',
      created: PAID_S,
      amount: authorized,
      amount_captured: g.captured,
      amount_refunded: 0,
      captured: true,
      currency: 'usd',
      refunded: false,
      payment_intent: PI,
      metadata: {},
    }),
  ];
  if (g.invoice && g.uncaptured === 0)
    out.push(
      event('invoice.paid', PAID_S + g.intentLagS + 1, {
        id: IN,
        object: 'invoice',
        amount_due: g.captured,
        amount_paid: g.captured,
        currency: 'usd',
        billing_reason: 'manual',
        payment_intent: PI,
        charge: CH,
        metadata: {},
        status: 'paid',
        status_transitions: { paid_at: PAID_S },
      }),
    );
  if (refunded > 0)
    out.push(
      event('charge.refunded', PAID_S + 3_600, {
        id: CH,
        object: 'charge',
        created: PAID_S,
        amount: authorized,
        amount_captured: g.captured,
        amount_refunded: refunded,
        captured: true,
        currency: 'usd',
        refunded: refunded === g.captured,
        payment_intent: PI,
        metadata: {},
      }),
    );
  if (g.declinedLagS !== null)
    out.push(
      event('payment_intent.payment_failed', PAID_S + g.declinedLagS, {
        id: PI,
        object: 'payment_intent',
        amount: authorized,
        amount_received: 0,
        currency: 'usd',
        last_payment_error: { type: 'card_error', code: 'card_declined' },
        latest_charge: `${CH}_declined`,
        metadata: {},
        status: 'requires_payment_method',
      }),
    );
  return out;
}

function factsOf(events: readonly unknown[]): PaymentFact[] {
  return events.flatMap((e) => PROVIDER_MODULES.stripe.facts(e)?.payments ?? []);
}

/** Merges facts as `settlePayment` does: every fact onto the row of the PaymentIntent. */
function merged(facts: readonly PaymentFact[]): Payment {
  return facts.reduce(
    (p, f) => mergePaymentFact(p, { ...f, id: PI, aliases: [...f.aliases, f.id] }),
    emptyPayment('example.com', 'stripe', PI),
  );
}

describe('one payment, many events, any arrival order', () => {
  it('gives the earliest stated time, the captured amount, the refunds and paid despite a late declined attempt', () => {
    console.log(`payment merge-order property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    fc.assert(
      fc.property(generated, fc.infiniteStream(fc.nat()), fc.nat({ max: 5 }), (g, noise, redelivered) => {
        const facts = factsOf(eventsOf(g));
        // Any order, and one event delivered twice.
        const shuffled = [...facts].sort(() => ((noise.next().value as number) % 2 === 0 ? -1 : 1));
        const again = [...shuffled, shuffled[redelivered % shuffled.length]!];
        const refunded = Math.floor(g.captured * g.refundedPart);
        const statedS = [
          PAID_S + g.intentLagS,
          PAID_S + g.chargeLagS,
          ...(g.invoice && g.uncaptured === 0 ? [PAID_S] : []),
          ...(g.declinedLagS !== null ? [PAID_S + g.declinedLagS] : []),
        ];
        const p = merged(again);
        expect({
          ts: p.ts,
          amount: p.amount,
          amount_usd: p.provider_amount_usd,
          refunded: p.refunded,
          status: p.status,
        }).toEqual({
          ts: Math.min(...statedS) * 1000,
          amount: g.captured,
          amount_usd: g.captured / 100,
          refunded,
          status: refunded === g.captured ? 'refunded' : 'paid',
        });
        expect(p).toEqual(merged(facts));
      }),
      { seed, numRuns: 300, endOnFailure: true },
    );
  });
});
