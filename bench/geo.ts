import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { CountryDatabase } from '../lambdas/adapters/country-database.js';
import { createEventHandler } from '../lambdas/handlers/event.js';
import { SiteRateLimiter } from '../lambdas/domain/rate-limit.js';
import type { CountryLookup } from '../lambdas/domain/country.js';
import { httpApiEvent, localContext } from '../local/api-gateway.js';
import { browserUserAgents, rng } from '../local/demo/workload.js';
import { PACKAGED_COUNTRY_DATABASE } from '../local/geo.js';
import { LAMBDA_ENTRIES, lambdaBuildOptions } from './bundle.js';
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { percentile, type Figure } from './report.js';

/** AWS Lambda, arm64, us-east-1, first 7.5 billion GB-s a month: USD per GB-second (https://aws.amazon.com/lambda/pricing/). */
export const LAMBDA_ARM_USD_PER_GB_S = 0.0000133334;
/** The event function's memory (lib/functions.ts: the default), GB. */
const EVENT_FUNCTION_GB = 0.5;
/** CloudFront HTTPS requests, United States and Europe: USD 0.0100 per 10,000 (https://aws.amazon.com/cloudfront/pricing/). */
export const CLOUDFRONT_HTTPS_USD_PER_MILLION = 1.0;

/**
 * Visitor addresses as the event function sees them: 80% IPv4 drawn over the
 * whole public unicast space (1.0.0.0–223.255.255.255 less private, loopback,
 * link-local, shared and documentation blocks), 20% IPv6 inside /16s that the
 * RIRs allocate to large access networks (2003::, 2a01::, 2a02:: RIPE; 2600::,
 * 2601::, 2605:: ARIN; 2409::, 240e:: APNIC; 2804:: LACNIC), host part random.
 * Roughly the share of IPv6 among Google's users (https://www.google.com/intl/en/ipv6/statistics.html: 40–50%)
 * halved, since mobile networks carry most of it and sites skew desktop.
 */
export function visitorAddresses(count: number, seed = 7): string[] {
  const random = rng(seed);
  const octet = () => Math.floor(random() * 256);
  const hex = () => Math.floor(random() * 0x10000).toString(16);
  const prefixes = ['2003', '2a01', '2a02', '2600', '2601', '2605', '2409', '240e', '2804'];
  const reserved = (a: number, b: number) =>
    a === 10 ||
    a === 127 ||
    a === 0 ||
    (a === 100 && b >= 64 && b < 128) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b < 32) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) ||
    (a === 198 && (b === 18 || b === 19 || b === 51)) ||
    (a === 203 && b === 0);
  const out: string[] = [];
  while (out.length < count) {
    if (random() < 0.2) {
      out.push(
        `${prefixes[Math.floor(random() * prefixes.length)]}:${hex()}:${hex()}:${hex()}:${hex()}:${hex()}:${hex()}:${hex()}`,
      );
      continue;
    }
    const a = 1 + Math.floor(random() * 223);
    const b = octet();
    if (!reserved(a, b)) out.push(`${a}.${b}.${octet()}.${octet()}`);
  }
  return out;
}

/** Median ns per `countryOf` over `addresses`, of 5 passes after a warm-up pass. */
function lookupNs(db: CountryLookup, addresses: readonly string[]): number {
  const passes: number[] = [];
  for (let pass = 0; pass < 6; pass++) {
    const t0 = process.hrtime.bigint();
    for (const ip of addresses) db.countryOf(ip);
    if (pass > 0) passes.push(Number(process.hrtime.bigint() - t0) / addresses.length);
  }
  passes.sort((a, b) => a - b);
  return passes[2] ?? Number.NaN;
}

