import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brotliDecompressSync } from 'node:zlib';
import { FirehoseClient, PutRecordBatchCommand } from '@aws-sdk/client-firehose';
import { mockClient } from 'aws-sdk-client-mock';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { FirehoseEventStream } from '../../lambdas/adapters/firehose-stream.js';
import { createEventHandler } from '../../lambdas/handlers/event.js';
import {
  TRACKER_DEFAULT_ENDPOINT,
  createTrackerScriptHandler,
  withEventEndpoint,
} from '../../lambdas/handlers/tracker-script.js';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';
import { trackedEventSchema, type TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { localContext } from '../../local/api-gateway.js';
import { buildTrackerSync } from '../../tracker/build.js';
import { CHROME_UA, site } from '../support/events.js';
import { functionUrlEvent } from '../support/function-url.js';

const EVENT_URL = 'https://k3x7q2mzt5vbnw8yhc4rjd6gfp0sael1.lambda-url.eu-central-1.on.aws/api/event';

/**
 * The hot path behind Lambda function URLs (docs/deploy.md): the handlers get
 * Lambda's function-URL events (payload 2.0, `$default` route, the visitor's
 * address as `sourceIp`), answer CORS themselves (the URLs have no CORS
 * configuration), and the event reaches the ingest delivery stream through the
 * real Firehose adapter (aws-sdk-client-mock: no Firehose server runs in-process).
 */
describe('the event function behind its function URL', () => {
  const firehose = mockClient(FirehoseClient);
  let seen = 0;
  beforeAll(() => {
    firehose.on(PutRecordBatchCommand).callsFake((input: { Records: unknown[] }) => ({
      FailedPutCount: 0,
      RequestResponses: input.Records.map((_, i) => ({ RecordId: String(i) })),
    }));
  });
  afterAll(() => firehose.restore());

  /** Events put on the ingest delivery stream since the last call (JSON lines). */
  async function onStream(): Promise<TrackedEvent[]> {
    const calls = firehose
      .commandCalls(PutRecordBatchCommand)
      .map((c) => c.args[0].input)
      .filter((input) => input.DeliveryStreamName === 'footfall-ingest');
    const fresh = calls.slice(seen);
    seen = calls.length;
    return fresh.flatMap((input) =>
      (input.Records ?? []).flatMap((r) =>
        Buffer.from(r.Data ?? [])
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((line) => trackedEventSchema.parse(JSON.parse(line))),
      ),
    );
  }

  const handler = () =>
    createEventHandler({
      logger: new Logger({ serviceName: 'test', logLevel: 'SILENT' }),
      metrics: new Metrics({ namespace: 'Test', serviceName: 'test' }),
      clock: () => Date.UTC(2026, 10, 23, 22, 50),
      countries: { countryOf: (ip) => ({ '198.51.100.7': 'NZ', '203.0.113.80': 'CL' })[ip] ?? null },
      sites: { getSite: async (d) => (d === 'example.com' ? site() : null) },
      salts: { saltFor: async () => 'salt' },
      stream: new FirehoseEventStream(new FirehoseClient({ region: 'eu-central-1' }), 'footfall-ingest'),
      limiter: new SiteRateLimiter(),
    });

  it('answers a text/plain POST with 202 and CORS, and puts the event enriched from the URL event (sourceIp, lower-case headers) on the stream', async () => {
    const body = JSON.stringify({
      n: 'pageview',
      u: 'https://example.com/pricing?utm_source=hn',
      s: 'example.com',
      r: 'https://news.ycombinator.com/',
      v: 'abcdefgh-1234',
      w: 1440,
    });
    const res = await handler()(
      functionUrlEvent({
        method: 'POST',
        path: '/api/event',
        headers: {
          'content-type': 'text/plain;charset=UTF-8',
          'user-agent': CHROME_UA,
          'accept-language': 'en-NZ,en;q=0.9',
          origin: 'https://example.com',
          cookie: 'footfall_vid=abcdefgh-1234; other=1',
        },
        body,
      }),
      localContext('event'),
    );
    expect(res).toMatchObject({ statusCode: 202, body: '' });
    expect(res.headers?.['Access-Control-Allow-Origin'] ?? res.headers?.['access-control-allow-origin']).toBe('*');
    const [event, ...rest] = await onStream();
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      site: 'example.com',
      path: '/pricing',
      utm_source: 'hn',
      visitor_id: 'abcdefgh-1234',
      country: 'NZ',
      language: 'en-NZ',
      browser: 'Chrome',
      channel: 'Communities',
    });
  });

  it('decodes a base64 body (a binary content type) and counts visitors without an id by the connection address', async () => {
    const post = (sourceIp: string) =>
      handler()(
        functionUrlEvent({
          method: 'POST',
          path: '/api/event',
          headers: { 'content-type': 'application/octet-stream', 'user-agent': CHROME_UA },
          body: Buffer.from(JSON.stringify({ n: 'pageview', u: 'https://example.com/', s: 'example.com' })).toString(
            'base64',
          ),
          isBase64Encoded: true,
          sourceIp,
        }),
        localContext('event'),
      );
    expect((await post('198.51.100.7')).statusCode).toBe(202);
    expect((await post('203.0.113.80')).statusCode).toBe(202);
    const [a, b] = await onStream();
    expect([a?.country, b?.country]).toEqual(['NZ', 'CL']);
    expect(a?.visitor_kind).toBe('hash');
    expect(a?.visitor_id).not.toBe(b?.visitor_id);
  });

  it('answers the CORS preflight itself (the URL has no CORS configuration) and other methods with 405 and CORS', async () => {
    const preflight = await handler()(
      functionUrlEvent({
        method: 'OPTIONS',
        path: '/api/event',
        headers: {
          origin: 'https://example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      }),
      localContext('event'),
    );
    expect(preflight.statusCode).toBe(204);
    const headers = Object.fromEntries(Object.entries(preflight.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    expect(headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST,OPTIONS',
      'access-control-allow-headers': 'Content-Type',
    });
    const get = await handler()(functionUrlEvent({ method: 'GET', path: '/' }), localContext('event'));
    expect(get.statusCode).toBe(405);
    expect(Object.fromEntries(Object.entries(get.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))).toMatchObject({
      allow: 'POST, OPTIONS',
      'access-control-allow-origin': '*',
    });
    expect(await onStream()).toEqual([]);
  });
});

describe('the tracker function behind its function URL', () => {
  const script = buildTrackerSync();

  it('serves the script with the event function URL as its default endpoint, brotli and base64 as Lambda expects', async () => {
    const handler = createTrackerScriptHandler(script, { eventUrl: EVENT_URL });
    const res = await handler(
      functionUrlEvent({ method: 'GET', path: '/v.js', headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } }),
    );
    expect(res).toMatchObject({ statusCode: 200, isBase64Encoded: true });
    expect(res.headers).toMatchObject({
      'content-encoding': 'br',
      'content-type': 'application/javascript; charset=utf-8',
      'access-control-allow-origin': '*',
    });
    const served = brotliDecompressSync(Buffer.from(res.body ?? '', 'base64')).toString('utf8');
    expect(served).toBe(withEventEndpoint(script, EVENT_URL));
    expect(served).toContain(`new URL(${JSON.stringify(EVENT_URL)},`);
    expect(served).not.toContain(JSON.stringify(TRACKER_DEFAULT_ENDPOINT));
    // Its own ETag: a cached copy from the API's /v.js (another default endpoint) is not revalidated as current.
    const plain = createTrackerScriptHandler(script);
    const etag = (await plain(functionUrlEvent({ method: 'GET', path: '/v.js' }))).headers?.etag;
    expect(res.headers?.etag).not.toBe(etag);
    expect(
      (
        await handler(
          functionUrlEvent({ method: 'GET', path: '/v.js', headers: { 'if-none-match': String(res.headers?.etag) } }),
        )
      ).statusCode,
    ).toBe(304);
  });

  it("keeps the script's own origin as the default without an event URL (npm start)", async () => {
    const res = await createTrackerScriptHandler(script)(functionUrlEvent({ method: 'GET', path: '/v.js' }));
    expect(res.body).toBe(script);
    expect(script.split(JSON.stringify(TRACKER_DEFAULT_ENDPOINT))).toHaveLength(2);
  });

  it.each([
    ['no default endpoint in the script', 'x', EVENT_URL],
    ['two copies of it', `a("/api/event");b("/api/event")`, EVENT_URL],
    ['a relative event URL', script, '/api/event'],
    ['a URL that is not http(s)', script, 'javascript:alert(1)'],
  ])('refuses to serve on %s', (_, built, url) => {
    expect(() => createTrackerScriptHandler(built, { eventUrl: url })).toThrow();
  });
});
