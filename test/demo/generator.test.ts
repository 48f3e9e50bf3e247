import { describe, expect, it } from 'vitest';
import { generateDemo } from '../../local/demo/generator.js';
import { parseImportLine } from '../../lambdas/domain/import-line.js';

const NOW = Date.UTC(2026, 10, 21, 12);
const demo = generateDemo({ site: 'demo.test', days: 56, visitsPerDay: 80, now: NOW });

describe('demo generator', () => {
  it('is deterministic', () => {
    const again = generateDemo({ site: 'demo.test', days: 56, visitsPerDay: 80, now: NOW });
    expect(again.events).toEqual(demo.events);
    expect(again.webhooks).toEqual(demo.webhooks);
  });

  it('produces valid import lines in time order, none after now', () => {
    const parsed = demo.events.map((line, i) => parseImportLine(line, i + 1));
    const times = parsed.map((p) => p.request.now);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(Math.max(...times)).toBeLessThanOrEqual(NOW + 3_600_000);
    expect(new Set(parsed.map((p) => p.event.n))).toEqual(new Set(['pageview', 'goal']));
    expect(parsed.some((p) => p.event.g === 'Outbound Link: Click' && p.event.l)).toBe(true);
  });

  it('has weekly seasonality and growth', () => {
    const byWeekday = new Array(7).fill(0);
    for (const v of demo.visits) byWeekday[new Date(v.start).getUTCDay()]++;
    expect(byWeekday[0]).toBeLessThan(byWeekday[2] * 0.75);
    const half = demo.visits.filter((v) => v.start < NOW - 28 * 86_400_000).length;
    expect(demo.visits.length - half).toBeGreaterThan(half);
  });

  it('mixes channels, AI and Communities included, over many landing pages and countries', () => {
    const channels = new Set(demo.visits.map((v) => v.channel));
    for (const c of ['Direct', 'Search', 'AI', 'Communities', 'Social', 'Email', 'Paid', 'Referral'])
      expect(channels).toContain(c);
    const lines = demo.events.map((l) => JSON.parse(l) as { u: string; ip: string; r?: string | null });
    expect(new Set(lines.map((l) => new URL(l.u).pathname)).size).toBeGreaterThan(30);
    // Countries come from the addresses, through the same IP lookup as live events.
    expect(new Set(demo.visits.map((v) => v.country)).size).toBeGreaterThan(10);
    expect(new Set(lines.map((l) => l.ip)).size).toBeGreaterThan(300);
  });

  it('makes Stripe purchases: one-off and subscriptions in two currencies, renewals, refunds, failures, some without a visitor', () => {
    const types = new Set(demo.webhooks.map((w) => w.type));
    for (const t of [
      'checkout.session.completed',
      'invoice.paid',
      'customer.subscription.created',
      'charge.refunded',
      'payment_intent.payment_failed',
    ])
      expect(types).toContain(t);
    expect(demo.webhooks.some((w) => w.object.billing_reason === 'subscription_cycle')).toBe(true);
    expect(new Set(demo.webhooks.map((w) => w.object.currency).filter(Boolean))).toEqual(new Set(['usd', 'eur']));
    const sessions = demo.webhooks.filter((w) => w.type === 'checkout.session.completed');
    expect(sessions.some((w) => !(w.object.metadata as Record<string, string>).footfall_visitor_id)).toBe(true);
    expect(sessions.some((w) => (w.object.metadata as Record<string, string>).footfall_visitor_id)).toBe(true);
    const created = demo.webhooks.map((w) => w.created);
    expect([...created].sort((a, b) => a - b)).toEqual(created);
  });
});
