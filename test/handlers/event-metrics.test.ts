import { describe, expect, it, vi } from 'vitest';
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

function setup(put: (events: readonly TrackedEvent[]) => Promise<void>) {
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test' });
  const logger = new Logger({ serviceName: 'test', logLevel: 'DEBUG' });
  const added: Array<{ name: string; value: number; reason?: string }> = [];
  vi.spyOn(metrics, 'addMetric').mockImplementation((name, _unit, value) => {
    added.push({ name, value });
    return metrics;
  });
  vi.spyOn(metrics, 'singleMetric').mockImplementation(() => {
    let reason: string | undefined;
    const single = {
      addDimension: (_k: string, v: string) => ((reason = v), single),
      addMetric: (name: string, _u: unknown, value: number) => {
        added.push({ name, value, reason });
        return single;
      },
    };
    return single as unknown as Metrics;
  });
  vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => metrics);
  const debug = vi.spyOn(logger, 'debug').mockImplementation(() => undefined);
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
  return { handler, added, debug };
}

describe('event handler metrics and failures', () => {
  it('counts accepted events and each drop reason, with a debug log line per reason', async () => {
    const { handler, added, debug } = setup(async () => undefined);
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
    expect(added).toEqual(
      expect.arrayContaining([
        { name: 'AcceptedEvents', value: 2 },
        { name: 'DroppedEvents', value: 1, reason: 'unknown_site' },
        { name: 'DroppedEvents', value: 1, reason: 'goal_without_name' },
        { name: 'DroppedEvents', value: 1, reason: 'foreign_host' },
        { name: 'DroppedEvents', value: 1, reason: 'unknown_type' },
      ]),
    );
    expect(debug.mock.calls.filter(([msg]) => msg === 'events dropped')).toHaveLength(4);
  });

  it('counts bots', async () => {
    const { handler, added } = setup(async () => undefined);
    await handler(apiEvent(JSON.stringify({ n: 'pageview', u: 'https://example.com/', s: 'example.com' }), { 'user-agent': 'curl/8.4.0' }), localContext('event'));
    expect(added).toEqual([{ name: 'DroppedEvents', value: 1, reason: 'bot' }]);
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
    expect(await crashing.handler(apiEvent(body), localContext('event'))).toMatchObject({ statusCode: 503, body: 'try again' });
  });
});
