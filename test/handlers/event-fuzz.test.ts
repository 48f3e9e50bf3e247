import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createEventHandler } from '../../lambdas/handlers/event.js';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';
import { httpApiEvent, localContext } from '../../local/api-gateway.js';
import { CHROME_UA, site } from '../support/events.js';

const handler = createEventHandler({
  logger: new Logger({ serviceName: 'fuzz', logLevel: 'SILENT' }),
  metrics: new Metrics({ namespace: 'Fuzz', serviceName: 'fuzz' }),
  clock: () => Date.UTC(2026, 0, 1),
  sites: { getSite: async (d) => (d === 'example.com' ? site() : null) },
  salts: { saltFor: async () => 'salt' },
  stream: { put: async () => undefined },
  limiter: new SiteRateLimiter(),
});

const eventLike = fc.record(
  {
    n: fc.oneof(fc.constantFrom('pageview', 'goal'), fc.string(), fc.integer(), fc.constant(null)),
    u: fc.oneof(fc.webUrl(), fc.constantFrom('https://example.com/', 'https://a.example.com/x?utm_medium=cpc'), fc.string(), fc.integer()),
    s: fc.oneof(fc.constant('example.com'), fc.domain(), fc.string(), fc.constant(null)),
    r: fc.oneof(fc.webUrl(), fc.string(), fc.constant(null), fc.integer()),
    v: fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9-]{8,64}$/), fc.constant(null)),
    w: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
    g: fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constant(null), fc.integer()),
    l: fc.oneof(fc.webUrl(), fc.string(), fc.constant(null)),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.json(),
  eventLike.map((e) => JSON.stringify(e)),
  fc.array(eventLike, { maxLength: 70 }).map((a) => JSON.stringify(a)),
  fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b).toString('latin1')),
);

const headers = fc.dictionary(
  fc.oneof(fc.constantFrom('user-agent', 'User-Agent', 'accept-language', 'cf-ipcountry', 'cloudfront-viewer-country', 'x-country-code', 'content-type'), fc.string({ minLength: 1 })),
  fc.oneof(fc.string(), fc.constant(CHROME_UA)),
);

function apiEvent(b: string, h: Record<string, string>, base64: boolean, method: string): APIGatewayProxyEventV2 {
  return httpApiEvent({ method, path: '/api/event', headers: h, body: base64 ? Buffer.from(b).toString('base64') : b, isBase64Encoded: base64, sourceIp: '198.51.100.7', routeKey: 'POST /api/event' });
}

describe('event handler under arbitrary input (property-based)', () => {
  it('only ever answers 202, 204 or 400 — never throws, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(body, headers, fc.boolean(), fc.constantFrom('POST', 'POST', 'POST', 'OPTIONS'), async (b, h, base64, method) => {
        const res = await handler(apiEvent(b, h, base64, method), localContext('event'));
        expect([202, 204, 400]).toContain(res.statusCode);
        if (res.statusCode === 400) expect(res.body).toBe('invalid event');
        if (res.statusCode === 202) expect(res.body).toBe('');
      }),
      { numRuns: 3000 },
    );
  });
});
