import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startLocalService, type LocalService } from '../../local/service.js';
import { DEMO_ACCOUNT, DEMO_SITE, seedDemo } from '../../local/demo/seed.js';
import { ensureDemoUser } from '../../local/demo/user.js';
import { formatCount, formatUsd, formatUsdOrDash } from '../../app/src/format.js';
import type { Breakdown, Goals, Overview, Payments, Timeseries } from '../../app/src/api.js';
import { orderRows } from '../../app/src/components/breakdown-rows.js';
import { chartLabel } from '../../app/src/components/chart-points.js';
import { launchChromium } from './harness.js';
import { CARDS, DESKTOP, PHONE, SHOTS, axeViolations, signInDemo } from './app-pages.js';

/**
 * The dashboard's filters in Chromium (`docs/app.md` "Filters") on the demo
 * site with its visit table written: a click on a channel row filters every
 * panel, the chart and the top stats (and the previous period) to what the
 * report API answers for the same `filters`; the address reloads to the same
 * view and back/forward step through filter changes; a chip negates and
 * removes; axe-core finds nothing with a filter on.
 */

const SITE_PATH = `/sites/${DEMO_SITE}`;
const POLL = 15_000;
const SEARCH = JSON.stringify([['is', 'visit:channel', ['Search']]]);
const NOT_SEARCH = JSON.stringify([['is_not', 'visit:channel', ['Search']]]);
/** Each panel's first tab: its dimension. */
const FIRST_TABS: ReadonlyArray<[panel: string, dimension: string]> = [
  ['sources', 'channel'],
  ['pages', 'page'],
  ['locations', 'country'],
  ['devices', 'device'],
];