/** The event handler in-process, p50 µs per single-event request from `addresses`, no country header (API Gateway's case). */
async function handlerMicros(countries: CountryLookup | undefined, addresses: readonly string[]): Promise<number> {
  const handler = createEventHandler({
    logger: new Logger({ serviceName: 'bench', logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'Bench', serviceName: 'bench' }),
    countries,
    clock: Date.now,
    sites: {
      getSite: async () => ({
        domain: 'shop.example',
        timezone: 'UTC',
        account: 'bench',
        attribution: 'last_non_direct',
        lookback_days: 30,
        rate_limit: 1e9,
        created: '2026-01-01T00:00:00Z',
      }),
    },
    salts: { saltFor: async () => 'bench-salt' },
    stream: { put: async () => undefined },
    limiter: new SiteRateLimiter(),
  });
  const agents = browserUserAgents();
  const body = JSON.stringify({ n: 'pageview', u: 'https://shop.example/pricing', s: 'shop.example', w: 1440 });
  const requests = addresses.map((sourceIp, i) =>
    httpApiEvent({
      method: 'POST',
      path: '/api/event',
      sourceIp,
      body,
      headers: { 'user-agent': agents[i % agents.length] ?? '', 'content-type': 'text/plain' },
    }),
  );
  const context = localContext('event');
  for (const r of requests.slice(0, 2_000)) await handler(r, context);
  const times: number[] = [];
  for (const r of requests) {
    const t0 = process.hrtime.bigint();
    await handler(r, context);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  return percentile(times, 50);
}

/**
 * The event function's cold start with and without its country database:
 * the minified bundle imported by fresh Node processes, the two kinds
 * alternated 9 times each so a busy machine slows both alike; medians, ms.
 * "With" sets `GEO_DATABASE_PATH` as the layer does, so init reads the file.
 */
async function eventColdStarts(): Promise<{ withDb: number; withoutDb: number }> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // Inside the repository, so the bundle resolves the SDK from node_modules as the runtime provides it.
  const dir = await mkdtemp(`${root}bench/.cold-geo-`);
  try {
    const result = await build({
      ...lambdaBuildOptions(),
      entryPoints: [`${root}${LAMBDA_ENTRIES.event}`],
      write: false,
      absWorkingDir: root,
    });
    const file = `${dir}/event.mjs`;
    await writeFile(file, result.outputFiles[0]?.contents ?? new Uint8Array());
    const base = {
      ...process.env,
      TABLE_NAME: 'bench',
      STREAM_NAME: 'bench',
      AWS_REGION: 'us-east-1',
      POWERTOOLS_METRICS_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const once = (env: NodeJS.ProcessEnv) => {
      const script = `const t = performance.now(); await import(${JSON.stringify(file)}); console.log(performance.now() - t);`;
      return Number(
        execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' })
          .trim()
          .split('\n')
          .pop(),
      );
    };
    const withDb: number[] = [];
    const withoutDb: number[] = [];
    for (let i = 0; i < 9; i++) {
      withDb.push(once({ ...base, GEO_DATABASE_PATH: PACKAGED_COUNTRY_DATABASE }));
      withoutDb.push(once(base));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[4] ?? Number.NaN;
    return { withDb: median(withDb), withoutDb: median(withoutDb) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- --only geo`: the country lookup (docs/ingestion.md
 * "Country"): ns per lookup, the share of addresses placed, the handler with
 * and without it, Lambda USD per million events against CloudFront's request
 * price, and the event function's cold start with and without the database.
 */
export async function benchGeo(): Promise<Figure[]> {
  const t0 = performance.now();
  const db = CountryDatabase.open(PACKAGED_COUNTRY_DATABASE);
  const openMs = performance.now() - t0;
  const addresses = visitorAddresses(200_000);
  const ns = lookupNs(db, addresses);
  const placed = addresses.filter((ip) => db.countryOf(ip) !== null).length / addresses.length;
  const sample = addresses.slice(0, 30_000);
  const withDb = await handlerMicros(db, sample);
  const withoutDb = await handlerMicros(undefined, sample);
  // ns per event × 1e9 events = seconds per billion events.
  const secondsPerBillion = ns;
  const usdPerBillion = secondsPerBillion * EVENT_FUNCTION_GB * LAMBDA_ARM_USD_PER_GB_S;
  const cold = await eventColdStarts();
  return [
    {
      section: 'geo',
      name: `country DB open (${(db.info.bytes / 1e6).toFixed(1)} MB, ${db.info.type}, built ${db.info.built.toISOString().slice(0, 10)})`,
      value: openMs,
      unit: 'ms',
    },
    { section: 'geo', name: 'lookup per event (80% IPv4, 20% IPv6)', value: ns, unit: 'ns' },
    { section: 'geo', name: 'addresses placed in a country', value: placed * 100, unit: '%' },
    { section: 'geo', name: 'handler p50, single event, with lookup', value: withDb, unit: 'µs' },
    { section: 'geo', name: 'handler p50, single event, headers only', value: withoutDb, unit: 'µs' },
    { section: 'geo', name: 'lookup: Lambda time per billion events', value: secondsPerBillion, unit: 's' },
    { section: 'geo', name: 'lookup: Lambda USD per billion events (512 MB arm64)', value: usdPerBillion, unit: 'USD' },
    {
      section: 'geo',
      name: 'CloudFront in front instead: HTTPS requests, USD per billion events',
      value: CLOUDFRONT_HTTPS_USD_PER_MILLION * 1000,
      unit: 'USD',
    },
    { section: 'geo', name: 'event Lambda cold start (module load + country DB)', value: cold.withDb, unit: 'ms' },
    { section: 'geo', name: 'event Lambda cold start without country DB', value: cold.withoutDb, unit: 'ms' },
    {
      section: 'geo',
      name: 'event Lambda cold start: added by the country DB',
      value: cold.withDb - cold.withoutDb,
      unit: 'ms',
    },
  ];
}
