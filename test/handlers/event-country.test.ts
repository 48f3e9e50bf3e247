import { describe, expect, it, vi } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CountryDatabase, CountryDatabaseError } from '../../lambdas/adapters/country-database.js';
import { createEventHandler } from '../../lambdas/handlers/event.js';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';
import type { CountryLookup } from '../../lambdas/domain/country.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { httpApiEvent, localContext } from '../../local/api-gateway.js';
import { PACKAGED_COUNTRY_DATABASE } from '../../local/geo.js';
import { CHROME_UA, site } from '../support/events.js';

const database = CountryDatabase.open(PACKAGED_COUNTRY_DATABASE);

/** The real event handler with the packaged database (or `countries`), in-memory ports, and a debug logger whose output is kept. */
function setup(countries: CountryLookup | null = database) {
  const written: TrackedEvent[] = [];
  const logged: string[] = [];
  const logger = new Logger({ serviceName: 'test', logLevel: 'DEBUG' });
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    vi.spyOn(logger, level).mockImplementation(
      (...args: unknown[]) =>
        void logged.push(JSON.stringify(args, (_k, v: unknown) => (v instanceof Error ? v.message : v))),
    );
  }
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test' });
  vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => metrics);
  const handler = createEventHandler({
    logger,
    metrics,
    countries: countries ?? undefined,
    clock: () => Date.UTC(2026, 10, 23, 9),
    sites: { getSite: async (d) => (d === 'example.com' ? site() : null) },
    salts: { saltFor: async () => 'salt-of-the-day' },
    stream: { put: async (events) => void written.push(...events) },
    limiter: new SiteRateLimiter(),
  });
  /** Posts one page view from `sourceIp`; resolves with the event written, or undefined. */
  async function post(
    sourceIp: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ): Promise<TrackedEvent | undefined> {
    const before = written.length;
    const event = httpApiEvent({
      method: 'POST',
      path: '/api/event',
      sourceIp,
      headers: { 'user-agent': CHROME_UA, ...headers },
      body: JSON.stringify(body ?? { n: 'pageview', u: 'https://example.com/', s: 'example.com' }),
    });
    const result = await handler(event, localContext('event'));
    expect(result.statusCode).toBe(202);
    return written[before];
  }
  return { post, written, logged };
}

