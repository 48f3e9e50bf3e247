import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { APP_DIST } from '../../app/build.js';
import { DEMO_SITE } from '../../local/demo/seed.js';
import { settled, startDemoApp, stopDemoApp, type DemoApp } from './app-pages.js';

/**
 * The app's pages in chunks of their own (`app/src/pages.tsx`, `docs/app.md` "What loads first"): the
 * dashboard's first load fetches no other page's code and asks each of its first requests once; a page
 * loaded on demand opens by its address and by a link, with a loading state that moves nothing, and says
 * so when its code does not load.
 */

const SITE_PATH = `/sites/${DEMO_SITE}`;
/** Every page chunk but the dashboard's (Rollup names a chunk after its module: `/assets/<module>-<hash>.js`). */
const OTHER_PAGES = [
  'sites',
  'sign-in',
  'invite',
  'shared',
  'unsubscribe',
  'payments',
  'visitor',
  'retention',
  'settings',
];
const chunkOf = (path: string) => /^\/assets\/(.+)-[A-Za-z0-9_-]{8,}\.js$/.exec(path)?.[1];

describe("the app's pages, loaded on demand", () => {
  let app: DemoApp;
  let built: string[];

  /** A new tab of the signed-in context, with every request it makes (paths and query strings) listed. */
  const openTab = async (): Promise<{ tab: Page; requested: string[] }> => {
    const tab = await app.desktop.newPage();
    const requested: string[] = [];
    tab.on('request', (r) => {
      const url = new URL(r.url());
      requested.push(url.pathname + url.search);
    });
    return { tab, requested };
  };
  const chunks = (requested: string[]) => requested.map(chunkOf).filter((c): c is string => c !== undefined);

  beforeAll(async () => {
    app = await startDemoApp({ name: 'ff-pages-split', days: 14, visitsPerDay: 20 });
    built = (await readdir(join(APP_DIST, 'assets'))).map((f) => chunkOf(`/assets/${f}`) ?? f);
  });
  afterAll(async () => {
    await stopDemoApp(app);
  });

  it('builds a chunk for each page', () => {
    for (const name of [...OTHER_PAGES, 'dashboard']) expect(built, name).toContain(name);
  });

  it("opens a dashboard without any other page's code, asking each first request once", async () => {
    const { tab, requested } = await openTab();
    await tab.goto(`${app.svc.url}${SITE_PATH}?range=30d`);
    await tab.waitForSelector('.chart[data-drawn]');
    await settled(tab);
    const loaded = chunks(requested);
    expect(loaded).toContain('dashboard');
    for (const name of OTHER_PAGES) expect(loaded, name).not.toContain(name);
    // The session check, the chart's series and the totals are started early (app/src/start.ts) and taken by the page.
    const count = (pattern: RegExp) => requested.filter((r) => pattern.test(r)).length;
    expect(count(/^\/api\/app\/me$/)).toBe(1);
    expect(count(/\/timeseries\?/)).toBe(1);
    expect(count(/\/overview\?/)).toBe(1);
    // Each file once too: the dashboard's chunk is loaded ahead (main.tsx), not again when the route renders.
    const files = requested.filter((r) => r.startsWith('/assets/'));
    expect(files).toEqual([...new Set(files)]);
    await tab.close();
  });

  it("starts a filtered address's first requests early only once this browser has seen the deployment answer filters", async () => {
    const tab = await app.desktop.newPage();
    const order: string[] = [];
    tab.on('request', (r) => {
      if (/\/overview\?.*filters=/.test(r.url())) order.push('filtered overview asked');
    });
    // The session check answers after 1 s, so a request started beside it is asked before its answer.
    await tab.route(/\/api\/app\/me$/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const answer = await route.fetch();
      order.push('me answered');
      await route.fulfill({ response: answer });
    });
    const address = `${app.svc.url}${SITE_PATH}?range=30d&f=is,channel,Search`;
    await tab.goto(`${app.svc.url}/settings/keys`);
    await tab.waitForSelector('[data-keys]');
    await tab.evaluate(() => localStorage.removeItem('footfall.filtered_reports'));
    order.length = 0;
    await tab.goto(address);
    await tab.waitForSelector('.chart[data-drawn]');
    expect(order).toEqual(['me answered', 'filtered overview asked']);
    // That session check said the deployment answers filters: the next open asks the filtered totals beside it.
    expect(await tab.evaluate(() => localStorage.getItem('footfall.filtered_reports'))).toBe('1');
    order.length = 0;
    await tab.goto(address);
    await tab.waitForSelector('.chart[data-drawn]');
    expect(order).toEqual(['filtered overview asked', 'me answered']);
    await tab.close();
  });

  it('opens the payments and settings pages by their address', async () => {
    const { tab, requested } = await openTab();
    await tab.goto(`${app.svc.url}${SITE_PATH}/payments?range=all`);
    await tab.waitForSelector('tr[data-payment]');
    expect(chunks(requested)).toContain('payments');
    expect(chunks(requested)).not.toContain('settings');
    await tab.goto(`${app.svc.url}/settings/keys`);
    await tab.waitForSelector('[data-keys]');
    expect(chunks(requested)).toContain('settings');
    await tab.close();
  });

  it("opens payments and settings from the dashboard's links, keeping the page on screen while their code loads", async () => {
    const { tab, requested } = await openTab();
    // Each page's code waits 1.5 s, so the moment between the click and the page can be looked at.
    await tab.route(/\/assets\/(payments|settings)-[^/]+\.js$/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.continue();
    });
    await tab.goto(`${app.svc.url}${SITE_PATH}?range=all`);
    await tab.waitForSelector('.chart[data-drawn]');
    await settled(tab);
    expect(chunks(requested)).not.toContain('payments');
    const heading = await tab.locator('.site-title h1').boundingBox();
    await tab.click('nav.tabs a:text-is("Payments")');
    // The dashboard stays where it was under the progress bar until the payments page's code is in.
    await tab.waitForSelector('[data-page-progress]');
    expect(await tab.locator('.chart[data-drawn]').count()).toBe(1);
    expect(await tab.locator('.site-title h1').boundingBox()).toEqual(heading);
    await tab.waitForSelector('tr[data-payment]');
    expect(await tab.locator('[data-page-progress]').count()).toBe(0);
    expect(chunks(requested)).toContain('payments');
    await tab.click('nav.topnav a:text-is("Settings")');
    await tab.waitForSelector('[data-keys]');
    expect(chunks(requested)).toContain('settings');
    await tab.close();
  });

  it("shows the app's loading state while a page opened by its address waits for its code", async () => {
    const { tab } = await openTab();
    await tab.route(/\/assets\/retention-[^/]+\.js$/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.continue();
    });
    await tab.goto(`${app.svc.url}${SITE_PATH}/retention?range=all`);
    await tab.waitForSelector('main [data-page-loading] .loading[role=status]');
    await tab.waitForSelector('.site-title h1');
    expect(await tab.locator('[data-page-loading]').count()).toBe(0);
    await tab.close();
  });

  it("says so, with a way to reload, when a page's code does not load", async () => {
    const { tab } = await openTab();
    await tab.route(/\/assets\/payments-[^/]+\.js$/, (route) => route.abort('internetdisconnected'));
    await tab.goto(`${app.svc.url}${SITE_PATH}?range=30d`);
    await tab.waitForSelector('.chart[data-drawn]');
    await tab.click('nav.tabs a:text-is("Payments")');
    const alert = tab.locator('[data-page-load-failed][role=alert]');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('could not be loaded');
    // The frame stays: the top bar's links still lead elsewhere.
    await tab.click('nav.topnav a:text-is("Sites")');
    await tab.waitForSelector(`[data-site="${DEMO_SITE}"]`);
    await tab.unroute(/\/assets\/payments-[^/]+\.js$/);
    await tab.goto(`${app.svc.url}${SITE_PATH}/payments?range=all`);
    await tab.waitForSelector('tr[data-payment]');
    await tab.close();
  });
});
