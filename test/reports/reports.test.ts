import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  breakdownResponse,
  goalsResponse,
  overviewResponse,
  paymentsResponse,
  sitesResponse,
  timelineResponse,
  timeseriesResponse,
} from '../../lambdas/domain/reports/schemas.js';
import { scenarioService } from './scenario.js';

type Scenario = Awaited<ReturnType<typeof scenarioService>>;
const MARCH = 'from=2026-03-01&to=2026-03-31';
const P2_NET = 93.58; // 100 EUR at the ECB rate of 2026-03-02 (1.1698) = 116.98 USD; 80% kept.

describe('report API on the hand-built scenario (every number by hand)', () => {
  let s: Scenario;
  beforeAll(async () => {
    s = await scenarioService();
  });
  afterAll(async () => s.svc.cleanup());
  const body = async (path: string) => {
    const res = await s.get(path);
    expect(res.status, `${path}: ${res.status}`).toBe(200);
    return res.json();
  };

  it("lists the sites of the key's account only", async () => {
    const sites = sitesResponse.parse(await body('/api/v1/sites'));
    expect(sites).toEqual({
      sites: [
        { domain: 'empty.test', timezone: 'UTC' },
        { domain: 'shop.test', timezone: 'Europe/Berlin' },
      ],
    });
  });

  it('gives the overview, the previous period and the change', async () => {
    const o = overviewResponse.parse(await body(`/api/v1/sites/shop.test/overview?${MARCH}`));
    expect(o.range).toEqual({ from: '2026-03-01', to: '2026-03-31', timezone: 'Europe/Berlin' });
    expect(o.previous_range).toEqual({ from: '2026-01-29', to: '2026-02-28', timezone: 'Europe/Berlin' });
    // Top stats: V1 (2 pages + Signup, 360 s), V2 (1 page: a bounce), V3 (2 pages, 200 s), V4 (1 page + outbound click, 60 s).
    expect(o.current).toEqual({
      visitors: 3,
      sessions: 4,
      pageviews: 6,
      views_per_visit: 1.5,
      bounce_rate: 0.25,
      visit_duration: 207, // (360 + 200 + 60) / 3 = 206.67
      payments: 4,
      customers: 3,
      revenue_usd: 221.58,
      converted: 2,
      matched_payments: 3,
      matched_revenue_usd: 191.58,
      conversion: 0.666667,
      revenue_per_visitor: 63.86,
    });
    expect(o.previous).toEqual({
      visitors: 1,
      sessions: 1,
      pageviews: 1,
      views_per_visit: 1,
      bounce_rate: 1,
      visit_duration: null,
      payments: 1,
      customers: 1,
      revenue_usd: 20,
      converted: 1,
      matched_payments: 1,
      matched_revenue_usd: 20,
      conversion: 1,
      revenue_per_visitor: 20,
    });
    expect(o.change).toEqual({
      visitors: 2,
      revenue_usd: 10.079,
      payments: 3,
      conversion: -0.333333,
      revenue_per_visitor: 2.193,
      sessions: 3,
      pageviews: 5,
      views_per_visit: 0.5,
      bounce_rate: -0.75,
      visit_duration: null, // no timed visit before
    });
  });

  it('gives the goals report: visitors, visits, completions, conversion and the revenue of visits with the goal', async () => {
    const g = goalsResponse.parse(await body(`/api/v1/sites/shop.test/goals?${MARCH}`));
    expect(g).toMatchObject({ goal: null, visitors: 3, total: 2 });
    // Signup happened in V1, which P1 and its renewal P3 are credited to (98 USD); the outbound click in V4 (P5 failed: no revenue).
    expect(g.rows).toEqual([
      {
        goal: 'Signup',
        link: null,
        other: false,
        visitors: 1,
        visits: 1,
        completions: 1,
        conversion_rate: 0.333333,
        payments: 2,
        revenue_usd: 98,
      },
      {
        goal: 'Outbound Link: Click',
        link: null,
        other: false,
        visitors: 1,
        visits: 1,
        completions: 1,
        conversion_rate: 0.333333,
        payments: 0,
        revenue_usd: 0,
      },
    ]);
    const links = goalsResponse.parse(
      await body(`/api/v1/sites/shop.test/goals?${MARCH}&goal=${encodeURIComponent('Outbound Link: Click')}`),
    );
    expect(links.rows).toEqual([
      {
        goal: 'Outbound Link: Click',
        link: 'https://github.com/x',
        other: false,
        visitors: 1,
        visits: 1,
        completions: 1,
        conversion_rate: 0.333333,
        payments: 0,
        revenue_usd: 0,
      },
    ]);
    expect(
      goalsResponse.parse(await body(`/api/v1/sites/shop.test/goals?${MARCH}&goal=Signup`)).rows.map((r) => r.goal),
    ).toEqual(['Signup']);
    expect(goalsResponse.parse(await body(`/api/v1/sites/shop.test/goals?${MARCH}&goal=Nope`))).toMatchObject({
      total: 0,
      rows: [],
    });
    expect(goalsResponse.parse(await body(`/api/v1/sites/shop.test/goals?${MARCH}&limit=1`))).toMatchObject({
      total: 2,
      rows: [{ goal: 'Signup' }],
    });
    expect(
      goalsResponse.parse(await body('/api/v1/sites/shop.test/goals?from=2026-02-01&to=2026-02-28')),
    ).toMatchObject({ visitors: 1, total: 0, rows: [] });
    const bad = await s.get(`/api/v1/sites/shop.test/goals?limit=1001`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: expect.stringMatching(/^limit: /) });
  });

  it.each(['limit=1e2', 'limit=0x10', 'limit=%205', 'limit=5.0', 'limit=-1', 'limit=', 'offset=1e3', 'offset=0b1'])(
    'answers %s with 400 naming the parameter: integers in decimal digits only',
    async (param) => {
      const res = await s.get(`/api/v1/sites/shop.test/payments?${MARCH}&${param}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: `${param.split('=')[0]}: must be a whole number written in decimal digits`,
      });
    },
  );

  it("exports breakdowns, payments and goals as CSV with the JSON's columns; errors stay JSON", async () => {
    const get = (path: string, accept?: string) =>
      fetch(`${s.svc.url}${path}`, { headers: { authorization: `Bearer ${s.key}`, ...(accept ? { accept } : {}) } });
    const cells = (v: unknown) => (v === null ? '' : String(v));
    const json = breakdownResponse.parse(await body(`/api/v1/sites/shop.test/breakdown/channel?${MARCH}`));
    const res = await get(`/api/v1/sites/shop.test/breakdown/channel?${MARCH}&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).toBe(
      'attachment; filename="shop.test-channel-2026-03-01-to-2026-03-31.csv"',
    );
    const text = await res.text();
    expect(text.endsWith('\r\n')).toBe(true);
    const lines = text.split('\r\n').slice(0, -1);
    expect(lines[0]).toBe('key,label,unattributed,visitors,payments,customers,revenue_usd,revenue_per_visitor');
    expect(lines.slice(1)).toEqual(
      json.rows.map((r) =>
        [r.key, r.label, r.unattributed, r.visitors, r.payments, r.customers, r.revenue_usd, r.revenue_per_visitor]
          .map(cells)
          .join(','),
      ),
    );

    const goalsCsv = await get(
      `/api/v1/sites/shop.test/goals?${MARCH}&goal=${encodeURIComponent('Outbound Link: Click')}`,
      'text/csv',
    );
    expect(goalsCsv.headers.get('content-disposition')).toBe(
      'attachment; filename="shop.test-goals-Outbound_Link_Click-2026-03-01-to-2026-03-31.csv"',
    );
    expect(await goalsCsv.text()).toBe(
      'goal,link,other,visitors,visits,completions,conversion_rate,payments,revenue_usd\r\nOutbound Link: Click,https://github.com/x,false,1,1,1,0.333333,0,0\r\n',
    );

    const payments = await (await get(`/api/v1/sites/shop.test/payments?${MARCH}&filter=refunded&format=csv`)).text();
    const [header, row] = payments.split('\r\n');
    expect(header?.split(',').slice(0, 3)).toEqual(['provider', 'provider_payment_id', 'ts']);
    expect(header).toContain(',touch.channel,');
    const values = Object.fromEntries((header ?? '').split(',').map((h, i) => [h, row?.split(',')[i]]));
    expect(values).toMatchObject({
      provider_payment_id: 'pi_2',
      status: 'paid',
      refunded: '2000',
      'touch.channel': 'Communities',
      'touch.campaign': 'launch',
      is_renewal: 'false',
      'first_touch.channel': 'Communities',
    });

    // format=json wins over Accept; a report without CSV says so; errors stay JSON.
    expect(
      (await get(`/api/v1/sites/shop.test/goals?${MARCH}&format=json`, 'text/csv')).headers.get('content-type'),
    ).toContain('application/json');
    const noCsv = await get(`/api/v1/sites/shop.test/overview?${MARCH}&format=csv`);
    expect([noCsv.status, await noCsv.json()]).toEqual([
      400,
      { error: 'format: csv is available for breakdowns, properties, payments and goals' },
    ]);
    const unknown = await get('/api/v1/sites/nope.test/goals?format=csv', 'text/csv');
    expect([unknown.status, unknown.headers.get('content-type')]).toEqual([404, 'application/json']);
    expect((await get('/api/v1/sites/shop.test/goals?format=xml')).status).toBe(400);
  });

  it('gives the time series by day: every day of March, adding up to the overview', async () => {
    const t = timeseriesResponse.parse(await body(`/api/v1/sites/shop.test/timeseries?${MARCH}&interval=day`));
    expect(t.range).toEqual({ from: '2026-03-01', to: '2026-03-31', timezone: 'Europe/Berlin' });
    expect(t.interval).toBe('day');
    expect(t.points).toHaveLength(31);
    const busy = t.points.filter((p) => p.sessions + p.payments > 0);
    expect(busy).toEqual([
      { start: '2026-03-05', visitors: 1, sessions: 1, pageviews: 2, payments: 0, revenue_usd: 0 },
      { start: '2026-03-10', visitors: 1, sessions: 1, pageviews: 2, payments: 1, revenue_usd: P2_NET },
      { start: '2026-03-12', visitors: 1, sessions: 1, pageviews: 1, payments: 0, revenue_usd: 0 }, // P5 failed
      { start: '2026-03-15', visitors: 0, sessions: 0, pageviews: 0, payments: 1, revenue_usd: 30 },
      { start: '2026-03-20', visitors: 1, sessions: 1, pageviews: 1, payments: 1, revenue_usd: 49 },
      { start: '2026-03-25', visitors: 0, sessions: 0, pageviews: 0, payments: 1, revenue_usd: 49 },
    ]);
    // The default for 31 days is by day, and the points add up to the overview (sessions 4, payments 4, 221.58 USD).
    expect(timeseriesResponse.parse(await body(`/api/v1/sites/shop.test/timeseries?${MARCH}`))).toEqual(t);
    expect(t.points.reduce((n, p) => n + Math.round(p.revenue_usd * 100), 0)).toBe(22158);
  });

  it("gives the time series by hour in the site's timezone, 23 hours on the day clocks spring forward", async () => {
    const day = timeseriesResponse.parse(
      await body('/api/v1/sites/shop.test/timeseries?from=2026-03-20&to=2026-03-20'),
    );
    expect(day.interval).toBe('hour');
    expect(day.points.map((p) => p.start)).toEqual(
      Array.from({ length: 24 }, (_, h) => `2026-03-20T${String(h).padStart(2, '0')}:00`),
    );
    // V2 at 09:00Z and P1 at 09:10Z: 10:00 in Berlin (UTC+1 until 29 March).
    expect(day.points.filter((p) => p.sessions + p.payments > 0)).toEqual([
      { start: '2026-03-20T10:00', visitors: 1, sessions: 1, pageviews: 1, payments: 1, revenue_usd: 49 },
    ]);
    const dst = timeseriesResponse.parse(
      await body('/api/v1/sites/shop.test/timeseries?from=2026-03-29&to=2026-03-29&interval=hour'),
    );
    expect(dst.points).toHaveLength(23);
    expect(dst.points.map((p) => p.start)).not.toContain('2026-03-29T02:00');
  });

  it("gives the time series by month, a partial month counting only the range's days", async () => {
    const t = timeseriesResponse.parse(
      await body('/api/v1/sites/shop.test/timeseries?from=2026-02-15&to=2026-03-10&interval=month'),
    );
    expect(t.points).toEqual([
      { start: '2026-02', visitors: 1, sessions: 1, pageviews: 1, payments: 1, revenue_usd: 20 },
      { start: '2026-03', visitors: 2, sessions: 2, pageviews: 4, payments: 1, revenue_usd: P2_NET },
    ]);
  });

  it.each([
    ['range=30d&interval=hour', 'interval'],
    ['from=2025-01-01&to=2026-03-31&interval=day', 'interval'],
    ['interval=week', 'interval'],
    ['range=yesterday', 'range'],
  ])('answers 400 naming the parameter for timeseries?%s', async (q, param) => {
    const res = await s.get(`/api/v1/sites/shop.test/timeseries?${q}`);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(new RegExp(`^${param}\\b`));
  });

  it('breaks down by channel, revenue first, with the Unattributed row', async () => {
    const b = breakdownResponse.parse(await body(`/api/v1/sites/shop.test/breakdown/channel?${MARCH}`));
    expect(b.total).toBe(5);
    expect(b.rows).toEqual([
      {
        key: 'Search',
        label: 'Search',
        unattributed: false,
        visitors: 1,
        payments: 2,
        customers: 1,
        revenue_usd: 98,
        revenue_per_visitor: 98,
      },
      {
        key: 'Communities',
        label: 'Communities',
        unattributed: false,
        visitors: 1,
        payments: 1,
        customers: 1,
        revenue_usd: P2_NET,
        revenue_per_visitor: P2_NET,
      },
      {
        key: null,
        label: 'Unattributed',
        unattributed: true,
        visitors: 0,
        payments: 1,
        customers: 1,
        revenue_usd: 30,
        revenue_per_visitor: null,
      },
      {
        key: 'AI',
        label: 'AI',
        unattributed: false,
        visitors: 1,
        payments: 0,
        customers: 0,
        revenue_usd: 0,
        revenue_per_visitor: 0,
      },
      {
        key: 'Direct',
        label: 'Direct',
        unattributed: false,
        visitors: 1,
        payments: 0,
        customers: 0,
        revenue_usd: 0,
        revenue_per_visitor: 0,
      },
    ]);
  });

  it('counts a payment for every page of its credited visit, and visits per page viewed', async () => {
    const b = breakdownResponse.parse(await body(`/api/v1/sites/shop.test/breakdown/page?${MARCH}`));
    const byKey = Object.fromEntries(b.rows.map((r) => [r.label, [r.visitors, r.payments, r.revenue_usd]]));
    expect(byKey).toEqual({
      '/pricing': [3, 3, 191.58],
      '/': [2, 2, 98],
      '/blog': [1, 1, P2_NET],
      Unattributed: [0, 1, 30],
    });
  });

  it.each([
    ['campaign', { launch: [1, 1], '(none)': [3, 2] }],
    ['landing_page', { '/': [2, 2], '/blog': [1, 1], '/pricing': [1, 0] }],
    ['referrer', { 'www.google.com': [1, 2], 'news.ycombinator.com': [1, 1], 'chatgpt.com': [1, 0], '(none)': [1, 0] }],
    ['country', { DE: [2, 2], US: [1, 1], FR: [1, 0] }],
    ['device', { Desktop: [3, 2], Mobile: [1, 1] }],
    ['browser', { Chrome: [2, 2], Safari: [1, 1], Firefox: [1, 0] }],
    ['os', { macOS: [2, 2], iOS: [1, 1], Linux: [1, 0] }],
    ['keyword', { '(none)': [4, 3] }],
    ['language', { de: [4, 3] }],
  ])('breaks down by %s (visitors, payments per row)', async (dimension, expected) => {
    const b = breakdownResponse.parse(await body(`/api/v1/sites/shop.test/breakdown/${dimension}?${MARCH}`));
    const rows = Object.fromEntries(
      b.rows.filter((r) => !r.unattributed).map((r) => [r.label, [r.visitors, r.payments]]),
    );
    expect(rows).toEqual(expected);
    expect(b.rows.find((r) => r.unattributed)).toMatchObject({ payments: 1, revenue_usd: 30 });
    // The rows (Unattributed included) add up to the overview's payments, for every dimension but page.
    expect(b.rows.reduce((n, r) => n + r.payments, 0)).toBe(4);
  });

  it('applies the breakdown limit after counting rows', async () => {
    const b = breakdownResponse.parse(await body(`/api/v1/sites/shop.test/breakdown/channel?${MARCH}&limit=2`));
    expect(b.total).toBe(5);
    expect(b.rows.map((r) => r.label)).toEqual(['Search', 'Communities']);
  });

  it('lists payments newest first, with filters and paging', async () => {
    const all = paymentsResponse.parse(await body(`/api/v1/sites/shop.test/payments?${MARCH}`));
    expect(all).toMatchObject({ filter: 'all', total: 5, limit: 20, offset: 0 });
    expect(all.rows.map((r) => r.provider_payment_id)).toEqual(['in_3', 'pi_1', 'pi_4', 'pi_5', 'pi_2']);
    const p2 = all.rows.find((r) => r.provider_payment_id === 'pi_2');
    expect(p2).toMatchObject({
      amount: 10000,
      currency: 'EUR',
      amount_usd: 116.98,
      refunded: 2000,
      net_usd: P2_NET,
      status: 'paid',
      visitor: 'bob-00000001',
      touch: { channel: 'Communities', campaign: 'launch', landing_page: '/blog', device: 'Mobile', country: 'US' },
    });
    expect(all.rows.find((r) => r.provider_payment_id === 'in_3')).toMatchObject({
      is_renewal: true,
      visitor_id: null,
      visitor: 'alice-0001',
      touch: { channel: 'Search' },
      first_touch: { channel: 'Search', ts: '2026-03-05T10:00:00.000Z' },
    });
    // A failed payment moved no money: net_usd 0 (`docs/payments.md` "Money"), so the list adds up to the overview's revenue.
    expect(all.rows.find((r) => r.provider_payment_id === 'pi_5')).toMatchObject({
      status: 'failed',
      net_usd: 0,
      amount_usd: expect.any(Number),
    });
    const overview = overviewResponse.parse(await body(`/api/v1/sites/shop.test/overview?${MARCH}`));
    expect(Math.round(all.rows.reduce((sum, r) => sum + r.net_usd, 0) * 100) / 100).toBe(overview.current.revenue_usd);
    const ids = async (q: string) =>
      paymentsResponse.parse(await body(`/api/v1/sites/shop.test/payments?${MARCH}&${q}`));
    expect((await ids('filter=attributed')).rows.map((r) => r.provider_payment_id)).toEqual([
      'in_3',
      'pi_1',
      'pi_5',
      'pi_2',
    ]);
    expect((await ids('filter=unattributed')).rows.map((r) => r.provider_payment_id)).toEqual(['pi_4']);
    expect((await ids('filter=refunded')).rows.map((r) => r.provider_payment_id)).toEqual(['pi_2']);
    const page = await ids('limit=2&offset=1');
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(page.rows.map((r) => r.provider_payment_id)).toEqual(['pi_1', 'pi_4']);
  });

  it("gives a visitor's timeline: visits with pages, goals, payments and exits, renewals outside visits", async () => {
    const t = timelineResponse.parse(await body('/api/v1/sites/shop.test/visitors/alice-0001'));
    expect(t).toMatchObject({
      site: 'shop.test',
      visitor_id: 'alice-0001',
      country: 'DE',
      browser: 'Chrome',
      device: 'Desktop',
    });
    expect(t.entries.map((e) => e.type)).toEqual(['visit', 'visit', 'payment']);
    const [v1, v2, renewal] = t.entries;
    expect(v1).toMatchObject({
      start: '2026-03-05T10:00:00.000Z',
      end: '2026-03-05T10:06:00.000Z',
      channel: 'Search',
      source: 'Google',
      pageviews: 2,
    });
    expect(v1?.type === 'visit' && v1.steps).toEqual([
      { type: 'page', ts: '2026-03-05T10:00:00.000Z', path: '/', secs: 300 },
      { type: 'page', ts: '2026-03-05T10:05:00.000Z', path: '/pricing', secs: null },
      { type: 'goal', ts: '2026-03-05T10:06:00.000Z', name: 'Signup' },
      { type: 'exit', ts: '2026-03-05T10:06:00.000Z', page: '/pricing', link: null },
    ]);
    expect(v2?.type === 'visit' && v2.steps.map((s) => s.type)).toEqual(['page', 'payment', 'exit']);
    // Steps in time order, the exit last, even when the payment came after the last page (`docs/api.md` "Decisions", timeline exit step).
    for (const entry of t.entries) {
      if (entry.type !== 'visit') continue;
      const times = entry.steps.map((step) => Date.parse(step.ts));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(entry.steps.at(-1)?.type).toBe('exit');
    }
    expect(renewal).toMatchObject({ type: 'payment', provider_payment_id: 'in_3', is_renewal: true });
    expect(t.payments.map((p) => p.provider_payment_id)).toEqual(['pi_1', 'in_3']);
    const carol = timelineResponse.parse(await body('/api/v1/sites/shop.test/visitors/carol-000001'));
    // Carol's last page is at 08:01 and her payment at 08:30: the exit follows the payment.
    expect(
      carol.entries[0]?.type === 'visit' && carol.entries[0].steps.slice(-2).map((step) => [step.type, step.ts]),
    ).toEqual([
      ['payment', '2026-03-12T08:30:00.000Z'],
      ['exit', '2026-03-12T08:30:00.000Z'],
    ]);
    expect(carol.entries[0]?.type === 'visit' && carol.entries[0].steps.at(-1)).toEqual({
      type: 'exit',
      ts: '2026-03-12T08:30:00.000Z',
      page: '/',
      link: 'https://github.com/x',
    });
  });

  it('answers 404 for an unknown visitor, a site of another account, or no site', async () => {
    for (const path of [
      '/api/v1/sites/shop.test/visitors/nobody-123',
      '/api/v1/sites/rival.test/overview',
      '/api/v1/sites/nosuch.test/overview',
      '/api/v1/sites/shop.test/nothing',
    ]) {
      const res = await s.get(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toHaveProperty('error');
    }
  });

  it.each([
    ['range=week', 'range'],
    ['from=2026-03-01', 'to'],
    ['from=2026-03-31&to=2026-03-01', 'from'],
    ['from=2026-02-30&to=2026-03-01', 'from'],
    ['from=2010-01-01&to=2026-03-01', 'to'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
  ])('answers 400 naming the parameter for %s', async (q, param) => {
    const res = await s.get(`/api/v1/sites/shop.test/breakdown/channel?${q}`);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(new RegExp(`^${param}\\b`));
  });

  it('answers 400 for an unknown dimension or filter, and a payments limit over 200', async () => {
    for (const [path, param] of [
      ['/api/v1/sites/shop.test/breakdown/color', 'dimension'],
      ['/api/v1/sites/shop.test/payments?filter=big', 'filter'],
      ['/api/v1/sites/shop.test/payments?limit=201', 'limit'],
      ['/api/v1/sites/shop.test/payments?offset=-1', 'offset'],
    ] as const) {
      const res = await s.get(path);
      expect(res.status, path).toBe(400);
      expect((await res.json()).error).toMatch(new RegExp(`^${param}\\b`));
    }
  });

  it('uses range all for a site tracked 30 days or less, and echoes it', async () => {
    const o = overviewResponse.parse(await body('/api/v1/sites/shop.test/overview'));
    // First tracked day: 2026-02-15 (dave), 45 days before today: the default is 30d.
    expect(o.range).toEqual({ from: '2026-03-02', to: '2026-03-31', timezone: 'Europe/Berlin' });
    const all = overviewResponse.parse(await body('/api/v1/sites/shop.test/overview?range=all'));
    expect(all.range.from).toBe('2026-02-15');
    expect(all.current.sessions).toBe(5);
    const empty = overviewResponse.parse(await body('/api/v1/sites/empty.test/overview'));
    expect(empty.range).toEqual({ from: '2026-03-31', to: '2026-03-31', timezone: 'UTC' });
    expect(empty.current).toMatchObject({ visitors: 0, conversion: null, revenue_per_visitor: null });
    expect(empty.change.visitors).toBeNull();
  });

  it('serves its OpenAPI 3.1 document without a key', async () => {
    const res = await s.get('/api/v1/openapi.json', null);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/api/v1/sites/{domain}/breakdown/{dimension}');
    expect(Object.keys(doc.paths)).toContain('/api/v1/sites/{domain}/timeseries');
  });
});
