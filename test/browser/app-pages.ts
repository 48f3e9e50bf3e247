import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Breakdown, Overview } from '../../app/src/api.js';
import { orderRows } from '../../app/src/components/breakdown-rows.js';
import { startLocalService, type LocalService } from '../../local/service.js';
import { DEMO_ACCOUNT, DEMO_SITE, seedDemo } from '../../local/demo/seed.js';
import { ensureDemoUser } from '../../local/demo/user.js';
import { launchChromium } from './harness.js';
import {
  formatCount,
  formatDuration,
  formatPercent,
  formatRatio,
  formatUsd,
  formatUsdOrDash,
} from '../../app/src/format.js';

/**
 * What the app's browser tests share: the demo service and a signed-in
 * Chromium, the two widths they look at, where screenshots go, axe-core, and
 * waiting for a page to settle.
 */

/** The desktop and phone viewports every app page is looked at in (CSS px). */
export const DESKTOP = { width: 1440, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** docs/app/ with FOOTFALL_APP_SCREENSHOTS=1 (to update the docs), else a scratch directory, so a test run leaves the tree clean. */
export const SHOTS =
  process.env.FOOTFALL_APP_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/app/', import.meta.url))
    : join(tmpdir(), 'footfall-app-screenshots');

/** axe-core's browser build, evaluated in the page (through the DevTools protocol, so the app's CSP stays on). */
const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's WCAG 2 A/AA rules on the page as it is: the violations, as `rule (impact): selectors` lines (none expected). */
export async function axeViolations(p: Page): Promise<string[]> {
  await p.evaluate(AXE_SOURCE);
  const result = await p.evaluate(() =>
    (
      globalThis as unknown as {
        axe: {
          run(
            ctx: Document,
            opts: object,
          ): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
        };
      }
    ).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }),
  );
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Signs `page` in at `baseUrl` as the demo user (`local/demo/user.ts`) and waits for the site list. */
export async function signInDemo(page: Page, baseUrl: string, password: string, site: string): Promise<void> {
  await page.goto(`${baseUrl}/sign-in`);
  await page.fill('input[name=email]', 'demo@footfall.dev');
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  await page.waitForSelector(`[data-site="${site}"]`);
}

/** A local service (`npm start`-style, the app served) with the demo site and user, and Chromium at desktop width. */
export interface DemoApp {
  dataDir: string;
  svc: LocalService;
  /** The demo site's report API key. */
  key: string;
  /** The demo user's password. */
  password: string;
  browser: Browser;
  /** The desktop context (1440×900, light), signed in unless `signIn: false`. */
  desktop: BrowserContext;
  /** A page of `desktop`, at the site list when signed in. */
  page: Page;
}

/**
 * Starts the demo app for a test file: a fresh data directory, the local
 * service with no background sessionizer (numbers must not move between
 * reading the page and the API), the demo site seeded for `days` days of
 * `visitsPerDay` visits, the demo user, the screenshot folder, Chromium and a
 * desktop page signed in as the demo user (`signIn: false` leaves that to
 * the test). What it started is stopped again if a step fails.
 */
export async function startDemoApp(options: {
  /** Names the data directory (`<name>-…` under the temp directory). */
  name: string;
  days: number;
  visitsPerDay: number;
  signIn?: boolean;
  /** False: a deployment without the filtered engine (`LocalServiceOptions.filteredReports`). @default true */
  filteredReports?: boolean;
}): Promise<DemoApp> {
  const dataDir = await mkdtemp(join(tmpdir(), `${options.name}-`));
  let svc: LocalService | undefined;
  let browser: Browser | undefined;
  try {
    svc = await startLocalService({
      dataDir,
      port: 0,
      app: true,
      sessionizeIntervalMs: 0,
      filteredReports: options.filteredReports,
    });
    const { key } = await seedDemo(svc, { days: options.days, visitsPerDay: options.visitsPerDay });
    const demo = await ensureDemoUser(svc.dynamo, dataDir, DEMO_ACCOUNT, svc.url);
    if (!('password' in demo)) throw new Error('the fresh demo user has a password');
    await mkdir(SHOTS, { recursive: true });
    browser = await launchChromium();
    const desktop = await browser.newContext({ viewport: DESKTOP, colorScheme: 'light' });
    const page = await desktop.newPage();
    if (options.signIn !== false) await signInDemo(page, svc.url, demo.password, DEMO_SITE);
    return { dataDir, svc, key, password: demo.password, browser, desktop, page };
  } catch (e) {
    await stopDemoApp({ dataDir, svc, browser });
    throw e;
  }
}

