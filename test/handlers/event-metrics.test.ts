import { afterEach, describe, expect, it, vi } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createEventHandler } from '../../lambdas/handlers/event.js';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';
import { UnavailableError } from '../../lambdas/domain/errors.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { httpApiEvent, localContext } from '../../local/api-gateway.js';
import { CHROME_UA, site } from '../support/events.js';

function apiEvent(body: string, headers: Record<string, string> = { 'user-agent': CHROME_UA }): APIGatewayProxyEventV2 {
  return httpApiEvent({ method: 'POST', path: '/api/event', headers, body, sourceIp: '203.0.113.9' });
}

/**
 * The handler with real Powertools Metrics (enabled for the test) whose EMF
 * lines are read back from stdout: each metric as CloudWatch would bill it
 * (name and dimension set) with the line's `reason` property.
 */
function setup(put: (events: readonly TrackedEvent[]) => Promise<void>) {
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.includes('"_aws"')) lines.push(...text.split('\n').filter((l) => l.includes('"_aws"')));
    else return write(chunk, ...(rest as []));
    return true;
  });
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test' });
  const logger = new Logger({ serviceName: 'test', logLevel: 'DEBUG' });
  const emitted = () =>
    lines.flatMap((line) => {
      const emf = JSON.parse(line) as {
        _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][]; Metrics: Array<{ Name: string }> }> };
        reason?: string;
      } & Record<string, unknown>;
      return emf._aws.CloudWatchMetrics.flatMap((d) =>
        d.Metrics.map((m) => ({ name: m.Name, dimensions: d.Dimensions, value: emf[m.Name], reason: emf.reason })),
      );
    });
  const info = vi.spyOn(logger, 'info').mockImplementation(() => undefined);
  vi.spyOn(logger, 'error').mockImplementation(() => undefined);
  const handler = createEventHandler({
    logger,
    metrics,
    clock: () => Date.UTC(2026, 0, 1),
    sites: { getSite: async (d) => (d === 'example.com' ? site() : null) },
    salts: { saltFor: async () => 'salt' },
    stream: { put },
    limiter: new SiteRateLimiter(),
  });
  const dropped = () =>
    info.mock.calls
      .filter(([msg]) => msg === 'events dropped')
      .map(([, extra]) => [(extra as { reason: string }).reason, (extra as { count: number }).count]);
  return { handler, emitted, dropped };
}

describe('event handler metrics and failures', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('logs each drop reason in one INFO line with its count, and emits no custom metric for drops', async () => {
    const { handler, emitted, dropped } = setup(async () => undefined);
    const body = JSON.stringify([
      { n: 'pageview', u: 'https://example.com/', s: 'example.com' },
      { n: 'pageview', u: 'https://example.com/2', s: 'example.com' },
      { n: 'pageview', u: 'https://other.com/', s: 'other.com' },
      { n: 'goal', u: 'https://example.com/', s: 'example.com' },
      { n: 'pageview', u: 'https://evil.com/', s: 'example.com' },
      { n: 'x', u: 'https://example.com/', s: 'example.com' },
    ]);
    const res = await handler(apiEvent(body), localContext('event'));
    expect(res.statusCode).toBe(202);
    // A custom metric bills every hour it has data; drops are log lines that Logs Insights sums by reason.
    expect(emitted()).toEqual([]);
    expect(dropped().sort()).toEqual([
      ['foreign_host', 1],
      ['goal_without_name', 1],
      ['unknown_site', 1],
      ['unknown_type', 1],
    ]);
  });

  it('writes no metric line and no drop line for a request whose events are all accepted', async () => {
    const { handler, emitted, dropped } = setup(async () => undefined);
    const res = await handler(
      apiEvent(JSON.stringify({ n: 'pageview', u: 'https://example.com/', s: 'example.com' })),
      localContext('event'),
    );
    expect(res.statusCode).toBe(202);
    expect(emitted()).toEqual([]);
    expect(dropped()).toEqual([]);
  });

  it('logs bots as dropped', async () => {
    const { handler, emitted, dropped } = setup(async () => undefined);
    await handler(
      apiEvent(JSON.stringify({ n: 'pageview', u: 'https://example.com/', s: 'example.com' }), {
        'user-agent': 'curl/8.4.0',
      }),
      localContext('event'),
    );
    expect(emitted()).toEqual([]);
    expect(dropped()).toEqual([['bot', 1]]);
  });

  it('answers 503 try again when the stream write fails, and 503 on any unexpected error', async () => {
    const body = JSON.stringify({ n: 'pageview', u: 'https://example.com/', s: 'example.com' });
    const failing = setup(async () => {
      throw new UnavailableError('down');
    });
    const res = await failing.handler(apiEvent(body), localContext('event'));
    expect(res).toMatchObject({ statusCode: 503, body: 'try again' });
    const crashing = setup(async () => {
      throw new TypeError('boom');
    });
    expect(await crashing.handler(apiEvent(body), localContext('event'))).toMatchObject({
      statusCode: 503,
      body: 'try again',
    });
  });
});
