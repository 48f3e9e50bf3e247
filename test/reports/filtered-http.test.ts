import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localPaths } from '../../local/service.js';
import { importEventLines } from '../../local/import-events.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { DynamoLookStore } from '../../lambdas/adapters/dynamo/look-store.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { parsePaymentLine } from '../../lambdas/domain/payments/import-line.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import { startTestService } from '../support/local.js';
import { CHROME_UA } from '../support/events.js';
import { propertiesResponse } from '../../lambdas/domain/reports/schemas.js';

/**
 * Filtered reports through the report API of the local server: events and
 * payments in through their real paths, the visit table written by the
 * operations run, read with `filters`. A site small enough to check by hand:
 *
 * - a: Search (Google), 10 March 10:00 UTC, /blog then /pricing and Signup (plan pro); paid $50 at 10:30
 * - b: Direct, 10 March 11:00, / then outbound clicks on github.com twice and docs.rs once; paid $20 at 11:30,
 *   $5 of it refunded
 * - c: Search, 11 March 09:00, /blog alone (plan free, and `__proto__` x)
 */
const RANGE = 'from=2026-03-10&to=2026-03-11';
const at = (time: string) => `2026-03-${time}Z`;
const LINES = [
  { n: 'pageview', u: 'https://example.com/blog', ts: at('10T10:00:00'), v: 'visitor-a', r: 'https://www.google.com/' },
  { n: 'pageview', u: 'https://example.com/pricing', ts: at('10T10:05:00'), v: 'visitor-a' },
  {
    n: 'goal',
    g: 'Signup',
    u: 'https://example.com/pricing',
    ts: at('10T10:06:00'),
    v: 'visitor-a',
    p: { plan: 'pro' },
  },
  { n: 'pageview', u: 'https://example.com/', ts: at('10T11:00:00'), v: 'visitor-b' },
  ...['https://github.com/acme', 'https://docs.rs/', 'https://github.com/acme'].map((l, i) => ({
    n: 'goal',
    g: 'Outbound Link: Click',
    l,
    u: 'https://example.com/',
    ts: at(`10T11:0${i + 1}:00`),
    v: 'visitor-b',
  })),
  {
    n: 'pageview',
    u: 'https://example.com/blog',
    ts: at('11T09:00:00'),
    v: 'visitor-c',
    r: 'https://www.google.com/',
    p: { plan: 'free', ['__proto__']: 'x' },
  },
].map((l) => JSON.stringify({ ...l, ua: CHROME_UA }));
const payment = (id: string, visitor: string, ts: string, amount: number, refunded = 0) =>
  JSON.stringify({
    provider: 'stripe',
    provider_payment_id: id,
    ts: at(ts),
    amount,
    currency: 'USD',
    refunded,
    status: 'paid',
    customer_id: `cus_${visitor}`,
    visitor_id: visitor,
    is_renewal: false,
    subscription_id: null,
  });

