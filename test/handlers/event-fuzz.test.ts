import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createEventHandler } from '../../lambdas/handlers/event.js';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';
import { trackedEventSchema, type TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { httpApiEvent, localContext } from '../../local/api-gateway.js';
import { CHROME_UA, holdsAnEvent, site } from '../support/events.js';

const written: TrackedEvent[] = [];
const handler = createEventHandler({
  logger: new Logger({ serviceName: 'fuzz', logLevel: 'SILENT' }),
  metrics: new Metrics({ namespace: 'Fuzz', serviceName: 'fuzz' }),
  clock: () => Date.UTC(2026, 0, 1),
  sites: { getSite: async (d) => (d === 'example.com' ? site({ rate_limit: 1_000_000 }) : null) },
  salts: { saltFor: async () => 'salt' },
  stream: { put: async (events) => void written.push(...events) },
  limiter: new SiteRateLimiter(),
});

const eventLike = fc.record(
  {
    n: fc.oneof(fc.constantFrom('pageview', 'goal'), fc.string(), fc.integer(), fc.constant(null)),
    u: fc.oneof(
      fc.webUrl(),
      fc.constantFrom('https://example.com/', 'https://a.example.com/x?utm_medium=cpc'),
      fc.string(),
      fc.integer(),
    ),
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
  fc.oneof(
    fc.constantFrom(
      'user-agent',
      'User-Agent',
      'accept-language',
      'cf-ipcountry',
      'cloudfront-viewer-country',
      'x-country-code',
      'content-type',
    ),
    fc.string({ minLength: 1 }),
  ),
  fc.oneof(fc.string(), fc.constant(CHROME_UA)),
);

function apiEvent(b: string, h: Record<string, string>, base64: boolean, method: string): APIGatewayProxyEventV2 {
  return httpApiEvent({
    method,
    path: '/api/event',
    headers: h,
    body: base64 ? Buffer.from(b).toString('base64') : b,
    isBase64Encoded: base64,
    sourceIp: '198.51.100.7',
    routeKey: 'ANY /api/event',
  });
}

/** A page view of example.com with every optional field arbitrary: always kept, so its repair can be read back. */
const keptEvent = fc.record(
  {
    n: fc.constant('pageview'),
    u: fc.webPath().map((p) => `https://example.com${p.startsWith('/') ? p : `/${p}`}`),
    s: fc.constant('example.com'),
    r: fc.oneof(fc.webUrl(), fc.string(), fc.constant(null), fc.integer()),
    v: fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9-]{8,64}$/), fc.constant(null), fc.integer()),
    w: fc.oneof(
      fc.integer({ min: -10, max: 200_000 }),
      fc.double(),
      fc.double({ min: 0, max: 5000, noNaN: true }),
      fc.string(),
      fc.constant(null),
    ),
    g: fc.oneof(fc.string(), fc.constant(null)),
    l: fc.oneof(fc.string(), fc.integer()),
  },
  { requiredKeys: ['n', 'u', 's'] },
);

/** What `w` must become (docs/ingestion.md): a rounded finite number from 1 to 100,000, else unknown. */
function expectedWidth(w: unknown): number | null {
  if (typeof w !== 'number' || !Number.isFinite(w)) return null;
  const rounded = Math.round(w);
  return rounded >= 1 && rounded <= 100_000 ? rounded : null;
}

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);

describe('event handler under arbitrary input (property-based)', () => {
  console.log(`event fuzz properties: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
  it('answers 202 for every body that holds an event and 400 for every other, never throws, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        headers,
        fc.boolean(),
        fc.constantFrom('POST', 'POST', 'POST', 'OPTIONS', 'GET'),
        async (b, h, base64, method) => {
          const res = await handler(apiEvent(b, h, base64, method), localContext('event'));
          expect(res.headers?.['Access-Control-Allow-Origin'] ?? res.headers?.['access-control-allow-origin']).toBe(
            '*',
          );
          if (method === 'OPTIONS') expect(res.statusCode).toBe(204);
          else if (method === 'GET') expect(res.statusCode).toBe(405);
          else {
            expect(res.statusCode).toBe(holdsAnEvent(b) ? 202 : 400);
            expect(res.body).toBe(res.statusCode === 202 ? '' : 'invalid event');
          }
        },
      ),
      { seed, numRuns: 3000 },
    );
  });

  it('writes every kept event with its repaired fields, whatever the optional fields hold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(keptEvent, { minLength: 1, maxLength: 60 }), async (events) => {
        written.length = 0;
        const res = await handler(
          apiEvent(JSON.stringify(events), { 'user-agent': CHROME_UA }, false, 'POST'),
          localContext('event'),
        );
        expect(res.statusCode).toBe(202);
        const sent = events.slice(0, 50);
        expect(written).toHaveLength(sent.length);
        sent.forEach((event, i) => {
          const out = trackedEventSchema.parse(written[i]);
          expect(out.screen_width).toBe(expectedWidth(event.w));
          expect(out.visitor_kind).toBe(
            typeof event.v === 'string' && /^[A-Za-z0-9-]{8,64}$/.test(event.v) ? 'id' : 'hash',
          );
          if (out.visitor_kind === 'id') expect(out.visitor_id).toBe(event.v);
          expect(out.goal).toBeNull();
          expect(out.link).toBeNull();
          expect(out.path.length).toBeLessThanOrEqual(2048);
          expect(out.referrer_host === null || out.referrer_host.length <= 253).toBe(true);
        });
      }),
      { seed, numRuns: 300 },
    );
  });
});
