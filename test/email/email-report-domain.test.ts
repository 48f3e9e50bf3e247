import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { duePeriod, lastPeriod } from '../../lambdas/domain/email-report/period.js';
import { buildSummary, type SummaryInput } from '../../lambdas/domain/email-report/summary.js';
import { changeLabel, escapeHtml, renderSummary } from '../../lambdas/domain/email-report/render.js';
import { mimeMessage } from '../../lambdas/domain/email-report/mime.js';
import {
  addressId,
  tokenClaims,
  unsubscribeToken,
  verifyToken,
} from '../../lambdas/domain/email-report/unsubscribe-token.js';
import type { OverviewTotals } from '../../lambdas/domain/reports/overview.js';
import type { BreakdownRow } from '../../lambdas/domain/reports/breakdown.js';

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
console.log(`email report properties: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);

const totals = (o: Partial<OverviewTotals>): OverviewTotals => ({
  visitors: 0,
  sessions: 0,
  pageviews: 0,
  views_per_visit: null,
  bounce_rate: null,
  visit_duration: null,
  payments: 0,
  customers: 0,
  revenue_usd: 0,
  converted: 0,
  matched_payments: 0,
  matched_revenue_usd: 0,
  conversion: null,
  revenue_per_visitor: null,
  ...o,
});
const row = (label: string, visitors: number, revenue_usd = 0): BreakdownRow => ({
  key: label,
  label,
  unattributed: false,
  visitors,
  payments: 0,
  customers: 0,
  revenue_usd,
  revenue_per_visitor: null,
});

describe('when a summary is due (site-local Monday / 1st, from 08:00)', () => {
  it('weekly: Monday 08:00 in Berlin is due for the Monday-to-Sunday week before, not 07:59 nor Tuesday', () => {
    // 2026-11-23 is a Monday; Berlin is UTC+1 in November.
    expect(duePeriod('weekly', Date.parse('2026-11-23T06:59:00Z'), 'Europe/Berlin')).toBeNull();
    expect(duePeriod('weekly', Date.parse('2026-11-23T07:00:00Z'), 'Europe/Berlin')).toEqual({
      kind: 'weekly',
      key: '2026-11-16',
      range: { from: '2026-11-16', to: '2026-11-22', timezone: 'Europe/Berlin' },
      previous: { from: '2026-11-09', to: '2026-11-15', timezone: 'Europe/Berlin' },
    });
    expect(duePeriod('weekly', Date.parse('2026-11-23T22:59:00Z'), 'Europe/Berlin')?.key).toBe('2026-11-16');
    expect(duePeriod('weekly', Date.parse('2026-11-23T23:00:00Z'), 'Europe/Berlin')).toBeNull();
    // Still Sunday in Los Angeles at 09:00 UTC on Monday.
    expect(duePeriod('weekly', Date.parse('2026-11-23T09:00:00Z'), 'America/Los_Angeles')).toBeNull();
  });

  it('monthly: the 1st is due for the calendar month before, compared with the month before that', () => {
    expect(duePeriod('monthly', Date.parse('2026-03-01T09:00:00Z'), 'UTC')).toEqual({
      kind: 'monthly',
      key: '2026-02',
      range: { from: '2026-02-01', to: '2026-02-28', timezone: 'UTC' },
      previous: { from: '2026-01-01', to: '2026-01-31', timezone: 'UTC' },
    });
    expect(duePeriod('monthly', Date.parse('2026-03-02T09:00:00Z'), 'UTC')).toBeNull();
    expect(lastPeriod('monthly', Date.parse('2026-01-15T00:00:00Z'), 'UTC').range).toEqual({
      from: '2025-12-01',
      to: '2025-12-31',
      timezone: 'UTC',
    });
  });

  it('property: a due week is 7 days from a Monday, ending the day before today; due at most once a week', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2090, 0, 1) }), (t) => {
        const p = lastPeriod('weekly', t, 'Asia/Kathmandu');
        expect(new Date(`${p.range.from}T00:00:00Z`).getUTCDay()).toBe(1);
        expect(Date.parse(p.range.to) - Date.parse(p.range.from)).toBe(6 * 86_400_000);
        expect(Date.parse(p.range.from) - Date.parse(p.previous.from)).toBe(7 * 86_400_000);
        const due = duePeriod('weekly', t, 'Asia/Kathmandu');
        if (due) expect(due).toEqual(p);
      }),
      { seed, numRuns: 300 },
    );
  });
});

describe('summary and its template', () => {
  const input: SummaryInput = {
    site: 'shop.test',
    kind: 'weekly',
    range: { from: '2026-11-16', to: '2026-11-22', timezone: 'UTC' },
    previous_range: { from: '2026-11-09', to: '2026-11-15', timezone: 'UTC' },
    current: totals({ visitors: 1234, sessions: 1500, pageviews: 4000, revenue_usd: 321.5 }),
    previous: totals({ visitors: 1000, sessions: 0, pageviews: 5000, revenue_usd: 0 }),
    lists: {
      channel: {
        current: [row('Search', 30, 12.5), row('<script>alert(1)</script>', 3)],
        previous: [row('Search', 40)],
      },
      referrer: { current: [], previous: [] },
      page: { current: [row('/', 10)], previous: [row('/', 10)] },
      goal: { current: [], previous: [] },
    },
  };

  it('changes are the overview rule: relative, null when the previous period had 0 (shown as "new")', () => {
    const s = buildSummary(input);
    expect(s.totals).toEqual([
      { key: 'visitors', label: 'Unique visitors', value: 1234, previous: 1000, change: 0.234 },
      { key: 'sessions', label: 'Visits', value: 1500, previous: 0, change: null },
      { key: 'pageviews', label: 'Pageviews', value: 4000, previous: 5000, change: -0.2 },
      { key: 'revenue_usd', label: 'Revenue (USD)', value: 321.5, previous: 0, change: null },
    ]);
    const channels = s.lists[0]!;
    expect(channels.rows.map((r) => [r.label, r.count.value, r.count.previous, r.count.change])).toEqual([
      ['Search', 30, 40, -0.25],
      ['<script>alert(1)</script>', 3, 0, null],
    ]);
    expect(s.lists[2]!.rows[0]!.count.change).toBe(0);
    expect(changeLabel({ value: 3, previous: 0, change: null })).toBe('new');
    expect(changeLabel({ value: 0, previous: 0, change: null })).toBe('–');
    expect(changeLabel({ value: 30, previous: 40, change: -0.25 })).toBe('−25%');
  });

  it('renders every figure in both parts, escapes labels in the HTML, and links the unsubscribe page', () => {
    const links = { dashboard: 'https://stats.test/sites/shop.test', unsubscribe: 'https://stats.test/unsubscribe/t' };
    const { subject, html, text } = renderSummary(buildSummary(input), links);
    expect(subject).toBe('Weekly report for shop.test: 16 Nov 2026 – 22 Nov 2026');
    expect(text).toContain('Unique visitors: 1,234 (+23%)');
    expect(text).toContain('Visits: 1,500 (new)');
    expect(text).toContain('Pageviews: 4,000 (−20%)');
    expect(text).toContain('Revenue (USD): $321.50 (new)');
    expect(text).toContain('  Search: 30, $12.50 (−25%)');
    expect(text).toContain('Unsubscribe: https://stats.test/unsubscribe/t');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>');
    expect(html).toContain('<a href="https://stats.test/unsubscribe/t">Unsubscribe</a>');
    expect(escapeHtml(`"'&`)).toBe('&quot;&#39;&amp;');
  });
});

