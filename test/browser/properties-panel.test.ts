import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DEMO_SITE } from '../../local/demo/seed.js';
import { formatCount, formatUsd } from '../../app/src/format.js';
import type { Breakdown, Overview, Properties } from '../../app/src/api.js';
import {
  DESKTOP,
  PHONE,
  SHOTS,
  axeViolations,
  phoneContext,
  rowsOf,
  settled,
  shownRows,
  startDemoApp,
  stopDemoApp,
  text,
  type DemoApp,
} from './app-pages.js';

/**
 * The Properties panel in Chromium (`docs/app.md` "Properties", "What the deployment answers"): a dashboard load
 * that never shows the panel asks no properties report (its reports read the visit table); scrolled to, the panel
 * asks and shows the API's keys and rows. On a deployment without the filtered engine (an AWS stack
 * deployed with `-c filteredReports=false`), no row is a filter, the panel says what it needs instead of an error, an address
 * (or a shared link) that carries filters is said once and shows the unfiltered numbers, and no request fails.
 */

const SITE_PATH = `/sites/${DEMO_SITE}`;
const POLL = 15_000;
/** The requests that read the visit table for the panel: the keys (`properties`) and a key's values (`breakdown/prop:<key>`). */
const PROPERTY_REQUEST = /\/api\/v1\/sites\/[^/]+\/(properties\?|breakdown\/prop(:|%3A))/;

/** A new tab of `context` with every request path (and query) and every failed API answer listed. */
async function openTab(context: BrowserContext) {
  const tab = await context.newPage();
  const requested: string[] = [];
  const failed: string[] = [];
  tab.on('request', (r) => {
    const url = new URL(r.url());
    requested.push(url.pathname + url.search);
  });
  tab.on('response', (r) => {
    if (r.status() >= 400 && new URL(r.url()).pathname.startsWith('/api/')) failed.push(`${r.status()} ${r.url()}`);
  });
  return { tab, requested, failed };
}

