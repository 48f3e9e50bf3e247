import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestService } from '../support/local.js';
import { CHEAP_SCRYPT, addUser } from '../support/app-client.js';
import { scanAll } from '../support/dynamo.js';
import { ApiStandIn } from '../support/api-stand-in.js';
import { PADDLE, paddleApi } from '../support/paddle-stand-in.js';
import { launchChromium } from './harness.js';
import { DESKTOP, PHONE, SHOTS, axeViolations } from './app-pages.js';

/**
 * Site settings → Paddle → Import history in Chromium (`docs/payments.md`, "Importing a provider's
 * history"): a key pasted, Import pressed, the job run by the twin's imports function against the
 * Paddle stand-in, its counts shown as they grow and at the end; the key gone from the table.
 */

const SITE = 'import-browser.test';
const OWNER = { email: 'olga@acme.test', password: 'a-password-123' };
const KEY = 'pdl_sdbx_apikey_01h8c6tbrkpdd7vx61w7b1browser';
/** Entities the stand-in serves: completed transactions, refund adjustments, subscriptions. */
const SERVED = PADDLE.transactions!.filter((t) => t.status === 'completed').length + 3 + 1;
const WAIT = 60_000;

describe('importing a provider history from the app', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let api: ApiStandIn;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    api = new ApiStandIn(paddleApi);
    // Read by the twin's imports function when the service starts (local/imports.ts).
    process.env.FOOTFALL_PADDLE_API = (await api.start()).href;
    svc = await startTestService([{ domain: SITE, timezone: 'UTC' }], { app: true, sessionizeIntervalMs: 0 });
    await addUser(svc.dynamo, OWNER.email, 'acme', OWNER.password, CHEAP_SCRYPT, 'owner');
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: DESKTOP })).newPage();
  }, 120_000);
  afterAll(async () => {
    delete process.env.FOOTFALL_PADDLE_API;
    await browser?.close();
    await svc?.cleanup();
    await api?.close();
  }, 60_000);

  const openImport = async (p: Page) => {
    await p.goto(`${svc.url}/settings/sites/${SITE}`);
    await p.locator('[data-provider=paddle] [data-import-toggle]').click();
    return p.locator('[data-import-history=paddle]');
  };

  it('a bad key is refused in words; a key imports every list with its counts shown; the key is not kept', async () => {
    await page.goto(`${svc.url}/sign-in`);
    await page.fill('input[name=email]', OWNER.email);
    await page.fill('input[name=password]', OWNER.password);
    await page.press('input[name=password]', 'Enter');
    await page.waitForURL((url) => !url.pathname.startsWith('/sign-in'));

    const section = await openImport(page);
    const key = section.locator('input[type=password]');
    expect(await key.getAttribute('autocomplete')).toBe('off');
    await key.fill('sk_live_not_a_paddle_key');
    await section.locator('button[type=submit]').click();
    await expect
      .poll(() => section.locator('.field-error, [role=alert]').first().textContent(), { timeout: WAIT })
      .toMatch(/Paddle API key/);
    expect(api.requests).toEqual([]);

    await key.fill(KEY);
    await section.locator('button[type=submit]').click();
    await section.locator('[data-import-status=done]').waitFor({ timeout: WAIT });
    const text = (await section.locator('[data-import-status]').textContent()) ?? '';
    expect(text).toContain(`${SERVED} objects read`);
    expect(Number(await section.locator('[data-import-imported]').textContent())).toBeGreaterThan(0);
    await svc.importsIdle();
    const items = await scanAll(svc.dynamo);
    expect(JSON.stringify(items)).not.toContain(KEY);
    expect(items.filter((i) => i.type === 'PAYMENT').length).toBeGreaterThan(0);

    // Leaving and coming back shows the result; a second import reads again and counts the same.
    const again = await openImport(page);
    await again.locator('[data-import-status=done]').waitFor({ timeout: WAIT });
    expect(await axeViolations(page)).toEqual([]);
    await mkdir(SHOTS, { recursive: true });
    await page.evaluate(() => window.scrollTo(0, 0));
    await again.screenshot({ path: join(SHOTS, 'settings-import-history-desktop.png') });

    const phone = await (await browser.newContext({ viewport: PHONE })).newPage();
    await phone.context().addCookies(await page.context().cookies());
    const small = await openImport(phone);
    await small.locator('[data-import-status=done]').waitFor({ timeout: WAIT });
    expect(await axeViolations(phone)).toEqual([]);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await small.scrollIntoViewIfNeeded();
    await small.screenshot({ path: join(SHOTS, 'settings-import-history-phone.png') });
  }, 240_000);
});
