import { describe, expect, it } from 'vitest';
import { generateDemo, WEEKDAY_FACTOR } from '../../local/demo/generator.js';
import {
  BROWSER_SHARES,
  DEVICE_SHARES,
  MARKETS,
  NOT_IN_THE_DEMO,
  OS_SHARES,
  TABLET_BROWSER_SHARES,
  type Shares,
} from '../../local/demo/audience.js';
import { CountryDatabase } from '../../lambdas/adapters/country-database.js';
import { parseUserAgent } from '../../lambdas/domain/user-agent.js';
import { deviceFromWidth } from '../../lambdas/domain/device.js';
import { languageFromAcceptLanguage } from '../../lambdas/domain/language.js';
import { PACKAGED_COUNTRY_DATABASE } from '../../local/geo.js';

const NOW = Date.UTC(2026, 10, 21, 12);
const countries = CountryDatabase.open(PACKAGED_COUNTRY_DATABASE);
// 90 days at 150 visits a day: what `npm start` seeds.
const demo = generateDemo({ site: 'demo.test', days: 90, visitsPerDay: 150, now: NOW, countries });
const lines = demo.events.map(
  (l) =>
    JSON.parse(l) as {
      ua: string;
      ip: string;
      w: number;
      language: string;
      v?: string;
      n: string;
      g?: string;
      ts: string;
    },
);
/** The first event of each visit: what a dashboard counts per visit. */
const byStart = new Map<string, (typeof lines)[number]>();
for (const l of lines)
  if (l.n === 'pageview')
    byStart.set(
      `${Date.parse(l.ts)}|${l.v ?? ''}|${l.ip}`,
      byStart.get(`${Date.parse(l.ts)}|${l.v ?? ''}|${l.ip}`) ?? l,
    );
const firstEvents = demo.visits.map((v) => byStart.get(`${v.start}|${v.visitor ?? ''}|${v.ip}`)!);
const round = (table: Record<string, number>) =>
  Object.entries(table).map(([k, v]) => [k, Math.round(v * 10) / 10] as const);