describe('filters in the app, in Chromium', () => {
  let dataDir = '';
  let svc: LocalService;
  let browser: Browser;
  let desktop: BrowserContext;
  let phone: BrowserContext;
  let page: Page;
  let key = '';

  /** GET from the report API with the demo key, `filters` (JSON) added when given. */
  const api = async <T>(path: string, filters?: string): Promise<T> => {
    const url = `${svc.url}/api/v1/sites/${DEMO_SITE}${path}${filters ? `&filters=${encodeURIComponent(filters)}` : ''}`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status, url).toBe(200);
    return (await res.json()) as T;
  };
  const settled = async (p: Page) => {
    await p.waitForLoadState('networkidle');
    await p.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  };
  const text = async (p: Page, selector: string) => (await p.locator(selector).first().innerText()).trim();

  /** The tiles, their previous-period values, every panel's first tab, the goals and the chart equal the API's for `filters`. */
  const expectDashboard = async (p: Page, filters: string | undefined) => {
    const o = await api<Overview>('/overview?range=30d', filters);
    for (const [field, format] of CARDS) {
      await expect
        .poll(() => text(p, `[data-metric=${field}]`), { message: `${filters} ${field}`, timeout: POLL })
        .toBe(format(o.current[field]));
      expect(await p.locator(`[data-previous=${field}]`).textContent(), `${filters} previous ${field}`).toBe(
        format(o.previous[field]),
      );
    }
    for (const [panel, dimension] of FIRST_TABS) {
      const b = await api<Breakdown>(`/breakdown/${dimension}?range=30d&limit=10`, filters);
      const rows = () =>
        p
          .locator(`[data-panel=${panel}] table[data-dimension=${dimension}] tbody tr`)
          .evaluateAll((trs) =>
            trs.map((r) => [
              r.getAttribute('data-key'),
              ...['visitors', 'revenue_usd', 'revenue_per_visitor'].map((c) =>
                r.querySelector(`[data-col=${c}]`)?.textContent?.trim(),
              ),
            ]),
          );
      await expect
        .poll(rows, { message: `${filters} ${dimension}`, timeout: POLL })
        .toEqual(
          orderRows(b.rows, 'revenue_usd').map((r) => [
            r.unattributed ? '__unattributed' : (r.key ?? '__none'),
            r.unattributed ? '—' : formatCount(r.visitors),
            formatUsd(r.revenue_usd),
            formatUsdOrDash(r.revenue_per_visitor),
          ]),
        );
    }
    const g = await api<Goals>('/goals?range=30d&limit=10', filters);
    await expect
      .poll(
        () =>
          p
            .locator('[data-panel=goals] tbody tr')
            .evaluateAll((trs) =>
              trs.map((r) => [r.getAttribute('data-key'), r.querySelector('[data-col=visitors]')?.textContent?.trim()]),
            ),
        { message: `${filters} goals`, timeout: POLL },
      )
      .toEqual(g.rows.map((r) => [r.goal, formatCount(r.visitors)]));
    const s = await api<Timeseries>('/timeseries?range=30d&interval=day', filters);
    await expect
      .poll(() => p.getAttribute('.chart', 'aria-label'), { message: `${filters} chart`, timeout: POLL })
      .toBe(chartLabel(s.points, s.interval));
    return o;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'app-filters-browser-'));
    svc = await startLocalService({ dataDir, port: 0, app: true, sessionizeIntervalMs: 0 });
    key = (await seedDemo(svc, { days: 35, visitsPerDay: 40 })).key;
    // The operations run writes the visit table the filtered reports read (docs/data-model.md).
    await svc.scheduled();
    const demo = await ensureDemoUser(svc.dynamo, dataDir, DEMO_ACCOUNT, svc.url);
    if (!('password' in demo)) throw new Error('the fresh demo user has a password');
    await mkdir(SHOTS, { recursive: true });
    browser = await launchChromium();
    desktop = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light' });
    page = await desktop.newPage();
    await signInDemo(page, svc.url, demo.password, DEMO_SITE);
    phone = await browser.newContext({
      viewport: PHONE,
      isMobile: true,
      hasTouch: true,
      colorScheme: 'light',
      storageState: await desktop.storageState(),
    });
  }, 420_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    await rm(dataDir, { recursive: true, force: true });
  }, 180_000);

  it('filters every panel, the chart and the top stats by a channel row, and the address reloads to it', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    const unfiltered = await expectDashboard(page, undefined);
    const filtered = await api<Overview>('/overview?range=30d', SEARCH);
    // The filter changes the numbers (else the comparisons below would prove nothing).
    expect(filtered.current.sessions).toBeGreaterThan(0);
    expect(filtered.current.sessions).toBeLessThan(unfiltered.current.sessions);
    await page.click('[data-panel=sources] table[data-dimension=channel] tr[data-key=Search] a[data-filter-by]');
    await page.waitForURL(/[?&]f=is,channel,Search$/);
    expect(await page.locator('[data-chip]').count()).toBe(1);
    expect(await text(page, '[data-chip="visit:channel"]')).toMatch(/^Channel\s+is\s+Search/);
    await settled(page);
    await expectDashboard(page, SEARCH);
    // The tabs to payments and retention and the range picker keep the filter.
    for (const selector of ['nav.tabs a[href*="/retention"]', '[data-range="90d"]'])
      expect(await page.getAttribute(selector, 'href'), selector).toContain('f=is,channel,Search');
    await page.reload();
    await settled(page);
    await expectDashboard(page, SEARCH);
    // Back: the unfiltered dashboard; forward: the filter again.
    await page.goBack();
    await page.waitForURL(/\?range=30d$/);
    await expectDashboard(page, undefined);
    expect(await page.locator('[data-chip]').count()).toBe(0);
    await page.goForward();
    await expectDashboard(page, SEARCH);
  }, 180_000);

  it('has no axe-core violation with a filter on, at desktop and phone width', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d&f=is,channel,Search`);
    await settled(page);
    expect(await axeViolations(page), 'desktop').toEqual([]);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'dashboard-filtered-desktop.png'), fullPage: true });
    const small = await phone.newPage();
    await small.goto(page.url());
    await settled(small);
    expect(await axeViolations(small), 'phone').toEqual([]);
    await small.screenshot({ path: join(SHOTS, 'dashboard-filtered-phone.png') });
    await small.close();
  }, 120_000);

  it('negates a chip, then removing it restores the unfiltered numbers', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d&f=is,channel,Search`);
    await settled(page);
    await page.click('[data-chip="visit:channel"] [data-negate]');
    await page.waitForURL(/[?&]f=is_not,channel,Search$/);
    await expectDashboard(page, NOT_SEARCH);
    expect(await page.locator('[data-panel=sources] table[data-dimension=channel] tr[data-key=Search]').count()).toBe(
      0,
    );
    await page.click('[data-chip="visit:channel"] [data-remove]');
    await page.waitForURL(/\?range=30d$/);
    await expectDashboard(page, undefined);
  }, 120_000);

  it('combines a goal row and a country row with AND; "Clear all" drops both', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    await page.click('[data-panel=goals] tr[data-key=Signup] a[data-filter-by]');
    await page.waitForURL(/f=is,goal,Signup$/);
    await settled(page);
    const country = await page
      .locator('[data-panel=locations] table[data-dimension=country] tbody tr')
      .first()
      .getAttribute('data-key');
    await page.click(`[data-panel=locations] tr[data-key="${country}"] a[data-filter-by]`);
    await page.waitForURL(new RegExp(`f=is,goal,Signup&f=is,country,${country}$`));
    const both = JSON.stringify([
      ['is', 'event:goal', ['Signup']],
      ['is', 'visit:country', [country]],
    ]);
    await expectDashboard(page, both);
    await page.click('[data-clear-filters]');
    await page.waitForURL(/\?range=30d$/);
    await expectDashboard(page, undefined);
  }, 120_000);

  it('carries the filter to the payments page, which lists the payments credited to matching visits', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d&f=is,channel,Search`);
    await settled(page);
    await page.click('nav.tabs a[href*="/payments"]');
    await page.waitForURL(/\/payments\?range=30d&f=is,channel,Search$/);
    await settled(page);
    const filtered = await api<Payments>('/payments?range=30d&limit=20', SEARCH);
    const all = await api<Payments>('/payments?range=30d&limit=20');
    expect(filtered.total).toBeLessThan(all.total);
    await expect
      .poll(() => page.getAttribute('.toolbar [data-total]', 'data-total'), { timeout: POLL })
      .toBe(`${filtered.total}`);
    expect(await page.locator('[data-chip="visit:channel"]').count()).toBe(1);
  }, 120_000);

  it("filters the dashboard by a page of a visitor's timeline", async () => {
    const payments = await api<Payments>('/payments?range=30d&filter=attributed&limit=1');
    const visitor = payments.rows[0]!.visitor_id!;
    await page.goto(`${svc.url}${SITE_PATH}/visitors/${encodeURIComponent(visitor)}`);
    const link = page.locator('[data-step=page] a[data-filter-by]').first();
    const path = (await link.innerText()).trim();
    await link.click();
    await page.waitForURL((u) => u.pathname === SITE_PATH && u.searchParams.get('f') === `is,page,${path}`);
    await settled(page);
    await expectDashboard(page, JSON.stringify([['is', 'event:page', [path]]]));
  }, 120_000);
});
