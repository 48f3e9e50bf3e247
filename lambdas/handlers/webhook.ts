import { FootfallError, NotFoundError } from '../domain/errors.js';
import { PROVIDERS, type Provider } from '../domain/payments/facts.js';
import { PROVIDER_MODULES, WebhookSignatureError } from '../domain/payments/providers/index.js';
import type { SiteConfig } from '../domain/site.js';
import { applyProviderFacts, type PaymentDeps } from '../services/payments.js';
import type { Telemetry } from '../observability/telemetry.js';
import { bodyText, httpHandler, type HttpHandler } from './http.js';

export interface WebhookHandlerDeps extends PaymentDeps, Telemetry {
  sites: { getSite(domain: string): Promise<SiteConfig | null> };
  secrets: { providerSecret(domain: string, provider: string): Promise<string | null> };
  /** Where the last webhook of a connected provider and its result are kept, for the app's settings (docs/app.md). */
  log?: {
    record(domain: string, provider: Provider, status: { ts: string; status: number; result: string }): Promise<void>;
    recordRejected(domain: string, provider: Provider, ts: string): Promise<void>;
  };
}

const isProvider = (p: string | undefined): p is Provider => (PROVIDERS as readonly string[]).includes(p ?? '');

/**
 * `POST /api/webhooks/{provider}/{domain}`: verifies the signature on the raw
 * body with the secret of `footfall providers connect`, turns the event into
 * facts and stores them. Unknown provider or site, or a provider not
 * connected: 404. Bad or stale signature, or a payload we cannot read: 400
 * with a JSON error, nothing stored. Event types we do not use: 200, ignored.
 * A storage failure: 503, so the provider retries (`docs/payments.md`).
 */
export function createWebhookHandler(deps: WebhookHandlerDeps): HttpHandler {
  const { logger } = deps;
  return httpHandler(
    async (event) => {
      const provider = event.pathParameters?.provider;
      const domain = event.pathParameters?.domain?.toLowerCase() ?? '';
      if (!isProvider(provider)) throw new NotFoundError(`unknown provider ${provider ?? ''}`);
      const site = await deps.sites.getSite(domain);
      if (!site) throw new NotFoundError(`unknown site ${domain}`);
      const secret = await deps.secrets.providerSecret(domain, provider);
      if (!secret) throw new NotFoundError(`${provider} is not connected to ${domain}`);
      // Only for a connected provider of a known site; only a delivery that passed the signature
      // check is the "last webhook" (anyone can post to the URL), the others are only counted.
      const ts = new Date(deps.clock()).toISOString();
      const record = async (status: number, result: string) => {
        await deps.log
          ?.record(domain, provider, { ts, status, result })
          .catch((e) => logger.warn('last webhook not recorded', e as Error));
      };
      const recordRejected = async () => {
        await deps.log
          ?.recordRejected(domain, provider, ts)
          .catch((e) => logger.warn('rejected webhook not counted', e as Error));
      };
      try {
        const module = PROVIDER_MODULES[provider];
        const verified = module.verify(
          bodyText(event) ?? '',
          event.headers as Record<string, string | undefined>,
          secret,
          deps.clock(),
        );
        const facts = module.facts(verified);
        if (!facts) {
          logger.debug('webhook event ignored', { provider, domain });
          await record(200, 'ignored: an event type Footfall does not use');
          return {
            statusCode: 200,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ received: true, ignored: true }),
          };
        }
        const outcome = await applyProviderFacts(deps, site, facts);
        logger.info('webhook applied', {
          provider,
          domain,
          event_id: facts.event_id,
          event_type: facts.event_type,
          ...outcome,
        });
        await record(
          200,
          `${facts.event_type}: ${outcome.payments} payments, ${outcome.subscriptions} subscriptions, ${outcome.customers} customers`,
        );
        return {
          statusCode: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ received: true, ...outcome }),
        };
      } catch (error) {
        if (error instanceof WebhookSignatureError) {
          await recordRejected();
          throw error;
        }
        const known = error instanceof FootfallError;
        await record(known ? error.status : 503, known ? error.publicMessage : 'not stored: the provider will retry');
        throw error;
      }
    },
    { logger, errors: { format: 'json', unexpectedStatus: 503 } },
  );
}