describe('MIME message', () => {
  it('is multipart/alternative with a text and an HTML part in base64, CRLF, with the given headers', () => {
    const raw = mimeMessage({
      from: 'reports@example.com',
      to: 'ana@example.com',
      subject: 'Weekly report for shop.test: 16 Nov 2026 – 22 Nov 2026',
      text: 'héllo',
      html: '<p>héllo</p>',
      headers: [['List-Unsubscribe', '<https://x/api/app/unsubscribe/t>']],
      date: Date.parse('2026-11-23T08:00:00Z'),
    });
    const [head, ...body] = raw.split('\r\n\r\n');
    expect(head).toContain('From: reports@example.com\r\nTo: ana@example.com\r\n');
    expect(head).toContain('Date: Mon, 23 Nov 2026 08:00:00 +0000');
    expect(head).toContain('List-Unsubscribe: <https://x/api/app/unsubscribe/t>');
    expect(head).toMatch(/Subject: =\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=/);
    const words = [...head!.matchAll(/=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=/g)].map((m) =>
      Buffer.from(m[1]!, 'base64').toString(),
    );
    expect(words.join('')).toBe('Weekly report for shop.test: 16 Nov 2026 – 22 Nov 2026');
    const boundary = /boundary="([^"]+)"/.exec(head!)![1]!;
    const parts = body.join('\r\n\r\n');
    expect(parts).toContain(`--${boundary}\r\nContent-Type: text/plain; charset=UTF-8`);
    expect(parts).toContain(Buffer.from('<p>héllo</p>').toString('base64'));
    expect(raw.endsWith(`--${boundary}--\r\n`)).toBe(true);
    expect(raw.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  });
});

describe('unsubscribe token', () => {
  const key = Buffer.alloc(32, 7);

  it('verifies under its key and names the site and the address id, never the address', () => {
    const token = unsubscribeToken(key, 'shop.test', 'Ana@Example.com');
    expect(verifyToken(key, token)).toBe(true);
    expect(tokenClaims(token)).toMatchObject({ site: 'shop.test', id: addressId('ana@example.com') });
    expect(token).not.toContain('ana');
  });

  it('fails for another key, another site, another address or any changed character', () => {
    const token = unsubscribeToken(key, 'shop.test', 'ana@example.com');
    expect(verifyToken(Buffer.alloc(32, 8), token)).toBe(false);
    const [site, id, mac] = token.split('.') as [string, string, string];
    expect(verifyToken(key, `${Buffer.from('rival.test').toString('base64url')}.${id}.${mac}`)).toBe(false);
    expect(verifyToken(key, `${site}.${addressId('bo@example.com')}.${mac}`)).toBe(false);
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom(...'abcdefABCDEF0123456789-_.'), (i, c) => {
        fc.pre(token[i] !== c);
        expect(verifyToken(key, token.slice(0, i) + c + token.slice(i + 1))).toBe(false);
      }),
      { seed, numRuns: 200 },
    );
    // The MAC's last base64url character carries 2 unused bits: no other spelling of it passes.
    for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')
      if (c !== token.at(-1)) expect(verifyToken(key, token.slice(0, -1) + c), c).toBe(false);
    expect(verifyToken(key, '')).toBe(false);
  });
});
