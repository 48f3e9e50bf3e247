import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { DEMO_SITE } from '../../local/demo/seed.js';
import { formatCount } from '../../app/src/format.js';
import type { Breakdown, Goals, Overview, Payments, Properties, Timeline, Timeseries } from '../../app/src/api.js';
import { chartLabel } from '../../app/src/components/chart-points.js';
import {
  CARDS,
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
  let app: DemoApp;
  let svc: DemoApp['svc'];
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

  /** A panel's table of `dimension` (`prop:<key>` for a property) shows the API's first 10 rows for `filters`, as the app orders them. */
  const expectPanel = async (p: Page, panel: string, dimension: string, filters: string | undefined) => {
    const b = await api<Breakdown>(`/breakdown/${encodeURIComponent(dimension)}?range=30d&limit=10`, filters);
    await expect
      .poll(() => shownRows(p, `[data-panel=${panel}] table[data-dimension="${dimension}"]`), {
        message: `${filters} ${dimension}`,
        timeout: POLL,
      })
      .toEqual(rowsOf(b));
    return b;
  };

  /** The Properties panel's key picker offers the API's keys for `filters`, most visitors first (the panel asks once in view). */
  const expectKeys = async (p: Page, filters: string | undefined) => {
    await p.locator('[data-panel=properties]').scrollIntoViewIfNeeded();
    const keys = (await api<Properties>('/properties?range=30d&limit=100', filters)).rows.map((r) => r.key);
    await expect
      .poll(
        () =>
          p
            .locator('[data-panel=properties] select[data-prop-picker] option')
            .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
        { message: `${filters} keys`, timeout: POLL },
      )
      .toEqual(keys);
    return keys;
  };

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
    for (const [panel, dimension] of FIRST_TABS) await expectPanel(p, panel, dimension, filters);
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
    app = await startDemoApp({ name: 'app-filters-browser', days: 35, visitsPerDay: 40 });
    ({ svc, key, page } = app);
    // The operations run writes the visit table the filtered reports read (docs/data-model.md).
    await svc.scheduled();
    phone = await phoneContext(app);
  }, 420_000);
  afterAll(() => stopDemoApp(app), 180_000);

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

  it('opens the outbound links under a channel filter: the links clicked in the matching visits, as the API gives them', async () => {
    const OUTBOUND = 'Outbound Link: Click';
    const links = (filters?: string) =>
      api<Goals>(`/goals?range=30d&limit=10&goal=${encodeURIComponent(OUTBOUND)}`, filters);
    const expected = (g: Goals) => g.rows.map((r) => [r.link, formatCount(r.visitors), formatCount(r.completions)]);
    const [unfiltered, filtered] = await Promise.all([links(), links(SEARCH)]);
    // The filter changes the rows (else the comparison below would prove nothing).
    expect(filtered.rows.length).toBeGreaterThan(0);
    expect(expected(filtered)).not.toEqual(expected(unfiltered));
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    await page.click('[data-panel=sources] table[data-dimension=channel] tr[data-key=Search] a[data-filter-by]');
    await page.waitForURL(/[?&]f=is,channel,Search$/);
    await settled(page);
    await page.click(`[data-panel=goals] [data-open-goal="${OUTBOUND}"]`);
    const shown = () =>
      page
        .locator(`[data-panel=goals] table[data-goal="${OUTBOUND}"] tbody tr`)
        .evaluateAll((trs) =>
          trs.map((r) => [
            r.getAttribute('data-key'),
            r.querySelector('[data-col=visitors]')?.textContent?.trim(),
            r.querySelector('[data-col=completions]')?.textContent?.trim(),
          ]),
        );
    await expect.poll(shown, { timeout: POLL }).toEqual(expected(filtered));
    expect(await page.locator('[data-panel=goals] .error-box, [data-panel=goals] [role=alert]').count()).toBe(0);
    await page.locator('[data-panel=goals]').screenshot({ path: join(SHOTS, 'goals-outbound-filtered-desktop.png') });
    // Removing the chip: the same detail, every visit's links.
    await page.click('[data-chip="visit:channel"] [data-remove]');
    await page.waitForURL(/\?range=30d$/);
    await expect.poll(shown, { timeout: POLL }).toEqual(expected(unfiltered));
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

  /** The filter dialog, open. */
  const dialog = (p: Page) => p.locator('dialog[data-filter-dialog][open]');
  /** The values the dialog suggests for its dimension, once loaded. */
  const suggested = async (p: Page) => {
    await expect
      .poll(() => p.getAttribute('#filter-suggestions', 'data-suggestions'), { timeout: POLL })
      .not.toBe('loading');
    return p.locator('#filter-suggestions option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  };
  const BLOG = JSON.stringify([['contains', 'event:page', ['/blog'], { case_sensitive: false }]]);

  it('adds "Page contains /blog" in the Filter dialog, with the range\'s pages suggested, and every figure follows', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    await page.click('[data-add-filter]');
    await dialog(page).waitFor();
    await page.selectOption('#filter-dimension', 'event:page');
    const pages = await api<Breakdown>('/breakdown/page?range=30d&limit=100');
    expect(await suggested(page)).toEqual(pages.rows.flatMap((r) => (r.key && !r.unattributed ? [r.key] : [])));
    await page.selectOption('#filter-op', 'contains');
    await page.fill('#filter-value', '/blog');
    await page.click('[data-apply-filter]');
    await page.waitForURL(/\?range=30d&f=contains,page,\/blog$/);
    expect(await dialog(page).count()).toBe(0);
    expect(await text(page, '[data-chip="event:page"]')).toMatch(/^Page\s+contains\s+\/blog/);
    const blog = await api<Overview>('/overview?range=30d', BLOG);
    const all = await api<Overview>('/overview?range=30d');
    expect(blog.current.sessions).toBeGreaterThan(0);
    expect(blog.current.sessions).toBeLessThan(all.current.sessions);
    await settled(page);
    await expectDashboard(page, BLOG);
    // The chip's toggle: does not contain.
    await page.click('[data-chip="event:page"] [data-negate]');
    await page.waitForURL(/f=contains_not,page,\/blog$/);
    await expectDashboard(page, BLOG.replace('"contains"', '"contains_not"'));
  }, 180_000);

  it('edits a chip in the dialog: another operator and two values, a visit matching either', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d&f=is,channel,Search&f=contains,page,/blog`);
    await settled(page);
    await page.click('[data-chip="event:page"] [data-edit]');
    await dialog(page).waitFor();
    expect(await page.inputValue('#filter-dimension')).toBe('event:page');
    expect(await page.inputValue('#filter-op')).toBe('contains');
    expect(
      await page.locator('.filter-values [data-value]').evaluateAll((e) => e.map((x) => x.getAttribute('data-value'))),
    ).toEqual(['/blog']);
    // Suggested under the other filter (Search), as the panels would list them.
    const pages = await api<Breakdown>('/breakdown/page?range=30d&limit=100', SEARCH);
    const offered = await suggested(page);
    expect(offered).toEqual(pages.rows.flatMap((r) => (r.key && r.key !== '/blog' && !r.unattributed ? [r.key] : [])));
    const [a, b] = offered;
    await page.selectOption('#filter-op', 'is');
    await page.click('.filter-values [data-value="/blog"] button');
    for (const value of [a!, b!]) {
      await page.fill('#filter-value', value);
      await page.press('#filter-value', 'Enter');
    }
    expect(await page.locator('.filter-values [data-value]').count()).toBe(2);
    await page.click('[data-apply-filter]');
    await page.waitForURL((u) => u.searchParams.getAll('f').join('&') === `is,channel,Search&is,page,${a}|${b}`);
    // The edited chip keeps its place.
    expect(await page.locator('[data-chip]').evaluateAll((cs) => cs.map((c) => c.getAttribute('data-chip')))).toEqual([
      'visit:channel',
      'event:page',
    ]);
    await settled(page);
    await expectDashboard(
      page,
      JSON.stringify([
        ['is', 'visit:channel', ['Search']],
        ['is', 'event:page', [a, b]],
      ]),
    );
  }, 180_000);

  it('works from the keyboard alone: Tab to Filter, choose, type, Enter; Tab stays in the dialog; Escape closes it', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    const focused = () => page.evaluate(() => document.activeElement?.matches('[data-add-filter]') ?? false);
    for (let i = 0; i < 80 && !(await focused()); i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe(true);
    await page.keyboard.press('Enter');
    await dialog(page).waitFor();
    // Focus moved into the dialog, on the dimension; Tab and Shift+Tab never leave it.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filter-dimension');
    const inside = () => page.evaluate(() => !!document.activeElement?.closest('dialog[open]'));
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      expect(await inside(), `Tab ${i + 1}`).toBe(true);
    }
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Shift+Tab');
      expect(await inside(), `Shift+Tab ${i + 1}`).toBe(true);
    }
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog(page).count()).toBe(0);
    expect(await focused()).toBe(true);
    expect(page.url()).toMatch(/\?range=30d$/);
    // Again, and this time a filter: the country by its code, typed, Enter to add it, Enter to apply.
    const countries = await api<Breakdown>('/breakdown/country?range=30d&limit=10');
    const country = countries.rows.find((r) => r.key && !r.unattributed)!.key!;
    await page.keyboard.press('Enter');
    await dialog(page).waitFor();
    // A closed menu takes typed letters: "Country" chooses it.
    await page.keyboard.type('Country');
    expect(await page.inputValue('#filter-dimension')).toBe('visit:country');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filter-op');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filter-value');
    await page.keyboard.type(country);
    await page.keyboard.press('Enter');
    expect(await page.locator('.filter-values [data-value]').count()).toBe(1);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`f=is,country,${country}$`));
    await settled(page);
    await expectDashboard(page, JSON.stringify([['is', 'visit:country', [country]]]));
  }, 180_000);

  it('filters by a custom property typed by key, its values suggested from breakdown/prop:<key>', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    await page.click('[data-add-filter]');
    await dialog(page).waitFor();
    await page.selectOption('#filter-dimension', 'props');
    // The key field suggests the range's keys (`properties`), most visitors first.
    const keys = (await api<Properties>('/properties?range=30d&limit=100')).rows.map((r) => r.key);
    expect(keys).toContain('plan');
    await expect
      .poll(
        () =>
          page.locator('#filter-prop-keys option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
        { timeout: POLL },
      )
      .toEqual(keys);
    await page.fill('#filter-prop-key', 'plan');
    await page.press('#filter-prop-key', 'Tab'); // the key is committed: its values are asked for
    const plans = await api<Breakdown>(`/breakdown/${encodeURIComponent('prop:plan')}?range=30d&limit=100`);
    expect(plans.rows.length).toBeGreaterThan(1);
    expect(await suggested(page)).toEqual(plans.rows.flatMap((r) => (r.key && !r.unattributed ? [r.key] : [])));
    await page.fill('#filter-value', 'pro');
    await page.click('[data-apply-filter]');
    await page.waitForURL(/\?range=30d&f=is,props:plan,pro$/);
    expect(await text(page, '[data-chip="event:props:plan"]')).toMatch(/^Property plan\s+is\s+pro/);
    await settled(page);
    await expectDashboard(page, JSON.stringify([['is', 'event:props:plan', ['pro']]]));
  }, 180_000);

  it("shows the Properties panel as the API does: the keys, a key's values, a value click filtering, on desktop and phone", async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    const keys = await expectKeys(page, undefined);
    // The demo sends logged_in on each landing page view and plan on signups and checkouts.
    expect([...keys].sort()).toEqual(['logged_in', 'plan']);
    await expectPanel(page, 'properties', `prop:${keys[0]}`, undefined);
    await page.selectOption('[data-panel=properties] select[data-prop-picker]', 'plan');
    const plans = await expectPanel(page, 'properties', 'prop:plan', undefined);
    // Revenue by plan: the checkouts' plans carry the demo's payments (else the revenue columns would prove nothing).
    expect(plans.rows.some((r) => r.key !== null && r.revenue_usd > 0)).toBe(true);
    expect(await axeViolations(page), 'desktop').toEqual([]);
    await page.locator('[data-panel=properties]').screenshot({ path: join(SHOTS, 'properties-panel-desktop.png') });
    await page.click('[data-panel=properties] tr[data-key=pro] a[data-filter-by]');
    await page.waitForURL(/\?range=30d&f=is,props:plan,pro$/);
    await settled(page);
    const PRO = JSON.stringify([['is', 'event:props:plan', ['pro']]]);
    await expectDashboard(page, PRO);
    await expectKeys(page, PRO);
    await page.selectOption('[data-panel=properties] select[data-prop-picker]', 'plan');
    await expectPanel(page, 'properties', 'prop:plan', PRO);
    const small = await phone.newPage();
    await small.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(small);
    await expectKeys(small, undefined);
    await small.selectOption('[data-panel=properties] select[data-prop-picker]', 'plan');
    await expectPanel(small, 'properties', 'prop:plan', undefined);
    expect(await axeViolations(small), 'phone').toEqual([]);
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await small.locator('[data-panel=properties]').screenshot({ path: join(SHOTS, 'properties-panel-phone.png') });
    await small.close();
  }, 180_000);

  it('says that current visitors are not filtered, and on Today that the filtered figures lag the live ones', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=today&f=is,channel,Search`);
    await settled(page);
    await expect.poll(() => text(page, '[data-realtime]'), { timeout: POLL }).toMatch(/\(all, unfiltered\)$/);
    expect(await page.getAttribute('[data-realtime]', 'title')).toMatch(/whatever the filters/);
    const note = await text(page, '.filter-notes [data-realtime-unfiltered]');
    expect(note).toMatch(/^Current visitors are not filtered, and today's filtered figures lag the live ones/);
    await page.click('[data-realtime]');
    expect(await text(page, '#realtime-view [data-realtime-unfiltered]')).toMatch(
      /^Current visitors are every visitor/,
    );
    await page.goto(`${svc.url}${SITE_PATH}?range=30d&f=is,channel,Search`);
    await settled(page);
    expect(await text(page, '.filter-notes [data-realtime-unfiltered]')).toBe('Current visitors are not filtered.');
    await page.goto(`${svc.url}${SITE_PATH}?range=30d`);
    await settled(page);
    await expect.poll(() => text(page, '[data-realtime]'), { timeout: POLL }).toMatch(/current visitors?$/);
    expect(await page.locator('[data-realtime-unfiltered]').count()).toBe(0);
  }, 120_000);

  it('has no axe-core violation with the dialog open, and fits a phone', async () => {
    await page.goto(`${svc.url}${SITE_PATH}?range=30d&f=is,channel,Search`);
    await settled(page);
    await page.click('[data-chip="visit:channel"] [data-edit]');
    await dialog(page).waitFor();
    await suggested(page);
    await page.fill('#filter-value', 'Direct');
    await page.press('#filter-value', 'Enter');
    expect(await axeViolations(page), 'desktop').toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'filter-dialog-desktop.png') });
    const small = await phone.newPage();
    await small.goto(`${svc.url}${SITE_PATH}?range=30d&f=is,channel,Search`);
    await settled(small);
    await small.click('[data-add-filter]');
    await dialog(small).waitFor();
    await suggested(small);
    expect(await axeViolations(small), 'phone').toEqual([]);
    const box = (await dialog(small).boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
    expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await small.screenshot({ path: join(SHOTS, 'filter-dialog-phone.png') });
    // A filter from the phone: the same dialog, tapped.
    await small.selectOption('#filter-dimension', 'event:page');
    await small.selectOption('#filter-op', 'contains');
    await small.fill('#filter-value', '/blog');
    await small.tap('[data-apply-filter]');
    await small.waitForURL(/f=is,channel,Search&f=contains,page,\/blog$/);
    await small.close();
  }, 180_000);

  it("filters the dashboard by a page of a visitor's timeline", async () => {
    // The demo's payments follow the clock, and the latest attributed one may name no visitor: take the latest
    // that names one whose timeline has a page view.
    const payments = await api<Payments>('/payments?range=30d&filter=attributed&limit=20');
    let visitor: string | undefined;
    for (const row of payments.rows) {
      if (!row.visitor_id) continue;
      const t = await api<Timeline>(`/visitors/${encodeURIComponent(row.visitor_id)}?`);
      if (t.entries.some((e) => e.type === 'visit' && e.steps.some((step) => step.type === 'page'))) {
        visitor = row.visitor_id;
        break;
      }
    }
    expect(visitor, 'a paying visitor with a page view in the timeline').toBeDefined();
    await page.goto(`${svc.url}${SITE_PATH}/visitors/${encodeURIComponent(visitor!)}`);
    const link = page.locator('[data-step=page] a[data-filter-by]').first();
    const path = (await link.innerText()).trim();
    await link.click();
    await page.waitForURL((u) => u.pathname === SITE_PATH && u.searchParams.get('f') === `is,page,${path}`);
    await settled(page);
    await expectDashboard(page, JSON.stringify([['is', 'event:page', [path]]]));
  }, 120_000);
});
