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

/** Methods `/api/event` answers; the route takes any method so that the others get a 405 with CORS from here. */
const ALLOWED_METHODS = 'POST, OPTIONS';

/**
 * `/api/event` (`docs/ingestion.md` "Request", "Silent drops"), routed for every method: `POST` parses,
 * repairs and ingests, and answers 202 with an empty body; `OPTIONS` is the
 * CORS preflight (204); any other method is 405 with `Allow`. Every answer,
 * errors included (400, 405, 413, 503), carries `Access-Control-Allow-Origin: *`.
 * Drops are logged, one INFO line `events dropped` per request and reason with
 * `reason` and `count` (items that are not events as `not_an_event`), which
 * Logs Insights sums: a log line, not a custom metric, so a quiet site pays
 * nothing for them. Accepted events log nothing: Firehose's `IncomingRecords`
 * counts them for free, and a line per request would be the hot path's largest log cost
 * (`docs/deploy.md`, "Metrics"). The client address (`clientAddress`) serves the
 * country lookup and the daily visitor hash only: it is never logged or stored.
 */
export function createEventHandler(deps: EventHandlerDeps): HttpHandler {
  const { logger } = deps;
  return httpHandler(
    async (event) => {
      const method = event.requestContext.http.method;
      if (method === 'OPTIONS') return { statusCode: 204, body: '' };
      if (method !== 'POST') {
        return {
          statusCode: 405,
          headers: { allow: ALLOWED_METHODS, 'content-type': 'text/plain; charset=utf-8' },
          body: 'method not allowed',
        };
      }
      const headers = event.headers as Record<string, string | undefined>;
      const { events: inbound, notEvents } = parseEventBody(bodyText(event));
      const ip = clientAddress(headers, event.requestContext.http.sourceIp);
      const outcome = await ingestEvents(deps, inbound, {
        now: deps.clock(),
        ip,
        userAgent: headers['user-agent'] ?? '',
        country: resolveCountry(headers, ip, deps.countries),
        language: languageFromAcceptLanguage(headers['accept-language']),
      });
      const dropped: Record<string, number> = {
        ...outcome.dropped,
        ...(notEvents > 0 ? { not_an_event: notEvents } : {}),
      };
      for (const [reason, count] of Object.entries(dropped)) {
        // A log line, not an EMF metric: a metric bills $0.30 a month for every hour it has data (docs/cost.md).
        logger.info('events dropped', { reason, count, sites: [...new Set(inbound.map((e) => e.s))] });
      }
      return { statusCode: 202, body: '' };
    },
    { logger, errors: { format: 'text', unexpectedStatus: 503 }, cors: { methods: ALLOWED_METHODS.replace(' ', '') } },
  );
}