/** Closes what `startDemoApp` started (any part of it) and removes its data directory. */
export async function stopDemoApp(
  app: Partial<Pick<DemoApp, 'dataDir' | 'svc' | 'browser'>> | undefined,
): Promise<void> {
  await app?.browser?.close();
  await app?.svc?.close();
  if (app?.dataDir) await rm(app.dataDir, { recursive: true, force: true });
}

/** A phone context (390×844, touch) sharing the desktop context's session. */
export async function phoneContext(app: Pick<DemoApp, 'browser' | 'desktop'>): Promise<BrowserContext> {
  return app.browser.newContext({
    viewport: PHONE,
    isMobile: true,
    hasTouch: true,
    colorScheme: 'light',
    storageState: await app.desktop.storageState(),
  });
}

/** Waits until nothing is loading: the network idle and every `aria-busy` cleared. */
export async function settled(p: Page): Promise<void> {
  await p.waitForLoadState('networkidle');
  await p.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
}

/**
 * Scrolls the Properties panel into view when the page has one, and waits for its rows: it asks for them only
 * then (`docs/app.md` "Properties"), and a full-page screenshot scrolls nothing.
 */
export async function reachPropertiesPanel(p: Page): Promise<void> {
  const panel = p.locator('[data-panel=properties]');
  if (!(await panel.count())) return;
  await panel.scrollIntoViewIfNeeded();
  await settled(p);
}

/** The rows of a panel's table (`selector`) as shown: each row's key (`data-key`), then its visits, payments, revenue and revenue per visit. */
export function shownRows(p: Page, selector: string): Promise<Array<Array<string | null | undefined>>> {
  return p
    .locator(`${selector} tbody tr`)
    .evaluateAll((trs) =>
      trs.map((r) => [
        r.getAttribute('data-key'),
        ...['visitors', 'payments', 'revenue_usd', 'revenue_per_visitor'].map((c) =>
          r.querySelector(`[data-col=${c}]`)?.textContent?.trim(),
        ),
      ]),
    );
}

/** What `shownRows` reads for a breakdown answer: its rows in the app's order (revenue first), keyed and formatted as the app shows them. */
export function rowsOf(b: Breakdown): string[][] {
  return orderRows(b.rows, 'revenue_usd').map((r) => [
    r.unattributed ? '__unattributed' : (r.key ?? '__none'),
    r.unattributed ? '—' : formatCount(r.visitors),
    formatCount(r.payments),
    formatUsd(r.revenue_usd),
    formatUsdOrDash(r.revenue_per_visitor),
  ]);
}

/** The trimmed text of the first element `selector` finds. */
export async function text(p: Page, selector: string): Promise<string> {
  return (await p.locator(selector).first().innerText()).trim();
}

/** The dashboard's cards: overview field → how the app formats it (app/src/pages/dashboard.tsx). */
export const CARDS: ReadonlyArray<[keyof Overview['current'], (n: number | null) => string]> = [
  ['visitors', (n) => formatCount(n ?? 0)],
  ['sessions', (n) => formatCount(n ?? 0)],
  ['pageviews', (n) => formatCount(n ?? 0)],
  ['views_per_visit', formatRatio],
  ['bounce_rate', formatPercent],
  ['visit_duration', formatDuration],
  ['revenue_usd', (n) => formatUsd(n ?? 0)],
  ['payments', (n) => formatCount(n ?? 0)],
  ['conversion', formatPercent],
  ['revenue_per_visitor', formatUsdOrDash],
];
