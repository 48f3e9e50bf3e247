import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { parseEventBody } from '../domain/inbound.js';
import { resolveCountry, type CountryLookup } from '../domain/country.js';
import { languageFromAcceptLanguage } from '../domain/language.js';
import { clientAddress } from '../domain/client-address.js';
import { ingestEvents, type IngestDeps } from '../services/ingest.js';
import type { Telemetry } from '../observability/telemetry.js';
import { bodyText, httpHandler, type HttpHandler } from './http.js';

export interface EventHandlerDeps extends IngestDeps, Telemetry {
  clock: () => number;
  /** The IP-to-country database, asked when no CDN header names the country; absent: headers only. */
  countries?: CountryLookup;
}

/**
 * `POST /api/event` and its `OPTIONS` preflight (spec §4.3, §6, §7): parse,
 * ingest, answer 202 with an empty body. Drops are counted in the
 * `DroppedEvents` metric by `reason` and logged at debug level; accepted
 * events in `AcceptedEvents`. The client address (`clientAddress`) serves the
 * country lookup and the daily visitor hash only: it is never logged or stored.
 */
export function createEventHandler(deps: EventHandlerDeps): HttpHandler {
  const { logger, metrics } = deps;
  return httpHandler(
    async (event) => {
      if (event.requestContext.http.method === 'OPTIONS') return { statusCode: 204, body: '' };
      const headers = event.headers as Record<string, string | undefined>;
      const inbound = parseEventBody(bodyText(event));
      const ip = clientAddress(headers, event.requestContext.http.sourceIp);
      const outcome = await ingestEvents(deps, inbound, {
        now: deps.clock(),
        ip,
        userAgent: headers['user-agent'] ?? '',
        country: resolveCountry(headers, ip, deps.countries),
        language: languageFromAcceptLanguage(headers['accept-language']),
      });
      if (outcome.accepted.length > 0) {
        metrics.addMetric('AcceptedEvents', MetricUnit.Count, outcome.accepted.length);
        metrics.publishStoredMetrics();
      }
      for (const [reason, count] of Object.entries(outcome.dropped)) {
        metrics.singleMetric().addDimension('reason', reason).addMetric('DroppedEvents', MetricUnit.Count, count);
        logger.debug('events dropped', { reason, count, sites: [...new Set(inbound.map((e) => e.s))] });
      }
      return { statusCode: 202, body: '' };
    },
    { logger, errors: { format: 'text', unexpectedStatus: 503 }, cors: { methods: 'POST,OPTIONS' } },
  );
}
