import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { Overview } from '../../app/src/api.js';
import {
  formatCount,
  formatDuration,
  formatPercent,
  formatRatio,
  formatUsd,
  formatUsdOrDash,
} from '../../app/src/format.js';

/** What the app's browser tests share: the two widths they look at, where screenshots go, axe-core. */

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