describe('country from the client address (docs/ingestion.md "Country")', () => {
  // Servers whose operator and location are published, and which the pinned
  // DB-IP Lite release (package.json) places there. A new release that moves
  // one fails here, on purpose: the refresh is reviewed, not silent.
  it.each([
    ['8.8.8.8', 'US', 'Google Public DNS (Google LLC, Mountain View)'],
    ['193.0.6.139', 'NL', 'www.ripe.net (RIPE NCC, Amsterdam)'],
    ['203.119.101.61', 'AU', 'APNIC (Brisbane)'],
    ['200.160.2.3', 'BR', 'NIC.br (São Paulo)'],
    ['2001:67c:2e8:22::c100:68b', 'NL', 'www.ripe.net over IPv6'],
    ['2001:200::1', 'JP', 'WIDE Project (Tokyo)'],
    ['::ffff:193.0.6.139', 'NL', 'an IPv4-mapped IPv6 address is looked up as IPv4'],
  ])('%s → %s: %s', async (ip, country) => {
    const { post } = setup();
    expect((await post(ip))?.country).toBe(country);
  });

  // RFC 5737 and RFC 3849 documentation ranges, RFC 1918 private, loopback,
  // link-local, shared address space (RFC 6598): no country, never a guess.
  it.each([
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '2001:db8::1',
    '2001:db8:ffff::9',
    '10.1.2.3',
    '192.168.0.10',
    '127.0.0.1',
    '::1',
    '169.254.1.1',
    '100.64.0.1',
    'not-an-address',
    '',
  ])('%s → unknown (null)', async (ip) => {
    const { post } = setup();
    expect((await post(ip))?.country).toBeNull();
  });

  it('a CDN country header wins over the lookup; a header that names no country falls back to it', async () => {
    const { post } = setup();
    expect((await post('8.8.8.8', { 'cloudfront-viewer-country': 'DE' }))?.country).toBe('DE');
    expect((await post('8.8.8.8', { 'cf-ipcountry': 'fr' }))?.country).toBe('FR');
    expect((await post('8.8.8.8', { 'cf-ipcountry': 'XX' }))?.country).toBe('US');
    expect((await post('192.0.2.1', { 'x-country-code': 'JP' }))?.country).toBe('JP');
  });

  it('behind CloudFront, the viewer address it forwards is looked up, not the edge that connected', async () => {
    const { post } = setup();
    const viaEdge = await post('192.0.2.1', { 'cloudfront-viewer-address': '193.0.6.139:51234' });
    const direct = await post('193.0.6.139');
    expect(viaEdge?.country).toBe('NL');
    // The same visitor hash as a direct request from that address: one visitor, wherever the request came in.
    expect(viaEdge?.visitor_id).toBe(direct?.visitor_id);
  });

  it('without a database, only headers give a country', async () => {
    const { post } = setup(null);
    expect((await post('8.8.8.8'))?.country).toBeNull();
    expect((await post('8.8.8.8', { 'cf-ipcountry': 'IT' }))?.country).toBe('IT');
  });

  it('the address is used for the country and the visitor hash, and appears in no written event and no log line', async () => {
    const ip = '193.0.6.139';
    const { post, written, logged } = setup();
    const first = await post(ip);
    const again = await post(ip);
    const other = await post('8.8.8.8');
    // Drops (unknown site) and rejections (bad body) log at debug level: they must not carry it either.
    await post(ip, {}, { n: 'pageview', u: 'https://nowhere.org/', s: 'nowhere.org' });
    const rejected = await createEventHandlerRejects(ip);
    expect(first?.country).toBe('NL');
    expect(first?.visitor_kind).toBe('hash');
    expect(again?.visitor_id).toBe(first?.visitor_id);
    expect(other?.visitor_id).not.toBe(first?.visitor_id);
    expect(written).toHaveLength(3);
    expect(logged.length).toBeGreaterThan(0);
    expect(rejected).toBe(400);
    for (const text of [JSON.stringify(written), ...logged]) {
      expect(text).not.toContain(ip);
      expect(text).not.toContain('8.8.8.8');
    }
    expect(Object.keys(first ?? {})).not.toContain('ip');

    /** A malformed body from `ip`: answered 400 and logged by the shared HTTP error mapping. */
    async function createEventHandlerRejects(from: string): Promise<number | undefined> {
      const { handler } = setupRaw(logged);
      const result = await handler(
        httpApiEvent({
          method: 'POST',
          path: '/api/event',
          sourceIp: from,
          headers: { 'user-agent': CHROME_UA },
          body: '{not json',
        }),
        localContext('event'),
      );
      return result.statusCode;
    }
  });
});

/** A bare handler whose logger lines go to `logged`. */
function setupRaw(logged: string[]) {
  const logger = new Logger({ serviceName: 'test', logLevel: 'DEBUG' });
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    vi.spyOn(logger, level).mockImplementation((...args: unknown[]) => void logged.push(JSON.stringify(args)));
  }
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test' });
  vi.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => metrics);
  return {
    handler: createEventHandler({
      logger,
      metrics,
      countries: database,
      clock: () => Date.UTC(2026, 10, 23, 9),
      sites: { getSite: async () => site() },
      salts: { saltFor: async () => 'salt' },
      stream: { put: async () => undefined },
      limiter: new SiteRateLimiter(),
    }),
  };
}

describe('CountryDatabase (lambdas/adapters/country-database.ts)', () => {
  it('reads the packaged DB-IP Lite database and reports its metadata', () => {
    expect(database.info).toMatchObject({ type: 'country ipvAll', ipVersion: 6 });
    expect(database.info.built.getUTCFullYear()).toBeGreaterThanOrEqual(2026);
    expect(database.info.bytes).toBeGreaterThan(1_000_000);
  });

  it('refuses a missing file and a file that is not MMDB, with an error that says which', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'country-db-'));
    try {
      expect(() => CountryDatabase.open(join(dir, 'absent.mmdb'))).toThrow(CountryDatabaseError);
      expect(() => CountryDatabase.open(join(dir, 'absent.mmdb'))).toThrow(/cannot read .*absent\.mmdb: ENOENT/);
      const text = join(dir, 'text.mmdb');
      await writeFile(text, 'not a database');
      expect(() => CountryDatabase.open(text)).toThrow(/not a MaxMind DB/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
