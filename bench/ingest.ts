import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createEventHandler } from '../lambdas/handlers/event.js';
import { SiteRateLimiter } from '../lambdas/domain/rate-limit.js';
import type { SiteConfig } from '../lambdas/domain/site.js';
import { httpApiEvent, localContext } from '../local/api-gateway.js';
import { REFERRERS, browserUserAgents, rng, zipf } from '../local/demo/workload.js';
import { spawn } from 'node:child_process';
import { FirehoseClient } from '@aws-sdk/client-firehose';
import { FirehoseEventStream } from '../lambdas/adapters/firehose-stream.js';
import { percentile, type Figure } from './report.js';

const SITE: SiteConfig = {
  domain: 'shop.example',
  timezone: 'Europe/Berlin',
  account: 'bench',
  attribution: 'last_non_direct',
  lookback_days: 30,
  rate_limit: 1_000_000,
  created: '2026-01-01T00:00:00Z',
};

const PATHS = [
  '/',
  '/pricing',
  '/blog/launch',
  '/docs/install',
  '/signup',
  '/features',
  ...Array.from({ length: 200 }, (_, i) => `/blog/post-${i}`),
];

function request(body: string, userAgent: string, random: () => number): APIGatewayProxyEventV2 {
  const headers = {
    'user-agent': userAgent,
    'content-type': 'text/plain',
    'accept-language': random() < 0.5 ? 'en-US,en;q=0.9' : 'de-DE,de;q=0.8',
    'cloudfront-viewer-country': random() < 0.5 ? 'US' : 'DE',
  };
  return httpApiEvent({
    method: 'POST',
    path: '/api/event',
    headers,
    body,
    sourceIp: `203.0.113.${Math.floor(random() * 250)}`,
  });
}

/** A realistic mix: repeated UAs, many referrers, UTM tags, 10% goals, a fifth without a visitor id. */
function workload(count: number, batch: number): APIGatewayProxyEventV2[] {
  const random = rng(42);
  const agents = browserUserAgents();
  return Array.from({ length: count }, () => {
    const ua = zipf(agents, random);
    const events = Array.from({ length: batch }, () => {
      const goal = random() < 0.1;
      const utm =
        random() < 0.15 ? `?utm_source=newsletter&utm_medium=email&utm_campaign=c${Math.floor(random() * 20)}` : '';
      return {
        n: goal ? 'goal' : 'pageview',
        g: goal ? 'Signup' : undefined,
        u: `https://shop.example${zipf(PATHS, random)}${utm}`,
        s: 'shop.example',
        r: random() < 0.5 ? zipf(REFERRERS, random) : null,
        v: random() < 0.8 ? `v${Math.floor(random() * 1e9).toString(36)}abcdefgh` : undefined,
        w: [390, 768, 1280, 1920][Math.floor(random() * 4)],
      };
    });
    return request(JSON.stringify(batch === 1 ? events[0] : events), ua, random);
  });
}

/**
 * The event handler in-process with an in-memory stream: events per second on
 * one core and microseconds per request, for single events (the tracker's
 * case) and batches of 10.
 */
export async function benchIngest(): Promise<Figure[]> {
  let written = 0;
  const handler = createEventHandler({
    logger: new Logger({ serviceName: 'bench', logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'Bench', serviceName: 'bench' }),
    clock: Date.now,
    sites: { getSite: async (d) => (d === SITE.domain ? SITE : null) },
    salts: { saltFor: async () => 'bench-salt' },
    stream: { put: async (events) => void (written += events.length) },
    limiter: new SiteRateLimiter(),
  });
  const context = localContext('event');
  const figures: Figure[] = [];
  for (const batch of [1, 10]) {
    const requests = workload(batch === 1 ? 60_000 : 6_000, batch);
    for (const r of requests.slice(0, 2_000 / batch)) await handler(r, context);
    written = 0;
    const times: number[] = [];
    const start = process.hrtime.bigint();
    for (const r of requests) {
      const t0 = process.hrtime.bigint();
      const res = await handler(r, context);
      times.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (res.statusCode !== 202) throw new Error(`unexpected ${res.statusCode}`);
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    times.sort((a, b) => a - b);
    const label = batch === 1 ? 'single events' : 'batches of 10';
    figures.push(
      {
        section: 'ingest',
        name: `events/s per core, ${label}`,
        value: written / seconds,
        unit: 'events/s',
        target: '≥ 50,000',
      },
      { section: 'ingest', name: `p50 per request, ${label}`, value: percentile(times, 50), unit: 'µs' },
      { section: 'ingest', name: `p99 per request, ${label}`, value: percentile(times, 99), unit: 'µs' },
    );
  }
  figures.push(...(await benchFirehosePutCpu(workload(3_000, 1), context)));
  return figures;
}

/** A Firehose endpoint on loopback that accepts every record of a PutRecordBatch; prints its port. */
const FIREHOSE_STAND_IN = `
const server = require('node:http').createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const n = (body.match(/"Data"/g) || []).length;
    res.setHeader('content-type', 'application/x-amz-json-1.1');
    res.end(JSON.stringify({ FailedPutCount: 0, Encrypted: false, RequestResponses: Array(n).fill({ RecordId: 'r' }) }));
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port)));
`;

/** Lambda's CPU share at a memory size: one vCPU at 1,769 MB, in proportion below (Lambda developer guide, "Memory and computing power"). */
const VCPU_MB = 1769;

/**
 * CPU time of a request through the handler and the real `FirehoseEventStream` (the AWS SDK's
 * serialization, SigV4 signing and HTTP) against a Firehose stand-in on loopback that accepts
 * every record, in another process: this process's CPU (user + system) over the requests. What the event function's memory size changes is this CPU time divided by
 * its vCPU share (`VCPU_MB`); the rest of a request is waiting on the network.
 */
async function benchFirehosePutCpu(
  requests: readonly APIGatewayProxyEventV2[],
  context: ReturnType<typeof localContext>,
): Promise<Figure[]> {
  // The stand-in runs in its own process, so the CPU measured is the handler's and the SDK's alone.
  const server = spawn(process.execPath, ['-e', FIREHOSE_STAND_IN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => server.stdout.once('data', (d: Buffer) => resolve(Number(d))));
  const client = new FirehoseClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench' },
  });
  const handler = createEventHandler({
    logger: new Logger({ serviceName: 'bench', logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'Bench', serviceName: 'bench' }),
    clock: Date.now,
    sites: { getSite: async (d) => (d === SITE.domain ? SITE : null) },
    salts: { saltFor: async () => 'bench-salt' },
    stream: new FirehoseEventStream(client, 'ingest'),
    limiter: new SiteRateLimiter(),
  });
  const warm = 500;
  for (const r of requests.slice(0, warm)) await handler(r, context);
  const measured = requests.slice(warm);
  const before = process.cpuUsage();
  for (const r of measured) {
    const res = await handler(r, context);
    if (res.statusCode !== 202) throw new Error(`unexpected ${res.statusCode}`);
  }
  const used = process.cpuUsage(before);
  client.destroy();
  server.kill();
  const cpuMs = (used.user + used.system) / 1000 / measured.length;
  return [
    {
      section: 'ingest',
      name: 'CPU per request with both Firehose puts (SDK, signing, HTTP; the stand-in apart)',
      value: cpuMs,
      unit: 'ms',
    },
    ...[512, 256].map((mb) => ({
      section: 'ingest',
      name: `that CPU at ${mb} MB in Lambda (${((mb / VCPU_MB) * 100).toFixed(1)}% of a vCPU)`,
      value: cpuMs / (mb / VCPU_MB),
      unit: 'ms',
    })),
  ];
}
