import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DEMO_SITE } from '../../local/demo/seed.js';
import { formatCount, formatPercent, formatUsd } from '../../app/src/format.js';
import type {
  Breakdown,
  Goals,
  Overview,
  Payments,
  Realtime,
  Retention,
  Timeline,
  Timeseries,
} from '../../app/src/api.js';
import {
  CARDS,
  PHONE,
  SHOTS,
  axeViolations,
  phoneContext,
  reachPropertiesPanel,
  rowsOf,
  settled,
  shownRows,
  startDemoApp,
  stopDemoApp,
  text,
  type DemoApp,
} from './app-pages.js';
import { realtimeResponse } from '../../lambdas/domain/reports/schemas.js';

/**
 * The app in Chromium against a `npm start`-style service (demo site, demo
 * user): every page a signed-in user reaches, every number on it compared
 * with the report API's answer for the same range, and screenshots of each
 * page at desktop (1440×900) and phone (390×844) width into docs/app/.
 * One service and one browser for the file.
 */

const SITE_PATH = `/sites/${DEMO_SITE}`;
/** How long a comparison may wait for the page to show what the API says (rendering is asynchronous). */
const POLL = 15_000;

/** Panel → its dimensions; `utm:` ones are chosen in the Campaigns tab's UTM menu. */
const PANELS: Record<string, string[]> = {
  sources: [
    'channel',
    'referrer',
    'utm:campaign',
    'utm:utm_source',
    'utm:utm_medium',
    'utm:utm_content',
    'utm:keyword',
  ],
  pages: ['page', 'landing_page', 'exit_page'],
  locations: ['country', 'language'],
  devices: ['device', 'browser', 'os'],
};

