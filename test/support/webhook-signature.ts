import { Stripe } from 'stripe';
import { Webhook } from 'standardwebhooks';
import type { Provider } from '../../lambdas/domain/payments/facts.js';
import { hmacSha256Hex } from '../../lambdas/domain/payments/providers/common.js';
import { standardWebhooksKey } from '../../lambdas/domain/payments/providers/polar.js';

/**
 * The signature headers `provider` sends with `body` signed with `secret` at `seconds` (Unix time, s;
 * default now), by each provider's scheme: Stripe's `t=…,v1=…` (its library's test header), Lemon
 * Squeezy's hex HMAC-SHA256 of the body, Paddle's `ts=…;h1=…` over `<ts>:<body>`, Polar's Standard
 * Webhooks headers.
 */
export function signWebhook(
  provider: Provider,
  body: string,
  secret: string,
  seconds = Math.floor(Date.now() / 1000),
): Record<string, string> {
  switch (provider) {
    case 'stripe':
      return {
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: seconds }),
      };
    case 'lemonsqueezy':
      return { 'x-signature': hmacSha256Hex(secret, body) };
    case 'paddle':
      return { 'paddle-signature': `ts=${seconds};h1=${hmacSha256Hex(secret, `${seconds}:${body}`)}` };
    case 'polar': {
      const id = `msg_${seconds}`;
      return {
        'webhook-id': id,
        'webhook-timestamp': String(seconds),
        'webhook-signature': new Webhook(standardWebhooksKey(secret)).sign(id, new Date(seconds * 1000), body),
      };
    }
  }
}
