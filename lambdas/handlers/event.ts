import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { parseEventBody } from '../domain/inbound.js';
import { countryFromHeaders } from '../domain/country.js';
import { languageFromAcceptLanguage } from '../domain/language.js';
import { ingestEvents, type IngestDeps } from '../services/ingest.js';
import type { Telemetry } from '../observability/telemetry.js';
import { bodyText, httpHandler, type HttpHandler } from './http.js';

export interface EventHandlerDeps extends IngestDeps, Telemetry {
  clock: () => number;
}

/**
 * `POST /api/event` and its `OPTIONS` preflight (spec §4.3, §6, §7): parse,
 * ingest, answer 202 with an empty body. Drops are counted in the
 * `DroppedEvents` metric by `reason` and logged at debug level; accepted
 * events in `AcceptedEvents`.
 */
export function createEventHandler(deps: EventHandlerDeps): HttpHandler {
  const { logger, metrics } = deps;
  return httpHandler(
    async (event) => {
      if (event.requestContext.http.method === 'OPTIONS') return { statusCode: 204, body: '' };
      const headers = event.headers as Record<string, string | undefined>;
      const inbound = parseEventBody(bodyText(event));
      const outcome = await ingestEvents(deps, inbound, {
        now: deps.clock(),
        ip: event.requestContext.http.sourceIp,
        userAgent: headers['user-agent'] ?? '',
        country: countryFromHeaders(headers),
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
