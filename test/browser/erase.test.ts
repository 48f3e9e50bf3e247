import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import { LocalEventStream } from '../../lambdas/adapters/local-stream.js';
import { LOCAL_SITE_CACHE_TTL_MS } from '../../local/consumers.js';
import { localPaths } from '../../local/service.js';
import { startTestService } from '../support/local.js';
import { AppClient, CHEAP_SCRYPT, addUser } from '../support/app-client.js';
import { trackedEvent } from '../support/events.js';
import { scanAll } from '../support/dynamo.js';
import { launchChromium } from './harness.js';

/** Site settings › Erase a person in Chromium (docs/security.md, "Erasing a person"), carried out by scheduled runs. */

const SITE = 'erase-browser.test';
const VISITOR = 'visitor-to-forget';
const OTHER = 'visitor-who-stays';
const OWNER = { email: 'olga@acme.test', password: 'a-password-123' };
/** How long the page may take to show what the server holds (it polls every 5 s while an erasure runs). */
const POLL = 20_000;

describe('erasing a person from the app', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    svc = await startTestService([{ domain: SITE, timezone: 'UTC' }], { app: true, sessionizeIntervalMs: 0 });
    await addUser(svc.dynamo, OWNER.email, 'acme', OWNER.password, CHEAP_SCRYPT, 'owner');
    const day = Date.now() - 86_400_000;
    const stream = await LocalEventStream.open(localPaths(svc.dataDir).stream);
    await stream.put(
      [VISITOR, OTHER].flatMap((visitor, v) =>
        [0, 1].map((i) =>
          trackedEvent({ site: SITE, hostname: SITE, visitor_id: visitor, ts: day + v * 60_000 + i * 1000, path: '/' }),
        ),
      ),
    );
    await stream.close();
    await svc.sessionize();
    await svc.archive();
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.cleanup();
  }, 60_000);

  it("from the visitor's page to the form, confirmed by the domain; an email is explained; progress to done", async () => {
    await page.goto(`${svc.url}/sign-in`);
    await page.fill('input[name=email]', OWNER.email);
    await page.fill('input[name=password]', OWNER.password);
    await page.press('input[name=password]', 'Enter');
    await page.waitForURL((url) => !url.pathname.startsWith('/sign-in'));

    await page.goto(`${svc.url}/sites/${SITE}/visitors/${VISITOR}`);
    await page.click('[data-erase-visitor]');
    await page.waitForURL(/\/settings\/sites\/erase-browser\.test\?erase_visitor=visitor-to-forget/);
    const form = page.locator('[data-erase-form]');
    await expect.poll(() => form.locator('input[name=id]').inputValue(), { timeout: POLL }).toBe(VISITOR);
    const submit = form.locator('button[type=submit]');
    expect(await submit.isDisabled()).toBe(true);

    // By email: refused with the way to the customer id, nothing queued.
    await form.locator('select[name=kind]').selectOption('email');
    await form.locator('input[name=id]').fill('jo@example.com');
    await form.locator('input[name=confirm]').fill(SITE);
    await submit.click();
    await expect.poll(() => form.textContent(), { timeout: POLL }).toMatch(/customer id/);
    expect(await page.locator('[data-erasure]').count()).toBe(0);

    await form.locator('select[name=kind]').selectOption('visitor');
    await form.locator('input[name=id]').fill(VISITOR);
    await form.locator('input[name=confirm]').fill(SITE);
    await submit.click();
    await page.locator('[data-erasure=pending]').waitFor({ timeout: POLL });
    expect(await page.locator('[data-erasures]').textContent()).not.toContain(VISITOR);

    // The scheduled function's runs: the archive's fence, the rebuild's fence and its drain are waits of the local twin.
    for (let run = 0; run < 10; run++) {
      const { erasures } = await svc.scheduled();
      if (erasures) break;
      await sleep(LOCAL_SITE_CACHE_TTL_MS + 1100);
    }
    const done = page.locator('[data-erasure=done]');
    await done.waitFor({ timeout: POLL });
    expect(await done.textContent()).toMatch(/1 visitor id.*2 archived events removed/);
    expect(await page.locator('[data-erasure=pending], [data-erasure=running]').count()).toBe(0);

    const items = JSON.stringify(await scanAll(svc.dynamo));
    expect(items).not.toContain(VISITOR);
    expect(items).toContain(OTHER);
    const client = new AppClient(svc.url);
    await client.signIn(OWNER.email, OWNER.password);
    const timeline = await client.call('GET', `/api/v1/sites/${SITE}/visitors/${VISITOR}`);
    expect(JSON.stringify(timeline.body)).not.toMatch(/"path"/);
  }, 120_000);
});
