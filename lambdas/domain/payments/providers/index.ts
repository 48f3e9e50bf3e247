/**
 * The payment providers we take webhooks from (`docs/payments.md` "Connecting
 * a provider"): for each, how to verify a delivery on its raw body and how to
 * turn a verified event into `ProviderFacts`.
 *
 * How one purchase's events converge on one payment differs per provider and
 * is documented at the top of each module: Stripe keys by PaymentIntent id
 * with the other ids as aliases; Lemon Squeezy by order id (renewals by
 * subscription-invoice id); Paddle by transaction id; Polar by order id.
 */
import type { Provider } from '../facts.js';
import type { ProviderModule } from './common.js';
import { lemonSqueezyProvider } from './lemonsqueezy.js';
import { paddleProvider } from './paddle.js';
import { polarProvider } from './polar.js';
import { stripeProvider } from './stripe.js';

export { WebhookPayloadError, WebhookSignatureError, type ProviderModule } from './common.js';

export const PROVIDER_MODULES: Readonly<Record<Provider, ProviderModule>> = {
  stripe: stripeProvider,
  lemonsqueezy: lemonSqueezyProvider,
  paddle: paddleProvider,
  polar: polarProvider,
};