describe('the app in Chromium on the demo site', () => {
  let app: DemoApp;
  let svc: DemoApp['svc'];
  let browser: Browser;
  let phone: BrowserContext;
  let page: Page;
  let small: Page;
  let key = '';
  let password = '';

  /** GET from the report API with the demo key: the numbers the app must show. */
  const api = async <T>(path: string, bearer = key): Promise<T> => {
    const res = await fetch(`${svc.url}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };
  const axe = axeViolations;
  /** Opens a panel's tab (`utm:<dimension>`: the Campaigns tab, then the UTM menu) on `p` and waits until its rows are the API's for 30 days. */
  const openTab = async (p: Page, panel: string, tab: string) => {
    const [menu, dimension] = tab.includes(':') ? tab.split(':') : [null, tab];
    await p.click(`[data-panel=${panel}] [data-dimension=${menu ?? dimension}][role=tab]`);
    if (menu) await p.selectOption(`[data-panel=${panel}] select[data-tab-menu=${menu}]`, dimension!);
    const table = `[data-panel=${panel}] table.breakdown[data-dimension=${dimension}]`;
    await p.waitForSelector(table);
    await settled(p);
    const b = await api<Breakdown>(`/api/v1/sites/${DEMO_SITE}/breakdown/${dimension}?range=30d&limit=10`);
    await expect.poll(() => shownRows(p, table), { message: dimension, timeout: POLL }).toEqual(rowsOf(b));
    return b;
  };
  /** Screenshots the desktop page as it is, and the same URL on the phone; axe-core finds no violation on either. */
  const shoot = async (name: string) => {
    await settled(page);
    await reachPropertiesPanel(page);
    expect(await axe(page), `${name} desktop`).toEqual([]);
    // From the top, or the sticky header lands in the middle of a full-page capture.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await small.goto(page.url());
    await settled(small);
    expect(await axe(small), `${name} phone`).toEqual([]);
    // A phone's first screen: what a person sees before scrolling.
    await small.screenshot({ path: join(SHOTS, `${name}-phone.png`) });
  };

  beforeAll(async () => {
    // Signed in by the first test, through the form.
    app = await startDemoApp({ name: 'app-web-browser', days: 35, visitsPerDay: 100, signIn: false });
    ({ svc, browser, key, password, page } = app);
    page.on('dialog', (d) => void d.accept());
  }, 420_000);
  afterAll(() => stopDemoApp(app), 180_000);

  it('signs in with the demo user, and the phone shares the session', async () => {
    // The app's script comes compressed (Chromium asks for gzip over plain http, Brotli over HTTPS only).
    const [script] = await Promise.all([
      page.waitForResponse((r) => /\/assets\/.+\.js$/.test(r.url())),
      page.goto(`${svc.url}/`),
    ]);
    expect(['gzip', 'br']).toContain((await script.allHeaders())['content-encoding']);
    await page.waitForURL(/\/sign-in/);
    await page.screenshot({ path: join(SHOTS, 'sign-in-desktop.png') });
    await page.fill('input[name=email]', 'demo@footfall.dev');
    await page.fill('input[name=password]', 'not the password');
    await page.click('button[type=submit]');
    await page.waitForSelector('[role=alert]');
    expect(await axe(page), 'sign-in').toEqual([]);
    await page.fill('input[name=password]', password);
    await page.press('input[name=password]', 'Enter'); // the keyboard submits the form
    await page.waitForSelector(`[data-site="${DEMO_SITE}"]`);
    const signedOut = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
    const signInPage = await signedOut.newPage();
    await signInPage.goto(`${svc.url}/sign-in`);
    await signInPage.waitForSelector('input[name=email]');
    await signInPage.screenshot({ path: join(SHOTS, 'sign-in-phone.png') });
    await signedOut.close();
    phone = await phoneContext(app);
    small = await phone.newPage();
  }, 180_000);

  it("lists the site with the last 30 days' visitors and revenue", async () => {
    const o = await api<Overview>(`/api/v1/sites/${DEMO_SITE}/overview?range=30d`);
    await page.goto(`${svc.url}/`);
    await settled(page);
    const card = `[data-site="${DEMO_SITE}"]`;
    expect(await text(page, `${card} [data-metric=visitors]`)).toBe(formatCount(o.current.visitors));
    expect(await text(page, `${card} [data-metric=revenue_usd]`)).toBe(formatUsd(o.current.revenue_usd));
    await shoot('sites');
  }, 180_000);

  it("opens the site and shows the API's overview for every range, with a drawn chart", async () => {
    await page.goto(`${svc.url}/`);
    await page.click(`[data-site="${DEMO_SITE}"] a`);
    await page.waitForURL(new RegExp(`${SITE_PATH}\\?range=30d$`));
    for (const range of ['today', '7d', '90d', '12m', 'all', '30d']) {
      await page.click(`[data-range="${range}"]`);
      await page.waitForURL(new RegExp(`range=${range}$`));
      await settled(page);
      const o = await api<Overview>(`/api/v1/sites/${DEMO_SITE}/overview?range=${range}`);
      // Polled: the page may still be swapping the previous range's numbers for these.
      for (const [field, format] of CARDS)
        await expect
          .poll(() => text(page, `[data-metric=${field}]`), { message: `${range} ${field}`, timeout: POLL })
          .toBe(format(o.current[field]));
      // Drawn with the series' points, not only the empty frame made while they were on their way.
      expect(await page.locator('.chart[data-drawn=true] canvas').count(), range).toBeGreaterThan(0);
    }
    // The keyboard picks ranges too (d/w/t/n/y/a).
    await page.keyboard.press('w');
    await page.waitForURL(/range=7d$/);
    await page.keyboard.press('t');
    await page.waitForURL(/range=30d$/);
    await shoot('dashboard');
  }, 180_000);

  it('explains every tile with the figures it is computed from, on hover, keyboard focus and tap', async () => {
    const o = await api<Overview>(`/api/v1/sites/${DEMO_SITE}/overview?range=30d`);
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    const explain = (p: Page, key: string) => p.locator(`[data-explain=${key}]`);
    // Hover: revenue per visitor is matched revenue ÷ visitors, and both are on the explanation.
    await page.hover('[data-metric=revenue_per_visitor]');
    await expect.poll(() => explain(page, 'revenue_per_visitor').isVisible()).toBe(true);
    const rpv = await explain(page, 'revenue_per_visitor').innerText();
    expect(rpv).toContain(formatUsd(o.current.matched_revenue_usd));
    expect(rpv).toContain(formatCount(o.current.visitors));
    expect(rpv).toContain(formatUsd(o.current.revenue_usd));
    expect(o.current.revenue_per_visitor).toBeCloseTo(o.current.matched_revenue_usd / o.current.visitors, 5);
    await page.screenshot({ path: join(SHOTS, 'tile-explained-desktop.png') });
    await page.mouse.move(0, 0);
    await expect.poll(() => explain(page, 'revenue_per_visitor').isVisible()).toBe(false);
    // Keyboard: Tab from visit duration onto the revenue tile opens its explanation, with its link to the payments.
    await page.focus('.metric:nth-child(6) .metric-button');
    await page.keyboard.press('Tab');
    await expect.poll(() => explain(page, 'revenue_usd').isVisible()).toBe(true);
    const rev = await explain(page, 'revenue_usd').innerText();
    expect(rev).toContain(formatUsd(o.current.matched_revenue_usd));
    expect(rev).toContain(formatCount(o.current.matched_payments));
    expect(await explain(page, 'revenue_usd').locator('a[href*="/payments"]').count()).toBe(1);
    // Touch: a tap opens it on the phone, a second tap closes it.
    await small.goto(page.url());
    await settled(small);
    await small.tap('[data-metric=conversion]');
    await expect.poll(() => explain(small, 'conversion').isVisible()).toBe(true);
    const conv = await explain(small, 'conversion').innerText();
    expect(conv).toContain(formatCount(o.current.converted));
    expect(conv).toContain(formatCount(o.current.visitors));
    await small.locator('[data-explain=conversion]').scrollIntoViewIfNeeded();
    await small.screenshot({ path: join(SHOTS, 'tile-explained-phone.png') });
    await small.tap('[data-metric=conversion]');
    await expect.poll(() => explain(small, 'conversion').isVisible()).toBe(false);
    // Every previous value as the API has it: null is a dash, never 0 (Today's conversion before any payment).
    for (const range of ['30d', 'today']) {
      const r = await api<Overview>(`/api/v1/sites/${DEMO_SITE}/overview?range=${range}`);
      await page.goto(`${svc.url}${SITE_PATH}?range=${range}`);
      await settled(page);
      for (const [field, format] of CARDS)
        await expect
          .poll(() => page.locator(`[data-previous=${field}]`).textContent(), { message: `${range} ${field}` })
          .toBe(format(r.previous[field]));
      if (range === 'today' && r.previous.conversion === null)
        expect(await page.locator('[data-previous=conversion]').textContent()).toBe('—');
    }
  }, 180_000);

  it('says once that a site does not exist or a range is not valid, instead of once per panel', async () => {
    await page.goto(`${svc.url}/sites/nope.example`);
    await page.waitForSelector('[data-page-error="404"]');
    await settled(page);
    expect(await page.locator('[role=alert]').count()).toBe(1);
    expect(await page.locator('[data-panel]').count()).toBe(0);
    await page.goto(`${svc.url}${SITE_PATH}?from=2026-13-45&to=2026-13-50`);
    await page.waitForSelector('[data-page-error="400"]');
    await settled(page);
    expect(await page.locator('[role=alert]').count()).toBe(1);
    expect(await axe(page)).toEqual([]);
  }, 180_000);

  it('opens the realtime view with the pages and sources of the current visitors', async () => {
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes(`/api/v1/sites/${DEMO_SITE}/realtime`)),
      page.goto(`${svc.url}${SITE_PATH}?range=today`),
    ]);
    const rt = realtimeResponse.parse(await answer.json()) as Realtime;
    await settled(page);
    await page.click('[data-realtime]');
    await page.waitForSelector('[data-realtime-view]');
    // The view may already show a newer answer (it asks every 5 s); compare with the one it shows.
    const shown = await page.getAttribute('[data-realtime-view]', 'data-realtime-view');
    if (shown === String(rt.visitors))
      expect(
        await page
          .locator('[data-realtime-list=pages] tbody tr')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key'))),
      ).toEqual(rt.pages.map((x) => x.page));
    // It asks again within 10 s while the tab is visible.
    const again = await page.waitForResponse((r) => r.url().includes('/realtime'), { timeout: 10_000 });
    expect(again.status()).toBe(200);
    expect(await axe(page)).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'realtime-desktop.png') });
  }, 180_000);

  it('charts twelve months by month, switches the interval from the chart, and keeps it in the address', async () => {
    const series = (interval: string) => (r: { url(): string }) =>
      r.url().includes(`/api/v1/sites/${DEMO_SITE}/timeseries`) && r.url().includes(`interval=${interval}`);
    const [byMonth] = await Promise.all([
      page.waitForResponse(series('month')),
      page.goto(`${svc.url}${SITE_PATH}?range=12m`),
    ]);
    expect(((await byMonth.json()) as Timeseries).points.length).toBeLessThanOrEqual(13);
    await settled(page);
    expect(await page.locator('[data-interval-switch] [aria-current=true]').getAttribute('data-interval')).toBe(
      'month',
    );
    const [byDay] = await Promise.all([page.waitForResponse(series('day')), page.click('[data-interval=day]')]);
    await page.waitForURL(/range=12m&interval=day$/);
    const days = ((await byDay.json()) as Timeseries).points.length;
    expect(days).toBeGreaterThan(360);
    expect(days).toEqual(
      (await api<Timeseries>(`/api/v1/sites/${DEMO_SITE}/timeseries?range=12m&interval=day`)).points.length,
    );
    await settled(page);
    expect(await page.locator('[data-interval-switch] [aria-current=true]').getAttribute('data-interval')).toBe('day');
    // Reloading the address draws the same interval; a range from the picker starts at its own default.
    await Promise.all([page.waitForResponse(series('day')), page.reload()]);
    await Promise.all([page.waitForResponse(series('day')), page.click('[data-range="30d"]')]);
    await page.waitForURL(/range=30d$/);
    expect(await axe(page)).toEqual([]);
  }, 180_000);

  it('asks every panel again while Today is on screen', async () => {
    const channels = (r: { url(): string }) => r.url().includes(`/api/v1/sites/${DEMO_SITE}/breakdown/channel`);
    const goals = (r: { url(): string }) => r.url().includes(`/api/v1/sites/${DEMO_SITE}/goals`);
    await Promise.all([page.waitForResponse(channels), page.goto(`${svc.url}${SITE_PATH}?range=today`)]);
    await settled(page);
    // The Today refresh asks the totals, the chart and the panels again (every 10 s while visible).
    await Promise.all([
      page.waitForResponse(channels, { timeout: 15_000 }),
      page.waitForResponse(goals, { timeout: 15_000 }),
    ]);
  }, 60_000);

  it("opens every breakdown panel tab with the API's rows, and shows more", async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    for (const [panel, tabs] of Object.entries(PANELS)) for (const tab of tabs) await openTab(page, panel, tab);
    // No column heading is cut: each fits its cell, wrapping if it must.
    const cut = await page
      .locator('table.breakdown thead th')
      .evaluateAll((cells) => cells.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent?.trim()));
    expect(cut).toEqual([]);
    // Arrow keys move between a panel's tabs (WAI-ARIA tabs).
    await page.click('[data-panel=sources] [data-dimension=channel][role=tab]');
    await page.keyboard.press('ArrowRight');
    await expect
      .poll(() => page.getAttribute('[data-panel=sources] [data-dimension=referrer][role=tab]', 'aria-selected'), {
        timeout: POLL,
      })
      .toBe('true');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-dimension'))).toBe('referrer');
    const pages = await api<Breakdown>(`/api/v1/sites/${DEMO_SITE}/breakdown/page?range=30d&limit=60`);
    await page.click('[data-panel=pages] [data-dimension=page][role=tab]');
    await settled(page);
    await page.click('[data-panel=pages] button:has-text("Show more")');
    await page.waitForFunction(
      (n) => document.querySelectorAll('[data-panel=pages] tbody tr').length === n,
      pages.rows.length,
    );
    expect(pages.rows.length).toBeGreaterThan(10);
  }, 180_000);

  it('shows UTM sources, mediums and contents and exit pages as the API counts them, on a desktop and a phone', async () => {
    for (const [p, width] of [
      [page, 'desktop'],
      [small, 'phone'],
    ] as const) {
      await p.goto(`${svc.url}${SITE_PATH}?range=30d`);
      await settled(p);
      for (const tab of ['utm:utm_source', 'utm:utm_medium', 'utm:utm_content']) {
        const b = await openTab(p, 'sources', tab);
        // The demo tags its email and paid visits (local/demo/generator.ts): not only `(none)`.
        expect(b.rows.some((r) => r.key !== null)).toBe(true);
      }
      await p.locator('[data-panel=sources]').screenshot({ path: join(SHOTS, `panel-utm-content-${width}.png`) });
      const exits = await openTab(p, 'pages', 'exit_page');
      expect(exits.rows.length).toBeGreaterThan(1);
      await p.locator('[data-panel=pages]').screenshot({ path: join(SHOTS, `panel-exit-pages-${width}.png`) });
      expect(await axe(p), width).toEqual([]);
      // No heading or figure of any table is cut at this width, the goals' five columns included.
      const cut = await p
        .locator('table.breakdown thead th, table.breakdown td.num')
        .evaluateAll((cells) =>
          cells.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent?.trim()),
        );
      expect(cut, width).toEqual([]);
    }
    // Home and End reach the ends of the Pages tabs, the Exit pages tab last.
    await page.click('[data-panel=pages] [data-dimension=page][role=tab]');
    await page.keyboard.press('End');
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-dimension')), { timeout: POLL })
      .toBe('exit_page');
    await page.keyboard.press('Home');
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-dimension')), { timeout: POLL })
      .toBe('page');
  }, 180_000);

  it('shows the goals as the API counts them, opens the outbound links, and offers their CSV', async () => {
    const goalRows = (goal: string) =>
      page
        .locator(`[data-panel=goals] table[data-goal="${goal}"] tbody tr`)
        .evaluateAll((rows) =>
          rows.map((r) => [
            r.getAttribute('data-key'),
            ...['visitors', 'completions', 'conversion_rate', 'revenue_usd'].map((c) =>
              r.querySelector(`[data-col=${c}]`)?.textContent?.trim(),
            ),
          ]),
        );
    const expected = (g: Goals) =>
      g.rows.map((r) => [
        r.link ?? r.goal,
        formatCount(r.visitors),
        formatCount(r.completions),
        formatPercent(r.conversion_rate),
        formatUsd(r.revenue_usd),
      ]);
    const all = await api<Goals>(`/api/v1/sites/${DEMO_SITE}/goals?range=30d&limit=10`);
    expect(all.rows.map((r) => r.goal)).toEqual(expect.arrayContaining(['Signup', 'Outbound Link: Click']));
    await expect.poll(() => goalRows(''), { message: 'goals', timeout: POLL }).toEqual(expected(all));
    await page.click('[data-panel=goals] [data-open-goal="Outbound Link: Click"]');
    const links = await api<Goals>(
      `/api/v1/sites/${DEMO_SITE}/goals?range=30d&limit=10&goal=${encodeURIComponent('Outbound Link: Click')}`,
    );
    expect(links.rows.length).toBeGreaterThan(0);
    await expect
      .poll(() => goalRows('Outbound Link: Click'), { message: 'links', timeout: POLL })
      .toEqual(expected(links));
    // The CSV link downloads every row (the API's largest limit), with the session cookie, as the API's CSV.
    const allLinks = await api<Goals>(
      `/api/v1/sites/${DEMO_SITE}/goals?range=30d&limit=1000&goal=${encodeURIComponent('Outbound Link: Click')}`,
    );
    const href = await page.getAttribute('[data-panel=goals] [data-csv=goals]', 'href');
    const csv = await page.evaluate(async (url) => (await fetch(url!, { credentials: 'same-origin' })).text(), href);
    expect(
      csv
        .split('\r\n')
        .slice(1, -1)
        .map((line) => line.split(',')[1]),
    ).toEqual(allLinks.rows.map((r) => r.link));
    // From the top: a full-page shot of a scrolled page would draw the sticky top bar mid-page.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'goals-desktop.png'), fullPage: true });
    await page.click('[data-panel=goals] [data-action=all-goals]');
    await expect.poll(() => goalRows(''), { timeout: POLL }).toEqual(expected(all));
    // The realtime indicator shows the API's answer. The demo's current visitors follow the wall clock, so the
    // comparison is with the answer the page itself received (asking again could straddle a visitor's 5 minutes).
    // The page polls realtime every few seconds: every answer after the reload is read as it arrives (a poll
    // in flight during the reload has no body), and the indicator must show the newest one.
    const answers: Realtime[] = [];
    const onResponse = (r: import('playwright-core').Response) => {
      if (r.url().includes(`/api/v1/sites/${DEMO_SITE}/realtime`) && r.ok())
        void r
          .json()
          .then((body) => answers.push(realtimeResponse.parse(body) as Realtime))
          .catch(() => undefined);
    };
    await page.reload();
    page.on('response', onResponse);
    try {
      await expect
        .poll(
          async () =>
            answers.length > 0 &&
            (await page.getAttribute('[data-realtime]', 'data-realtime')) === String(answers.at(-1)!.visitors),
          { timeout: POLL },
        )
        .toBe(true);
    } finally {
      page.off('response', onResponse);
    }
    expect(await page.getAttribute('[data-panel=sources] [data-csv]', 'href')).toContain('format=csv');
  }, 180_000);

  it('pages through the payments and opens a visitor', async () => {
    await page.goto(`${svc.url}${SITE_PATH}/payments?range=all`);
    for (const offset of [0, 20]) {
      await settled(page);
      const p = await api<Payments>(`/api/v1/sites/${DEMO_SITE}/payments?range=all&limit=20&offset=${offset}`);
      expect(p.total).toBeGreaterThan(20);
      const ids = () =>
        page
          .locator('tr[data-payment]')
          .evaluateAll((rows) =>
            rows.map((r) => [
              r.getAttribute('data-payment'),
              r.querySelector('[data-col=net_usd]')?.textContent?.trim(),
            ]),
          );
      await expect
        .poll(ids, { message: `offset ${offset}`, timeout: POLL })
        .toEqual(p.rows.map((r) => [r.provider_payment_id, formatUsd(r.net_usd)]));
      if (offset === 0) {
        await shoot('payments');
        await page.click('a[rel=next]');
        await page.waitForURL(/offset=20/);
      }
    }
    // The CSV holds every payment of the range, every page of them, not the 20 on screen.
    const all = await api<Payments>(`/api/v1/sites/${DEMO_SITE}/payments?range=all&limit=1`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-csv=payments]')]);
    expect(download.suggestedFilename()).toMatch(new RegExp(`^${DEMO_SITE}-payments-all-.*\\.csv$`));
    const csv = await readFile((await download.path())!, 'utf8');
    const records = csv.split('\r\n').filter((line) => /^(stripe|lemonsqueezy|paddle|polar),/.test(line));
    expect(records.length).toBe(all.total);
    expect(csv.match(/^provider,/gm)).toHaveLength(1);
    const visitorLink = page.locator('a.visitor-link').first();
    const visitor = decodeURIComponent((await visitorLink.getAttribute('href'))!.split('/').pop()!);
    await visitorLink.click();
    await page.waitForSelector('[data-entry]');
    await settled(page);
    const t = await api<Timeline>(`/api/v1/sites/${DEMO_SITE}/visitors/${encodeURIComponent(visitor)}`);
    expect(await page.locator('[data-entry=visit]').count()).toBe(t.entries.filter((e) => e.type === 'visit').length);
    expect(await page.locator('[data-step=page]').count()).toBe(
      t.entries.flatMap((e) => (e.type === 'visit' ? e.steps.filter((s) => s.type === 'page') : [])).length,
    );
    await shoot('visitor');
  }, 180_000);

  it('shows retention as the API computes it', async () => {
    await page.goto(`${svc.url}${SITE_PATH}/retention?range=all`);
    await settled(page);
    const r = await api<Retention>(`/api/v1/sites/${DEMO_SITE}/retention?range=all`);
    expect(await text(page, '[data-key=__total] [data-col=customers]')).toBe(formatCount(r.total.customers));
    expect(await text(page, '[data-key=__total] [data-col=net_ltv_usd]')).toBe(formatUsd(r.total.net_ltv_usd));
    expect(await text(page, '[data-key=__total] [data-col=still_paying]')).toBe(formatCount(r.total.still_paying));
    if (r.day_one) expect(await page.locator('[data-day-one]').count()).toBe(1);
    await shoot('retention');
  }, 180_000);

  it('creates an API key that reads /api/v1, and revokes it: the next request gets 401', async () => {
    await page.goto(`${svc.url}/settings/keys`);
    await settled(page);
    await page.fill('input[name=name]', 'browser test');
    await page.click('button[type=submit]');
    const secret = (await page.locator('[data-secret]').innerText()).trim();
    expect(secret).toMatch(/^ff_/);
    expect((await api<{ sites: unknown[] }>('/api/v1/sites', secret)).sites).toHaveLength(1);
    await shoot('settings-keys');
    await page.click('button[aria-label="Revoke browser test"]');
    await page.waitForSelector('button[aria-label="Revoke browser test"]', { state: 'detached' });
    const res = await fetch(`${svc.url}/api/v1/sites`, { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(401);
  }, 180_000);

  it('adds a site and shows its snippet, then connects Stripe to it', async () => {
    await page.goto(`${svc.url}/settings/sites`);
    await settled(page);
    await page.fill('input[name=domain]', 'shop.example');
    // The timezone is a searchable text box that starts at the browser's zone.
    expect(await page.inputValue('input[name=timezone]')).toBe(
      await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone),
    );
    await page.fill('input[name=timezone]', 'America/New_York');
    await page.click('form button[type=submit]');
    await page.waitForURL(/\/settings\/sites\/shop\.example/);
    await settled(page);
    expect(await text(page, '[data-snippet]')).toBe(
      `<script defer src="${svc.url}/v.js" data-site="shop.example"></script>`,
    );
    const stripe = '[data-provider=stripe]';
    await page.click(`${stripe} button:has-text("Connect")`);
    await page.fill(`${stripe} input[name=webhook_secret]`, `whsec_${'a'.repeat(32)}`);
    await page.click(`${stripe} button[type=submit]`);
    await page.waitForSelector(`${stripe} .pill-ok`);
    expect(await text(page, `${stripe} [data-webhook-url]`)).toMatch(/\/api\/webhooks\/stripe\/shop\.example$/);
    await shoot('settings-site');
    await page.goto(`${svc.url}/settings/sites`);
    await shoot('settings-sites');
  }, 180_000);

  it('shows the account and users settings, and the dashboard in dark mode', async () => {
    for (const section of ['account', 'users']) {
      await page.goto(`${svc.url}/settings/${section}`);
      await shoot(`settings-${section}`);
    }
    // Dark mode: the same dashboard with prefers-color-scheme: dark.
    await page.emulateMedia({ colorScheme: 'dark' });
    await small.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await shoot('dashboard-dark');
  }, 180_000);
});
