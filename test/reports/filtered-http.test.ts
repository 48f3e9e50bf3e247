import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localPaths } from '../../local/service.js';
import { importEventLines } from '../../local/import-events.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { parsePaymentLine } from '../../lambdas/domain/payments/import-line.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { startTestService } from '../support/local.js';
import { CHROME_UA } from '../support/events.js';

/**
 * Filtered reports through the report API of the local server: events and
 * payments in through their real paths, the visit table written by the
 * operations run, read with `filters`. A site small enough to check by hand:
 *
 * - a: Search (Google), 10 March 10:00 UTC, /blog then /pricing and Signup; paid $50 at 10:30
 * - b: Direct, 10 March 11:00, / alone; paid $20 at 11:30
 * - c: Search, 11 March 09:00, /blog alone
 */
const RANGE = 'from=2026-03-10&to=2026-03-11';
const at = (time: string) => `2026-03-${time}Z`;
const LINES = [
  { n: 'pageview', u: 'https://example.com/blog', ts: at('10T10:00:00'), v: 'visitor-a', r: 'https://www.google.com/' },
  { n: 'pageview', u: 'https://example.com/pricing', ts: at('10T10:05:00'), v: 'visitor-a' },
  { n: 'goal', g: 'Signup', u: 'https://example.com/pricing', ts: at('10T10:06:00'), v: 'visitor-a' },
  { n: 'pageview', u: 'https://example.com/', ts: at('10T11:00:00'), v: 'visitor-b' },
  { n: 'pageview', u: 'https://example.com/blog', ts: at('11T09:00:00'), v: 'visitor-c', r: 'https://www.google.com/' },
].map((l) => JSON.stringify({ ...l, ua: CHROME_UA }));
const payment = (id: string, visitor: string, ts: string, amount: number) =>
  JSON.stringify({
    provider: 'stripe',
    provider_payment_id: id,
    ts: at(ts),
    amount,
    currency: 'USD',
    refunded: 0,
    status: 'paid',
    customer_id: `cus_${visitor}`,
    visitor_id: visitor,
    is_renewal: false,
    subscription_id: null,
  });

/** The fields of a report body the tests read. */
type Body = Record<string, unknown> & {
  current: Record<string, unknown>;
  rows: Array<{ key: string | null; visitors: number; revenue_usd: number }>;
  points: Array<{ start: string; sessions: number; revenue_usd: number }>;
  error: string;
};

describe('filtered reports over HTTP on the local server', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let key: string;
  const get = async (path: string, filters?: unknown) => {
    const query = filters === undefined ? '' : `&filters=${encodeURIComponent(JSON.stringify(filters))}`;
    const res = await fetch(`${svc.url}/api/v1/sites/example.com${path}?${RANGE}${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: res.status, body: (await res.json()) as Body };
  };
  const SEARCH = [['is', 'visit:channel', ['Search']]];
  const EVERYTHING = [['contains', 'visit:channel', ['']]];

  beforeAll(async () => {
    svc = await startTestService([{ domain: 'example.com', timezone: 'UTC' }], { app: true, sessionizeIntervalMs: 0 });
    await importEventLines(svc.dynamo, localPaths(svc.dataDir).stream, LINES, { site: 'example.com' });
    await svc.sessionize();
    const site = (await new DynamoConfigStore(svc.dynamo).getSite('example.com'))!;
    await importPayments(
      dynamoPaymentDeps(svc.dynamo),
      site,
      [payment('pi_a', 'visitor-a', '10T10:30:00', 5000), payment('pi_b', 'visitor-b', '10T11:30:00', 2000)].map(
        (l, i) => parsePaymentLine(l, i + 1),
      ),
    );
    await svc.archive();
    // The operations run after the scheduled one writes the visit and payments tables.
    await svc.scheduled();
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'filtered', new Date())).key;
  }, 120_000);
  afterAll(async () => svc?.cleanup());

  it('answers the overview of the matching visits with the revenue credited to them', async () => {
    const { status, body } = await get('/overview', SEARCH);
    expect(status).toBe(200);
    expect(body.current).toMatchObject({
      visitors: 2,
      sessions: 2,
      pageviews: 3,
      bounce_rate: 0.5,
      payments: 1,
      customers: 1,
      revenue_usd: 50,
      converted: 1,
    });
    expect(body).toMatchObject({ imported: null, previous_imported: null, filtered: { imported_excluded: null } });
  });

  it('answers a breakdown by page and the goals under the filter', async () => {
    const pages = await get('/breakdown/page', SEARCH);
    expect(pages.status).toBe(200);
    expect(pages.body.rows.map((r) => [r.key, r.visitors, r.revenue_usd])).toEqual([
      ['/blog', 2, 50],
      ['/pricing', 1, 50],
    ]);
    const direct = await get('/breakdown/page', [['is_not', 'visit:channel', ['Search']]]);
    expect(direct.body.rows.map((r) => [r.key, r.visitors, r.revenue_usd])).toEqual([['/', 1, 20]]);
    const goals = await get('/goals', [['contains', 'event:page', ['ricing']]]);
    expect(goals.status).toBe(200);
    expect(goals.body).toMatchObject({ visitors: 1, total: 1 });
    expect(goals.body.rows[0]).toMatchObject({
      goal: 'Signup',
      visitors: 1,
      visits: 1,
      completions: 1,
      revenue_usd: 50,
    });
    const series = await get('/timeseries', SEARCH);
    expect(series.body.points.map((p) => [p.start, p.sessions, p.revenue_usd])).toEqual([
      ['2026-03-10', 1, 50],
      ['2026-03-11', 1, 0],
    ]);
  });

  it('gives the unfiltered figures for a filter that matches every visit, and leaves unfiltered answers as they were', async () => {
    for (const path of ['/overview', '/breakdown/channel', '/breakdown/page', '/goals', '/timeseries']) {
      const plain = await get(path);
      const all = await get(path, EVERYTHING);
      expect(plain.body).not.toHaveProperty('filtered');
      const { filtered, ...rest } = all.body;
      expect(filtered).toEqual({ imported_excluded: null });
      expect([path, rest]).toEqual([path, plain.body]);
    }
  });

  it('names the filter in a 400 for a bad one, and refuses filters on a report that does not take them', async () => {
    const bad = await get('/overview', [['is', 'visit:colour', ['red']]]);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^filters: filters\[0\]\[1\]/);
    const payments = await get('/payments', SEARCH);
    expect(payments.status).toBe(400);
    expect(payments.body.error).toMatch(/^filters: /);
  });
});
