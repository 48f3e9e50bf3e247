import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DEMO_SITE } from '../../local/demo/seed.js';
import { DynamoEmailReportStore } from '../../lambdas/adapters/dynamo/email-report-store.js';
import { unsubscribeToken } from '../../lambdas/domain/email-report/unsubscribe-token.js';
import { DESKTOP, PHONE, SHOTS, axeViolations, startDemoApp, stopDemoApp, type DemoApp } from './app-pages.js';

/**
 * Email reports in Chromium (docs/app.md "Email reports"): an owner adds a recipient in Site
 * settings and chooses the weekly summary only, and the stored list is what the card shows; the
 * unsubscribe link of a mail, opened with no session, changes nothing until its button is pressed,
 * then takes the address off the list; a forged link is refused. Screenshots at 1440×900 and
 * 390×844 into docs/app/ with FOOTFALL_APP_SCREENSHOTS=1.
 */

const ANA = 'ana@example.com';

describe('email reports in Chromium', () => {
  let app: DemoApp;
  let svc: DemoApp['svc'];
  let browser: Browser;
  let settings: Page;
  let store: DynamoEmailReportStore;

  const axe = axeViolations;
  const stored = async () => (await store.recipients(DEMO_SITE))?.recipients ?? [];

  beforeAll(async () => {
    app = await startDemoApp({ name: 'email-browser', days: 7, visitsPerDay: 20 });
    ({ svc, browser, page: settings } = app);
    store = new DynamoEmailReportStore(svc.dynamo);
  }, 420_000);
  afterAll(() => stopDemoApp(app), 180_000);

  it('an owner adds a recipient and keeps the weekly summary only: the stored list is what the card shows', async () => {
    await settings.goto(`${svc.url}/settings/sites/${DEMO_SITE}`);
    const card = settings.locator('[data-email-reports]');
    await card.waitFor();
    expect(await card.innerText()).toContain('reports@footfall.localhost');
    expect(await card.innerText()).toContain('No recipients yet.');
    await card.locator('input[name=recipients]').fill(ANA);
    await card.locator('button[type=submit]').click();
    const monthly = card.getByLabel(`Monthly report to ${ANA}`);
    await monthly.waitFor();
    await expect.poll(stored).toEqual([{ email: ANA, weekly: true, monthly: true }]);
    await monthly.uncheck();
    await card.getByRole('button', { name: 'Save choices' }).click();
    await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await expect.poll(stored).toEqual([{ email: ANA, weekly: true, monthly: false }]);
    // A reload shows what is stored, not what the form last held.
    await settings.reload();
    await card.getByLabel(`Weekly report to ${ANA}`).waitFor();
    expect(await card.getByLabel(`Weekly report to ${ANA}`).isChecked()).toBe(true);
    expect(await card.getByLabel(`Monthly report to ${ANA}`).isChecked()).toBe(false);
    // A malformed address is refused in the form, next to the field, and nothing is stored.
    await card.locator('input[name=recipients]').fill('not an address');
    await card.locator('button[type=submit]').click();
    await card.locator('#f-recipients-error, [role=alert]').first().waitFor();
    expect(await stored()).toHaveLength(1);
    expect(await axe(settings), 'site settings').toEqual([]);
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: join(SHOTS, 'settings-email-reports-desktop.png') });
    await settings.setViewportSize(PHONE);
    expect(await settings.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await card.screenshot({ path: join(SHOTS, 'settings-email-reports-phone.png') });
    await settings.setViewportSize(DESKTOP);
  }, 240_000);

  it("a mail's unsubscribe link, opened with no session, removes the address only when its button is pressed", async () => {
    const list = await store.recipients(DEMO_SITE);
    if (!list) throw new Error('the first test stores a recipient');
    const token = unsubscribeToken(list.key, DEMO_SITE, ANA);
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true, colorScheme: 'light' });
    const page = await context.newPage();
    await page.goto(`${svc.url}/unsubscribe/${token}`);
    const button = page.getByRole('button', { name: 'Unsubscribe' });
    await button.waitFor();
    expect(await page.locator('main, body').first().innerText()).toContain(`of ${DEMO_SITE}`);
    // Opening the link (as a mail scanner does) changes nothing.
    expect(await stored()).toHaveLength(1);
    expect(await axe(page), 'unsubscribe page').toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'unsubscribe-phone.png') });
    await button.click();
    const done = page.getByRole('status');
    await done.waitFor();
    expect(await done.innerText()).toContain(DEMO_SITE);
    await expect.poll(stored).toEqual([]);
    // A forged token (another address's id under the same signature) is refused and changes nothing.
    await store.setRecipients(DEMO_SITE, [{ email: ANA, weekly: true, monthly: true }], Date.now());
    const [site, , mac] = token.split('.');
    const forged = `${site}.${unsubscribeToken(list.key, DEMO_SITE, 'bo@example.com').split('.')[1]}.${mac}`;
    await page.goto(`${svc.url}/unsubscribe/${forged}`);
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await page.getByRole('alert').waitFor();
    expect(await stored()).toHaveLength(1);
    await context.close();
  }, 240_000);
});