/** The fields of a report body the tests read. */
type Body = Record<string, unknown> & {
  current: Record<string, unknown>;
  rows: Array<{ key: string | null; visitors: number; revenue_usd: number; link?: string; conversion_rate?: number }>;
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
      [payment('pi_a', 'visitor-a', '10T10:30:00', 5000), payment('pi_b', 'visitor-b', '10T11:30:00', 2000, 500)].map(
        (l, i) => parsePaymentLine(l, i + 1),
      ),
    );
    await svc.archive();
    // The scheduled run and the operations run after it: nobody has looked at the site yet, so no table is written.
    await svc.scheduled();
    key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'filtered', new Date())).key;
  }, 120_000);
  afterAll(async () => svc?.cleanup());

  it('first after idle: the runs wrote no table for a site nobody looked at; the first filtered request asks for it and waits', async () => {
    // The scheduled run of beforeAll found no look at the site and no site-local day closing: nothing written.
    const table = localPaths(svc.dataDir).visitTable;
    expect(await readdir(table, { recursive: true }).catch(() => [])).not.toContainEqual(
      expect.stringContaining('site=example.com'),
    );
    await svc.scheduled();
    expect(await readdir(table, { recursive: true }).catch(() => [])).not.toContainEqual(
      expect.stringContaining('site=example.com'),
    );
    // The first request is a look at an idle site: it asks the operations function for a refresh and waits for it,
    // so it answers every visit, not an empty or day-old table.
    const { status, body } = await get('/overview', EVERYTHING);
    expect(status).toBe(200);
    expect(body.current).toMatchObject({ visitors: 3, sessions: 3, revenue_usd: 65 });
    const look = await new DynamoLookStore(svc.dynamo).get('example.com');
    expect(look?.refreshed).toBeGreaterThanOrEqual(look!.wanted!);
  });

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
    expect(direct.body.rows.map((r) => [r.key, r.visitors, r.revenue_usd])).toEqual([['/', 1, 15]]);
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

  it('answers the outbound links by URL under a filter: the links clicked in the matching visits', async () => {
    const outbound = `/goals?goal=${encodeURIComponent('Outbound Link: Click')}`;
    const links = async (filters: unknown) => {
      const query = filters === undefined ? '' : `&filters=${encodeURIComponent(JSON.stringify(filters))}`;
      const res = await fetch(`${svc.url}/api/v1/sites/example.com${outbound}&${RANGE}${query}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return { status: res.status, body: (await res.json()) as Body };
    };
    const direct = await links([['is', 'visit:channel', ['Direct']]]);
    expect(direct.status).toBe(200);
    expect(direct.body).toMatchObject({ goal: 'Outbound Link: Click', visitors: 1, total: 2 });
    // Revenue first, then visitors, then the URL: b's payment counts for each link of its visit.
    expect(direct.body.rows).toEqual([
      {
        goal: 'Outbound Link: Click',
        link: 'https://docs.rs/',
        other: false,
        visitors: 1,
        visits: 1,
        completions: 1,
        conversion_rate: 1,
        payments: 1,
        revenue_usd: 15,
      },
      {
        goal: 'Outbound Link: Click',
        link: 'https://github.com/acme',
        other: false,
        visitors: 1,
        visits: 1,
        completions: 2,
        conversion_rate: 1,
        payments: 1,
        revenue_usd: 15,
      },
    ]);
    expect((await links(SEARCH)).body).toMatchObject({ visitors: 2, total: 0, rows: [] });
    // A filter that matches every visit: the unfiltered rows, conversion against all 3 visitors.
    const [plain, all] = await Promise.all([links(undefined), links(EVERYTHING)]);
    expect(all.body.rows).toEqual(plain.body.rows);
    expect(all.body.rows.map((r) => [r.link, r.conversion_rate])).toEqual([
      ['https://docs.rs/', 0.333333],
      ['https://github.com/acme', 0.333333],
    ]);
  });

  it('gives the unfiltered figures for a filter that matches every visit, and leaves unfiltered answers as they were', async () => {
    for (const path of ['/overview', '/breakdown/channel', '/breakdown/page', '/goals', '/timeseries', '/properties']) {
      const plain = await get(path);
      const all = await get(path, EVERYTHING);
      expect(plain.body).not.toHaveProperty('filtered');
      const { filtered, ...rest } = all.body;
      expect(filtered).toEqual({ imported_excluded: null });
      expect([path, rest]).toEqual([path, plain.body]);
    }
  });

  it('lists the payments credited to matching visits, with the list filter, paging and CSV', async () => {
    const list = async (filters: unknown, query = '') => {
      const res = await fetch(
        `${svc.url}/api/v1/sites/example.com/payments?${RANGE}${query}&filters=${encodeURIComponent(JSON.stringify(filters))}`,
        { headers: { authorization: `Bearer ${key}` } },
      );
      return res.headers.get('content-type')?.startsWith('text/csv')
        ? { status: res.status, csv: await res.text() }
        : {
            status: res.status,
            body: (await res.json()) as { total: number; rows: Array<{ provider_payment_id: string }> },
          };
    };
    const ids = (r: Awaited<ReturnType<typeof list>>) => [
      r.body?.total,
      r.body?.rows.map((p) => p.provider_payment_id),
    ];
    expect(ids(await list(SEARCH))).toEqual([1, ['pi_a']]);
    expect(ids(await list(EVERYTHING))).toEqual([2, ['pi_b', 'pi_a']]);
    expect(ids(await list(EVERYTHING, '&limit=1&offset=1'))).toEqual([2, ['pi_a']]);
    expect(ids(await list(EVERYTHING, '&filter=refunded'))).toEqual([1, ['pi_b']]);
    expect(ids(await list(SEARCH, '&filter=refunded'))).toEqual([0, []]);
    expect(ids(await list(EVERYTHING, '&filter=unattributed'))).toEqual([0, []]);
    const csv = await list(SEARCH, '&format=csv');
    expect(csv.status).toBe(200);
    expect(csv.csv?.trim().split('\r\n')).toHaveLength(2);
    expect(csv.csv).toContain('pi_a');
  });

  it('keeps the customers whose first payment was credited to a matching visit in retention', async () => {
    const search = await get('/retention', SEARCH);
    expect(search.status).toBe(200);
    const groups = (b: Body) =>
      (b.channels as Array<{ label: string; customers: number; net_ltv_usd: number }>).map((g) => [
        g.label,
        g.customers,
        g.net_ltv_usd,
      ]);
    expect(groups(search.body)).toEqual([['Search', 1, 50]]);
    expect(search.body.total).toMatchObject({ customers: 1, net_ltv_usd: 50 });
    const { body: plain } = await get('/retention');
    expect((await get('/retention', EVERYTHING)).body).toEqual(plain);
    expect(groups(plain)).toEqual([
      ['Search', 1, 50],
      ['Direct', 1, 15],
    ]);
  });

  it('breaks visits and revenue down by a custom property, filtered or not, hostile keys as data', async () => {
    const plan = await get('/breakdown/prop:plan');
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ dimension: 'prop:plan', imported: null });
    expect(plan.body.rows.map((r) => [r.key, r.visitors, r.revenue_usd])).toEqual([
      ['pro', 1, 50],
      [null, 1, 15],
      ['free', 1, 0],
    ]);
    const search = await get('/breakdown/prop:plan', SEARCH);
    expect(search.body.rows.map((r) => [r.key, r.visitors, r.revenue_usd])).toEqual([
      ['pro', 1, 50],
      ['free', 1, 0],
    ]);
    const proto = await get(`/breakdown/${encodeURIComponent('prop:__proto__')}`);
    expect(proto.body.rows.map((r) => [r.key, r.visitors])).toEqual([
      [null, 2],
      ['x', 1],
    ]);
    const all = await get('/breakdown/prop:plan', EVERYTHING);
    const { filtered, ...rest } = all.body;
    expect(filtered).toEqual({ imported_excluded: null });
    expect(rest).toEqual(plan.body);
  });

  it('lists the custom property keys with their visitors, visits and credited revenue, filtered or not, as JSON and CSV', async () => {
    const keys = (b: Body) =>
      (b.rows as unknown as Array<Record<string, unknown>>).map((r) => [
        r.key,
        r.visitors,
        r.visits,
        r.payments,
        r.revenue_usd,
      ]);
    const plain = await get('/properties');
    expect(plain.status).toBe(200);
    expect(propertiesResponse.parse(plain.body)).toEqual(plain.body);
    expect(plain.body).toMatchObject({ total: 2, imported: null, range: { from: '2026-03-10', to: '2026-03-11' } });
    expect(plain.body).not.toHaveProperty('filtered');
    expect(keys(plain.body)).toEqual([
      ['plan', 2, 2, 1, 50],
      ['__proto__', 1, 1, 0, 0],
    ]);
    // A visit of the filter's key's value: its other keys come with it; ties sort by key.
    const free = await get('/properties', [['is', 'event:props:plan', ['free']]]);
    expect(free.body).toMatchObject({ total: 2, imported: null, filtered: { imported_excluded: null } });
    expect(keys(free.body)).toEqual([
      ['__proto__', 1, 1, 0, 0],
      ['plan', 1, 1, 0, 0],
    ]);
    expect(keys((await get('/properties', [['is', 'visit:channel', ['Direct']]])).body)).toEqual([]);
    const one = await fetch(`${svc.url}/api/v1/sites/example.com/properties?${RANGE}&limit=1&format=csv`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(one.headers.get('content-disposition')).toContain('example.com-properties-2026-03-10-to-2026-03-11.csv');
    expect((await one.text()).trim().split('\r\n')).toEqual([
      'key,visitors,visits,payments,revenue_usd',
      'plan,2,2,1,50',
    ]);
  });

  it('names the parameter or the filter in every 400', async () => {
    const cases: Array<[path: string, filters: unknown, error: RegExp]> = [
      ['/overview', [['is', 'visit:colour', ['red']]], /^filters: filters\[0\]\[1\]: unknown dimension/],
      ['/payments', [['is', 'visit:colour', ['red']]], /^filters: filters\[0\]\[1\]/],
      ['/retention', [['matches', 'event:page', ['(a+)+']]], /^filters: filters\[0\]/],
      ['/payments', 'nope', /^filters: /],
      ['/breakdown/prop:plan', [['is', 'event:props:', ['x']]], /^filters: filters\[0\]\[1\]/],
      [`/breakdown/prop:${'k'.repeat(301)}`, undefined, /^dimension: a property key has 1 to 300 bytes/],
      ['/breakdown/prop:', undefined, /^dimension: /],
      ['/breakdown/colour', undefined, /^dimension: must be one of channel, .*prop:<key>/],
      ['/properties', [['is', 'event:props:', ['x']]], /^filters: filters\[0\]\[1\]/],
      ['/properties?limit=0', undefined, /^limit: /],
      ['/properties?limit=1001', undefined, /^limit: /],
      ['/properties?limit=1e2', undefined, /^limit: /],
      ['/properties?range=3d', undefined, /^range: /],
    ];
    for (const [path, filters, error] of cases) {
      const query =
        filters === undefined
          ? ''
          : `&filters=${encodeURIComponent(typeof filters === 'string' ? filters : JSON.stringify(filters))}`;
      const [route, extra = ''] = path.split('?');
      const res = await fetch(
        `${svc.url}/api/v1/sites/example.com${route}?${RANGE}${extra ? `&${extra}` : ''}${query}`,
        {
          headers: { authorization: `Bearer ${key}` },
        },
      );
      const body = (await res.json()) as { error: string };
      expect([path, res.status, body.error]).toEqual([path, 400, expect.stringMatching(error)]);
    }
  });
});
