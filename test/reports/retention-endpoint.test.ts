import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retentionResponse } from '../../lambdas/domain/reports/schemas.js';
import { scenarioService, SITE } from './scenario.js';

type Scenario = Awaited<ReturnType<typeof scenarioService>>;
const MARCH = 'from=2026-03-01&to=2026-03-31';

/**
 * `GET /api/v1/sites/{domain}/retention` on the report scenario (scenario.ts),
 * numbers by hand (docs/retention.md). No provider sent subscription status,
 * so every status is by recency: cus_a (P1 03-20, renewal P3 03-25: gap under
 * 7 days, so a 7-day period + 7 days grace) still pays; cus_b, cus_x and dave
 * paid once, without a subscription: one-off, not judged.
 */
describe('retention endpoint', () => {
  let s: Scenario;
  beforeAll(async () => {
    s = await scenarioService();
  });
  afterAll(async () => s.svc.cleanup());

  const group = (key: string | null, label: string, unattributed: boolean, f: Array<number | null>) => {
    const [
      customers,
      still_paying,
      first_payment_usd,
      refunded_usd,
      net_ltv_usd,
      avg_ltv_usd,
      refund_rate,
      churn_customers,
      churned,
      churn_30d,
      share_customers,
      share_still_paying,
    ] = f;
    return {
      key,
      label,
      unattributed,
      customers,
      still_paying,
      first_payment_usd,
      refunded_usd,
      net_ltv_usd,
      avg_ltv_usd,
      refund_rate,
      churn_customers,
      churned,
      churn_30d,
      share_customers,
      share_still_paying,
    };
  };
  // cus_a: Search, 49 + 49; cus_b: Communities / news.ycombinator.com / launch, 116.98 USD less 23.40 refunded; cus_x: Unattributed, 30.
  const SEARCH = [1, 1, 49, 0, 98, 98, 0, 1, 0, null, 0.333333, 1];
  const HN = [1, 0, 93.58, 23.4, 93.58, 93.58, 1, 0, 0, null, 0.333333, 0];
  const UNATTRIBUTED = group(null, 'Unattributed', true, [1, 0, 30, 0, 30, 30, 0, 0, 0, null, 0.333333, 0]);

  it('reports the customers whose first payment is in March, by credited channel, referrer and campaign', async () => {
    const res = await s.get(`/api/v1/sites/${SITE}/retention?${MARCH}`);
    expect(res.status).toBe(200);
    const r = retentionResponse.parse(await res.json());
    expect(r).toEqual({
      site: SITE,
      range: { from: '2026-03-01', to: '2026-03-31', timezone: 'Europe/Berlin' },
      // First payment 2026-02-15 (dave) to today 2026-03-31, both included.
      days_of_data: 45,
      day_one: true,
      headline: null,
      // Net LTV 221.58 is the overview's March revenue: every March payment is a March customer's.
      total: group(null, 'All customers', false, [3, 1, 172.58, 23.4, 221.58, 73.86, 0.333333, 1, 0, null, 1, 1]),
      channels: [
        group('Search', 'Search', false, SEARCH),
        group('Communities', 'Communities', false, HN),
        UNATTRIBUTED,
      ],
      referrers: [
        group('www.google.com', 'www.google.com', false, SEARCH),
        group('news.ycombinator.com', 'news.ycombinator.com', false, HN),
        UNATTRIBUTED,
      ],
      campaigns: [group(null, '(none)', false, SEARCH), group('launch', 'launch', false, HN), UNATTRIBUTED],
      status_sources: [{ provider: 'stripe', subscription_status: false }],
    });
  });

  it('takes range=all from the first tracked day, adding dave (Social, 02-15)', async () => {
    const r = retentionResponse.parse(await (await s.get(`/api/v1/sites/${SITE}/retention?range=all`)).json());
    expect(r.range.from).toBe('2026-02-15');
    expect(r.total).toMatchObject({ customers: 4, still_paying: 1, net_ltv_usd: 241.58, churn_customers: 1 });
    expect(r.channels.map((g) => [g.label, g.customers, g.net_ltv_usd])).toEqual([
      ['Search', 1, 98],
      ['Communities', 1, 93.58],
      ['Unattributed', 1, 30],
      ['Social', 1, 20],
    ]);
  });

  it('answers an empty report for a site without payments', async () => {
    const r = retentionResponse.parse(await (await s.get('/api/v1/sites/empty.test/retention')).json());
    expect(r).toMatchObject({ days_of_data: 0, day_one: true, headline: null, channels: [], status_sources: [] });
    expect(r.total.customers).toBe(0);
  });

  it('answers 401 without a valid key', async () => {
    for (const key of [null, 'ff_not-a-key']) {
      const res = await s.get(`/api/v1/sites/${SITE}/retention`, key);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
  });

  it("answers 404 for another account's site or no site", async () => {
    for (const [path, key] of [
      [`/api/v1/sites/${SITE}/retention`, s.rivalKey],
      ['/api/v1/sites/rival.test/retention', s.key],
      ['/api/v1/sites/nosuch.test/retention', s.key],
    ] as const) {
      const res = await s.get(path, key);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toHaveProperty('error');
    }
  });

  it.each([
    ['range=week', 'range'],
    ['from=2026-03-01', 'to'],
    ['from=2026-03-31&to=2026-03-01', 'from'],
    ['from=2010-01-01&to=2026-03-01', 'to'],
  ])('answers 400 naming the parameter for %s', async (q, param) => {
    const res = await s.get(`/api/v1/sites/${SITE}/retention?${q}`);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(new RegExp(`^${param}\\b`));
  });

  it('is in the OpenAPI document', async () => {
    const doc = await (await s.get('/api/v1/openapi.json', null)).json();
    expect(doc.paths['/api/v1/sites/{domain}/retention'].get.operationId).toBe('getRetention');
    expect(doc.components.schemas.Retention.properties).toHaveProperty('status_sources');
  });
});