/** GET from a service's report API with its demo key. */
async function apiOf<T>(app: DemoApp, path: string): Promise<T> {
  const res = await fetch(`${app.svc.url}/api/v1/sites/${DEMO_SITE}${path}`, {
    headers: { authorization: `Bearer ${app.key}` },
  });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

describe('the Properties panel, asked when it comes into view', () => {
  let app: DemoApp;
  let phone: BrowserContext;

  beforeAll(async () => {
    app = await startDemoApp({ name: 'props-lazy-browser', days: 14, visitsPerDay: 30 });
    // The operations run writes the visit table the properties reports read.
    await app.svc.scheduled();
    phone = await phoneContext(app);
  }, 420_000);
  afterAll(() => stopDemoApp(app), 180_000);

  it.each([
    ['desktop', () => app.desktop],
    ['phone', () => phone],
  ])(
    'a dashboard load on the %s that never shows the panel makes no properties request',
    async (_width, context) => {
      const { tab, requested, failed } = await openTab(context());
      await tab.goto(`${app.svc.url}${SITE_PATH}?range=30d`);
      await tab.waitForSelector('.chart[data-drawn]');
      await tab.waitForSelector('[data-panel=goals] tbody tr');
      await settled(tab);
      // The other panels were asked (so the count below is of a load that reached the panels).
      expect(requested.filter((r) => /\/breakdown\/channel\?/.test(r))).toHaveLength(1);
      expect(requested.filter((r) => PROPERTY_REQUEST.test(r))).toEqual([]);
      expect(await tab.locator('[data-panel=properties][aria-busy=true]').count()).toBe(0);
      expect(failed).toEqual([]);
      await tab.close();
    },
    120_000,
  );

  it("reached by scrolling, the panel asks once and shows the API's keys and the first key's values", async () => {
    const { tab, requested } = await openTab(app.desktop);
    await tab.goto(`${app.svc.url}${SITE_PATH}?range=30d`);
    await tab.waitForSelector('[data-panel=goals] tbody tr');
    await settled(tab);
    expect(requested.filter((r) => PROPERTY_REQUEST.test(r))).toEqual([]);
    await tab.locator('[data-panel=properties]').scrollIntoViewIfNeeded();
    const keys = (await apiOf<Properties>(app, '/properties?range=30d&limit=100')).rows.map((r) => r.key);
    expect([...keys].sort()).toEqual(['logged_in', 'plan']);
    await expect
      .poll(
        () =>
          tab
            .locator('[data-panel=properties] select[data-prop-picker] option')
            .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
        { timeout: POLL },
      )
      .toEqual(keys);
    const b = await apiOf<Breakdown>(app, `/breakdown/${encodeURIComponent(`prop:${keys[0]}`)}?range=30d&limit=10`);
    await expect
      .poll(() => shownRows(tab, `[data-panel=properties] table[data-dimension="prop:${keys[0]}"]`), { timeout: POLL })
      .toEqual(rowsOf(b));
    await settled(tab);
    // One keys request, one values request: scrolling on and back asks nothing again.
    await tab.evaluate(() => window.scrollTo(0, 0));
    await tab.locator('[data-panel=properties]').scrollIntoViewIfNeeded();
    await settled(tab);
    expect(requested.filter((r) => /\/properties\?/.test(r))).toHaveLength(1);
    expect(requested.filter((r) => PROPERTY_REQUEST.test(r))).toHaveLength(2);
    expect(await axeViolations(tab)).toEqual([]);
    await tab.close();
  }, 120_000);
});

describe('a deployment without filtered reports', () => {
  let app: DemoApp;
  let browser: Browser;
  let phone: BrowserContext;

  /** The visitors and revenue tiles show the API's unfiltered 30 days. */
  const expectUnfiltered = async (tab: Page) => {
    const o = await apiOf<Overview>(app, '/overview?range=30d');
    await expect
      .poll(() => text(tab, '[data-metric=visitors]'), { timeout: POLL })
      .toBe(formatCount(o.current.visitors));
    expect(await text(tab, '[data-metric=revenue_usd]')).toBe(formatUsd(o.current.revenue_usd));
  };

  beforeAll(async () => {
    app = await startDemoApp({ name: 'props-off-browser', days: 14, visitsPerDay: 30, filteredReports: false });
    ({ browser } = app);
    await app.svc.scheduled();
    phone = await phoneContext(app);
  }, 420_000);
  afterAll(() => stopDemoApp(app), 180_000);

  it('offers no filter, and the Properties panel says what it needs instead of an error; no request fails', async () => {
    for (const [width, context] of [
      ['desktop', app.desktop],
      ['phone', phone],
    ] as const) {
      const { tab, requested, failed } = await openTab(context);
      await tab.goto(`${app.svc.url}${SITE_PATH}?range=30d`);
      await tab.waitForSelector('[data-panel=goals] tbody tr');
      await tab.locator('[data-panel=properties]').scrollIntoViewIfNeeded();
      await settled(tab);
      await expectUnfiltered(tab);
      expect(await tab.locator('[data-panel] tbody tr').count(), width).toBeGreaterThan(10);
      // No row, goal or chip offers a filter: every click would be a 400.
      for (const selector of ['a[data-filter-by]', 'a.filter-link', '[data-add-filter]', '.error-box'])
        expect(await tab.locator(selector).count(), `${width} ${selector}`).toBe(0);
      const note = await text(tab, '[data-panel=properties] [data-properties-unanswered]');
      expect(note, width).toContain('-c filteredReports=false');
      expect(
        requested.filter((r) => PROPERTY_REQUEST.test(r)),
        width,
      ).toEqual([]);
      expect(failed, width).toEqual([]);
      expect(await axeViolations(tab), width).toEqual([]);
      expect(await tab.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        width === 'phone' ? PHONE.width : DESKTOP.width,
      );
      await tab
        .locator('[data-panel=properties]')
        .screenshot({ path: join(SHOTS, `properties-panel-unanswered-${width}.png`) });
      await tab.close();
    }
  }, 180_000);

  it("says once that an address's filters are left out, shows the unfiltered numbers, and links to the address without them", async () => {
    const { tab, failed } = await openTab(app.desktop);
    await tab.goto(`${app.svc.url}${SITE_PATH}?range=30d&f=is,channel,Search&f=is,device,Mobile`);
    await tab.waitForSelector('[data-panel=goals] tbody tr');
    await settled(tab);
    expect(await tab.locator('[data-filters-unanswered]').count()).toBe(1);
    const note = await text(tab, '[data-filters-unanswered]');
    expect(note).toContain('Channel is Search and Device is Mobile');
    expect(note).toContain('-c filteredReports=false');
    expect(await tab.locator('.error-box, [data-chip]').count()).toBe(0);
    await expectUnfiltered(tab);
    // The requests started beside the session check (app/src/start.ts) carry no filter this browser has not seen
    // the deployment answer (app/src/known-capabilities.ts): nothing is answered 400.
    expect(failed).toEqual([]);
    expect(await axeViolations(tab)).toEqual([]);
    await tab.evaluate(() => window.scrollTo(0, 0));
    await tab.screenshot({ path: join(SHOTS, 'filters-unanswered-desktop.png') });
    await tab.click('[data-filters-unanswered] a[data-clear-filters]');
    await tab.waitForURL(/\?range=30d$/);
    expect(await tab.locator('[data-filters-unanswered]').count()).toBe(0);
    // The payments and retention pages read the address the same way: the whole site's, said once.
    for (const [page, ready] of [
      ['payments', 'tr[data-payment]'],
      ['retention', '.site-title h1'],
    ]) {
      await tab.goto(`${app.svc.url}${SITE_PATH}/${page}?range=all&f=is,channel,Search`);
      await tab.waitForSelector(ready!);
      await settled(tab);
      expect(await tab.locator('[data-filters-unanswered]').count(), page).toBe(1);
      expect(await tab.locator('.error-box, [data-chip], [data-add-filter]').count(), page).toBe(0);
    }
    // A visitor's timeline lists its pages as text, not as links that would filter the dashboard.
    await tab.goto(`${app.svc.url}${SITE_PATH}/payments?range=all`);
    await tab.locator('a.visitor-link').first().click();
    await tab.waitForSelector('[data-step=page]');
    await settled(tab);
    expect(await tab.locator('[data-step=page] a').count()).toBe(0);
    // No request of theirs failed.
    expect(failed).toEqual([]);
    await tab.close();
  }, 120_000);

  it('a shared link whose address carries filters says so once, without the deployment hint, and shows the unfiltered numbers', async () => {
    const created = await app.desktop.request.post(`${app.svc.url}/api/app/sites/${DEMO_SITE}/shares`, {
      data: { name: 'Board' },
      headers: { origin: app.svc.url },
    });
    expect(created.status()).toBe(201);
    const link = ((await created.json()) as { url: string }).url;
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, colorScheme: 'light' });
    const { tab, requested, failed } = await openTab(context);
    await tab.goto(link.replace('#', '?range=30d&f=is,channel,Search#'));
    await tab.waitForSelector('[data-shared-view]');
    await tab.waitForSelector('[data-panel=goals] tbody tr');
    await tab.locator('[data-panel=properties]').scrollIntoViewIfNeeded();
    await settled(tab);
    expect(await tab.locator('[data-filters-unanswered]').count()).toBe(1);
    expect(await text(tab, '[data-filters-unanswered]')).toContain('Channel is Search');
    // A link's reader cannot redeploy the stack: no flag named to them.
    expect(await tab.locator('text=filteredReports').count()).toBe(0);
    expect(await tab.locator('.error-box, a[data-filter-by]').count()).toBe(0);
    await expectUnfiltered(tab);
    expect(requested.filter((r) => PROPERTY_REQUEST.test(r))).toEqual([]);
    // The session check of a reader with no session is the one refusal (a shared view starts no early report).
    expect(failed.filter((f) => !/^401 .*\/api\/app\/me$/.test(f))).toEqual([]);
    expect(await axeViolations(tab)).toEqual([]);
    await tab.evaluate(() => window.scrollTo(0, 0));
    await tab.screenshot({ path: join(SHOTS, 'shared-filters-unanswered-phone.png') });
    await context.close();
  }, 120_000);
});
