import { Stripe } from 'stripe';
import type { Provider } from '../../domain/payments/facts.js';
import type { HistorySource } from '../../domain/payments/history-source.js';
import { lemonSqueezySource } from './lemonsqueezy.js';
import { paddleSource } from './paddle.js';
import { polarSource } from './polar.js';
import { stripeSource } from './stripe.js';

/** Retries the `stripe` client makes of one request (rate limits it is told to retry, 409, 5xx, lost connections). */
const STRIPE_CLIENT_RETRIES = 5;

/** Each provider's lists of a key: `api` a stand-in's base URL (tests), null for the provider's own; `scope` as `HISTORY_KEYS` names it. */
const SOURCES: Readonly<
  Record<Provider, (apiKey: string, api: URL | null, scope: string | undefined) => HistorySource<string>>
> = {
  stripe: (apiKey, api) =>
    stripeSource(
      new Stripe(apiKey, {
        maxNetworkRetries: STRIPE_CLIENT_RETRIES,
        ...(api ? { host: api.hostname, port: api.port, protocol: api.protocol === 'http:' ? 'http' : 'https' } : {}),
      }),
    ),
  lemonsqueezy: (apiKey, api, store) => lemonSqueezySource(apiKey, api, store),
  paddle: (apiKey, api) => paddleSource(apiKey, api),
  polar: (apiKey, api) => polarSource(apiKey, api),
};

/**
 * A provider's history lists for a key (`docs/payments.md`, "Importing a provider's history"), read
 * through the provider's SDK or documented list endpoints. `api` is the base URL of a stand-in of the
 * provider's API (`FOOTFALL_<PROVIDER>_API`, tests), null for the provider's own.
 */
export function historySource(
  provider: Provider,
  apiKey: string,
  api: URL | null,
  scope?: string,
): HistorySource<string> {
  return SOURCES[provider](apiKey, api, scope);
}

/** The stand-in base URL of a provider's API from `env` (`FOOTFALL_<PROVIDER>_API`), null when unset. */
export function historyApiOf(provider: Provider, env: Readonly<Record<string, string | undefined>>): URL | null {
  const value = env[`FOOTFALL_${provider.toUpperCase()}_API`];
  return value ? new URL(value) : null;
}
