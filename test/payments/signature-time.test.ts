import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Stripe } from 'stripe';
import { Webhook } from 'standardwebhooks';
import type { Provider } from '../../lambdas/domain/payments/facts.js';
import { PROVIDER_MODULES, WebhookSignatureError } from '../../lambdas/domain/payments/providers/index.js';
import { SIGNATURE_TOLERANCE_SECONDS } from '../../lambdas/domain/payments/providers/common.js';
import { standardWebhooksKey } from '../../lambdas/domain/payments/providers/polar.js';
import { fixture } from './fixture.js';

/** Deliveries are received at this instant (whole seconds, as the schemes sign). */
const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);
const SECRET = {
  stripe: 'whsec_time_test',
  paddle: 'pdl_ntfset_time_test',
  polar: 'polar_whs_time_test',
  lemonsqueezy: 'lemon-time-test',
} as const;

/** Each provider's body and a signer that dates the signature `offsetS` seconds from NOW with the provider's own scheme. */
const SIGNED: Record<
  Exclude<Provider, 'lemonsqueezy'>,
  { body: string; sign: (body: string, offsetS: number) => Record<string, string> }
> = {
  stripe: {
    body: fixture('stripe', 'charge.succeeded.json'),
    sign: (body, offsetS) => ({
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({
        payload: body,
        secret: SECRET.stripe,
        timestamp: NOW / 1000 + offsetS,
      }),
    }),
  },
  paddle: {
    body: fixture('paddle', 'transaction.completed.json'),
    sign: (body, offsetS) => {
      const ts = NOW / 1000 + offsetS;
      return {
        'paddle-signature': `ts=${ts};h1=${createHmac('sha256', SECRET.paddle).update(`${ts}:${body}`).digest('hex')}`,
      };
    },
  },
  polar: {
    body: fixture('polar', 'order.paid.json'),
    sign: (body, offsetS) => {
      const at = new Date(NOW + offsetS * 1000);
      const id = 'msg_time_test';
      return {
        'webhook-id': id,
        'webhook-timestamp': String(at.getTime() / 1000),
        'webhook-signature': new Webhook(standardWebhooksKey(SECRET.polar)).sign(id, at, body),
      };
    },
  },
};

const YEAR_S = 365 * 86_400;
// [offset from now in seconds, the error or null for accepted]
const EDGES: Array<[number, string | null]> = [
  [-YEAR_S, 'webhook timestamp too old'],
  [-SIGNATURE_TOLERANCE_SECONDS - 1, 'webhook timestamp too old'],
  [-SIGNATURE_TOLERANCE_SECONDS, null],
  [-1, null],
  [0, null],
  [1, null],
  [SIGNATURE_TOLERANCE_SECONDS, null],
  [SIGNATURE_TOLERANCE_SECONDS + 1, 'webhook timestamp too new'],
  [3600, 'webhook timestamp too new'],
  [YEAR_S, 'webhook timestamp too new'],
];

// The standardwebhooks package also checks against the system clock; pin it to NOW so only our check decides.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('webhook signature timestamps: 5 minutes either way, for every provider that signs one', () => {
  const cases = (Object.keys(SIGNED) as Array<keyof typeof SIGNED>).flatMap((provider) =>
    EDGES.map(([offset, error]) => [provider, offset, error] as const),
  );

  it.each(cases)('%s signed %i s from now: %s', (provider, offset, error) => {
    const { body, sign } = SIGNED[provider];
    const verify = () => PROVIDER_MODULES[provider].verify(body, sign(body, offset), SECRET[provider], NOW);
    if (error === null) expect(verify()).toEqual(JSON.parse(body));
    else {
      expect(verify).toThrow(WebhookSignatureError);
      expect(verify).toThrow(error);
    }
  });

  it.each(Object.keys(SIGNED) as Array<keyof typeof SIGNED>)(
    '%s: a forged signature dated in the future is a bad signature, not a timestamp error',
    (provider) => {
      const { body, sign } = SIGNED[provider];
      const forged = sign(`${body} `, YEAR_S);
      expect(() => PROVIDER_MODULES[provider].verify(body, forged, SECRET[provider], NOW)).toThrow(
        provider === 'polar' ? 'webhook timestamp too new' : 'webhook signature does not match',
      );
    },
  );

  it('lemonsqueezy signs no timestamp: a delivery verifies the same at any time (replays are idempotent facts, docs/payments.md)', () => {
    const body = fixture('lemonsqueezy', 'order_created.json');
    const headers = { 'x-signature': createHmac('sha256', SECRET.lemonsqueezy).update(body).digest('hex') };
    for (const [offset] of EDGES)
      expect(PROVIDER_MODULES.lemonsqueezy.verify(body, headers, SECRET.lemonsqueezy, NOW + offset * 1000)).toEqual(
        JSON.parse(body),
      );
  });
});