const percent = (table: Shares): Record<string, number> => {
  const total = table.reduce((s, [, w]) => s + w, 0);
  return Object.fromEntries(table.map(([k, w]) => [k, (100 * w) / total]));
};
const observed = (keys: string[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (out[k] ?? 0) + 100 / keys.length;
  return out;
};
/** Expected marginal share of each browser and OS, from the tables (what parsing the events must give). */
function expectedMarginals(): { os: Record<string, number>; browser: Record<string, number> } {
  const os: Record<string, number> = {};
  const browser: Record<string, number> = {};
  for (const [device, dp] of Object.entries(percent(DEVICE_SHARES))) {
    for (const [o, op] of Object.entries(percent(OS_SHARES[device as keyof typeof OS_SHARES]))) {
      os[o] = (os[o] ?? 0) + (dp * op) / 100;
      const table =
        (device === 'Tablet' ? TABLET_BROWSER_SHARES[o as keyof typeof TABLET_BROWSER_SHARES] : undefined) ??
        BROWSER_SHARES[o as keyof typeof BROWSER_SHARES];
      for (const [b, bp] of Object.entries(percent(table))) browser[b] = (browser[b] ?? 0) + (dp * op * bp) / 10_000;
    }
  }
  return { os, browser };
}

describe('the demo audience: shares within tolerance of the cited tables', () => {
  it(`has enough visits to measure shares (${demo.visits.length})`, () => {
    expect(demo.visits.length).toBeGreaterThan(10_000);
    expect(firstEvents.every(Boolean)).toBe(true);
  });

  const agents = firstEvents.map((e) => parseUserAgent(e.ua));
  const { os, browser } = expectedMarginals();

  it.each(round(percent(DEVICE_SHARES)))(
    'device %s: %s% ± 2 pp (from the width the tracker sends)',
    (device, share) => {
      expect(Math.abs((observed(firstEvents.map((e) => deviceFromWidth(e.w)))[device] ?? 0) - share)).toBeLessThan(2);
    },
  );
  it.each(round(os))('OS %s: %s% ± 2 pp (parsed from the User-Agent)', (name, share) => {
    expect(Math.abs((observed(agents.map((a) => a.os ?? 'none'))[name] ?? 0) - share)).toBeLessThan(2);
  });
  it.each(round(browser))('browser %s: %s% ± 2 pp (parsed from the User-Agent)', (name, share) => {
    expect(Math.abs((observed(agents.map((a) => a.browser ?? 'none'))[name] ?? 0) - share)).toBeLessThan(2);
  });
  it.each(
    MARKETS.filter((m) => m.weight >= 3).map(
      (m) => [m.country, Math.round((1000 * m.weight) / MARKETS.reduce((s, x) => s + x.weight, 0)) / 10] as const,
    ),
  )("country %s: %s% ± 1.5 pp (looked up from the event's address)", (country, share) => {
    expect(
      Math.abs((observed(firstEvents.map((e) => countries.countryOf(e.ip) ?? 'none'))[country] ?? 0) - share),
    ).toBeLessThan(1.5);
  });

  it('shows no dead or exotic browser or system, and every User-Agent parses to a browser and an OS, none a bot', () => {
    for (const agent of new Set(agents)) {
      expect(agent.bot).toBe(false);
      expect(agent.browser).not.toBeNull();
      expect(agent.os).not.toBeNull();
      expect(NOT_IN_THE_DEMO.browsers).not.toContain(agent.browser);
      expect(NOT_IN_THE_DEMO.os).not.toContain(agent.os);
    }
    expect(new Set(agents.map((a) => a.browser))).toEqual(new Set(Object.keys(browser)));
  });

  it("gives every event an address the database places in the visitor's country, never a documentation or private range", () => {
    const docs = /^(192\.0\.2\.|198\.51\.100\.|203\.0\.113\.|10\.|127\.|192\.168\.|2001:db8:)/;
    demo.visits.forEach((v, i) => {
      expect(v.ip).not.toMatch(docs);
      expect(countries.countryOf(v.ip), v.ip).toBe(v.country);
      expect(firstEvents[i]?.ip).toBe(v.ip);
    });
    expect(lines.every((l) => !('country' in l))).toBe(true);
  });

  it('gives each country its languages: the local one mostly, English often', () => {
    const byCountry = new Map<string, string[]>();
    demo.visits.forEach((v, i) =>
      byCountry.set(v.country, [
        ...(byCountry.get(v.country) ?? []),
        languageFromAcceptLanguage(firstEvents[i]?.language) ?? 'none',
      ]),
    );
    const de = observed(byCountry.get('DE') ?? []);
    expect(de['de-DE']).toBeGreaterThan(50);
    expect(de['en-US']).toBeGreaterThan(20);
    expect(observed(byCountry.get('US') ?? [])['en-US']).toBeGreaterThan(85);
  });

  it('brings visitors back: about three visits in ten are returning, by the same visitor id', () => {
    const returning = demo.visits.filter((v) => v.returning);
    expect(returning.length / demo.visits.length).toBeGreaterThan(0.25);
    expect(returning.length / demo.visits.length).toBeLessThan(0.4);
    const ids = demo.visits.filter((v) => v.visitor).map((v) => v.visitor);
    expect(new Set(ids).size).toBeLessThan(ids.length * 0.8);
  });

  it('follows the working week and the local working day', () => {
    const byWeekday = new Array(7).fill(0) as number[];
    for (const v of demo.visits) byWeekday[v.localWeekday]!++;
    const weekday = (byWeekday[1]! + byWeekday[2]! + byWeekday[3]!) / 3;
    const weekend = (byWeekday[0]! + byWeekday[6]!) / 2;
    expect(weekend / weekday).toBeGreaterThan(0.35);
    expect(weekend / weekday).toBeLessThan(0.7);
    expect(WEEKDAY_FACTOR[0]).toBeLessThan(WEEKDAY_FACTOR[3]!);
    const workdays = demo.visits.filter((v) => v.localWeekday >= 1 && v.localWeekday <= 5);
    const office = workdays.filter((v) => v.localHour >= 9 && v.localHour < 18).length / workdays.length;
    const night = workdays.filter((v) => v.localHour < 6).length / workdays.length;
    expect(office).toBeGreaterThan(0.6);
    expect(night).toBeLessThan(0.06);
  });

  it('leads from visit to pricing, signup and payment in believable proportions, each step a subset of the one before', () => {
    const n = demo.visits.length;
    const pricing = demo.visits.filter((v) => v.pricing).length / n;
    const signup = demo.visits.filter((v) => v.signup).length / n;
    const paid = demo.visits.filter((v) => v.checkout).length / n;
    expect(pricing).toBeGreaterThan(0.2);
    expect(pricing).toBeLessThan(0.45);
    expect(signup).toBeGreaterThan(0.015);
    expect(signup).toBeLessThan(0.06);
    expect(paid).toBeGreaterThan(0.004);
    expect(paid).toBeLessThan(0.02);
    expect(demo.visits.filter((v) => v.signup && !v.pricing)).toEqual([]);
    // Signup and checkout goals are in the events, as the tracker would send them.
    expect(lines.filter((l) => l.g === 'Signup').length).toBe(demo.visits.filter((v) => v.signup).length);
    expect(lines.filter((l) => l.g === 'Checkout').length).toBe(demo.visits.filter((v) => v.checkout).length);
    // Most payments come on a later visit than the signup: trials.
    const later = demo.visits.filter((v) => v.checkout && !v.signup).length;
    expect(later).toBeGreaterThan(demo.visits.filter((v) => v.checkout && v.signup).length);
  });
});
