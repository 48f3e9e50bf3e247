import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DEMO_SITE } from '../../local/demo/seed.js';
import { formatCount, formatUsd } from '../../app/src/format.js';
import type { Breakdown, Overview } from '../../app/src/api.js';
import {
  DESKTOP,
  PHONE,
  SHOTS,
  axeViolations,
  reachPropertiesPanel,
  settled,
  startDemoApp,
  stopDemoApp,
  text,
  type DemoApp,
} from './app-pages.js';

/**
 * Shared links in Chromium (docs/app.md "Shared links"): an owner creates a
 * link in Site settings; a fresh browser with no session opens it and sees
 * the dashboard with the report API's numbers and nothing of the account;
 * revoking it refuses the open view; a protected link asks for its password.
 * Screenshots at 1440×900 and 390×844 into docs/app/ with FOOTFALL_APP_SCREENSHOTS=1.
 */

const POLL = 15_000;
const SHARE_PASSWORD = 'a shared secret 42';

describe('shared links in Chromium', () => {
  let app: DemoApp;
  let svc: DemoApp['svc'];
  let browser: Browser;
  let settings: Page;
  let key = '';

  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${svc.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };
  const axe = axeViolations;
  /** Creates a link in Site settings as the owner; resolves with the link shown once. */
  const createLink = async (name: string, linkPassword = '') => {
    await settings.goto(`${svc.url}/settings/sites/${DEMO_SITE}`);
    await settled(settings);
    await settings.fill('input[name=share_name]', name);
    await settings.fill('input[name=share_password]', linkPassword);
    await settings.click('[data-share-form] button[type=submit]');
    await settings.waitForSelector('[data-share-url]');
    return (await settings.locator('[data-share-url]').innerText()).trim();
  };
  /** A fresh browser (no session, no storage) at `size` opening `url`. */
  const stranger = async (url: string, size = DESKTOP) => {
    const context = await browser.newContext({
      viewport: size,
      colorScheme: 'light',
      ...(size === PHONE ? { isMobile: true, hasTouch: true } : {}),
    });
    const page = await context.newPage();
    await page.goto(url);
    return { context, page };
  };

  beforeAll(async () => {
    app = await startDemoApp({ name: 'share-browser', days: 14, visitsPerDay: 40 });
    ({ svc, browser, key, page: settings } = app);
    settings.on('dialog', (d) => void d.accept());
  }, 420_000);
  afterAll(() => stopDemoApp(app), 180_000);

  it("opens a link in a fresh browser: the dashboard with the API's numbers and nothing of the account; revoking refuses it", async () => {
    const url = await createLink('Investors');
    expect(url).toMatch(new RegExp(`^${svc.url}/share/${DEMO_SITE}#auth=ffs_[A-Za-z0-9_-]{43}$`));
    await settings.waitForSelector('[data-shares] [data-share-id]');
    expect(await axe(settings), 'site settings').toEqual([]);
    await settings.screenshot({ path: join(SHOTS, 'settings-shares-desktop.png'), fullPage: true });

    const { context, page } = await stranger(url);
    await page.waitForSelector('[data-shared-view]');
    await settled(page);
    expect(await text(page, '[data-shared-view]')).toContain('Investors');
    // The token left the address bar (and never was in a request line).
    expect(page.url()).toBe(`${svc.url}/share/${DEMO_SITE}`);
    const o = await api<Overview>(`/api/v1/sites/${DEMO_SITE}/overview?range=30d`);
    await expect
      .poll(() => text(page, '[data-metric=visitors]'), { timeout: POLL })
      .toBe(formatCount(o.current.visitors));
    expect(await text(page, '[data-metric=revenue_usd]')).toBe(formatUsd(o.current.revenue_usd));
    const channels = await api<Breakdown>(`/api/v1/sites/${DEMO_SITE}/breakdown/channel?range=30d&limit=10`);
    for (const row of channels.rows.filter((r) => r.key !== null && !r.unattributed).slice(0, 3))
      await expect.poll(() => page.locator(`text=${row.label}`).count(), { timeout: POLL }).toBeGreaterThan(0);
    // Nothing of the account: no navigation, settings, payments or downloads.
    for (const selector of ['.topnav', '.tabs', 'a[href^="/settings"]', '[data-csv]', '.account'])
      expect(await page.locator(selector).count(), selector).toBe(0);
    // No link to the payments page (a row filtering by the page `/docs/payments` stays on the dashboard).
    const toPayments = await page.$$eval(
      'a[href]',
      (links) => links.filter((a) => new URL((a as HTMLAnchorElement).href).pathname.endsWith('/payments')).length,
    );
    expect(toPayments, 'links to the payments page').toBe(0);
    // A range switch keeps the link (the token stays with the tab, not in the address).
    await page.click('[data-range="7d"]');
    await page.waitForURL(/range=7d$/);
    const week = await api<Overview>(`/api/v1/sites/${DEMO_SITE}/overview?range=7d`);
    await expect
      .poll(() => text(page, '[data-metric=visitors]'), { timeout: POLL })
      .toBe(formatCount(week.current.visitors));
    await page.click('[data-range="30d"]');
    await settled(page);
    await reachPropertiesPanel(page);
    expect(await axe(page), 'shared desktop').toEqual([]);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'shared-desktop.png'), fullPage: true });
    const phone = await stranger(url, PHONE);
    await phone.page.waitForSelector('[data-shared-view]');
    await settled(phone.page);
    expect(await axe(phone.page), 'shared phone').toEqual([]);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await phone.page.screenshot({ path: join(SHOTS, 'shared-phone.png') });
    await phone.context.close();

    await settings.click('button[aria-label="Revoke Investors"]');
    await settings.waitForSelector('button[aria-label="Revoke Investors"]', { state: 'detached' });
    await page.reload();
    await page.waitForSelector('[data-share-refused]');
    expect(await text(page, '[data-share-refused]')).toContain('revoked');
    await context.close();
  }, 240_000);

  it('a protected link asks for its password, refuses a wrong one, and opens with the right one', async () => {
    const url = await createLink('Board', SHARE_PASSWORD);
    const { context, page } = await stranger(url, PHONE);
    await page.waitForSelector('[data-share-password]');
    expect(await page.locator('[data-metric]').count()).toBe(0);
    await page.fill('input[name=password]', 'not the password');
    await page.click('button[type=submit]');
    await page.waitForSelector('#f-password-error, [role=alert]');
    expect(await axe(page), 'password form').toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'shared-password-phone.png') });
    await page.fill('input[name=password]', SHARE_PASSWORD);
    await page.press('input[name=password]', 'Enter');
    await page.waitForSelector('[data-shared-view]');
    const o = await api<Overview>(`/api/v1/sites/${DEMO_SITE}/overview?range=30d`);
    await expect
      .poll(() => text(page, '[data-metric=visitors]'), { timeout: POLL })
      .toBe(formatCount(o.current.visitors));
    await context.close();
  }, 240_000);
});
