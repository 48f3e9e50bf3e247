import type { EmailSummary, SummaryFigure } from './summary.js';
import type { DateRange } from '../range.js';

/** A rendered summary: subject, HTML and plain-text bodies. */
export interface RenderedSummary {
  subject: string;
  html: string;
  text: string;
}

/** Where a summary's links point: the site's dashboard and the recipient's unsubscribe page. */
export interface SummaryLinks {
  dashboard: string;
  unsubscribe: string;
}

const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const dayFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});
const monthFormat = new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });

const utc = (day: string) => new Date(`${day}T00:00:00Z`);

/** A period as the app writes dates ("16 Nov 2026 – 22 Nov 2026"; a month as "November 2026"). */
export function periodLabel(kind: EmailSummary['kind'], range: DateRange): string {
  if (kind === 'monthly') return monthFormat.format(utc(range.from));
  return `${dayFormat.format(utc(range.from))} – ${dayFormat.format(utc(range.to))}`;
}

/** A figure's value: USD with cents for revenue, whole numbers otherwise. */
const value = (n: number, usd: boolean) => (usd ? money.format(n) : whole.format(n));

/**
 * The change against the previous period as a reader expects it: `+12%`, `−5%`, `0%`; `new` when
 * the previous period had none (the API's null change), and `–` when neither period had any.
 */
export function changeLabel(f: SummaryFigure): string {
  if (f.change === null) return f.value === 0 ? '–' : 'new';
  const pct = Math.round(f.change * 100);
  return pct > 0 ? `+${pct}%` : pct < 0 ? `−${-pct}%` : '0%';
}

const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['"', '&quot;'],
  ["'", '&#39;'],
]);
/** Text as HTML character data or a quoted attribute value: labels come from visitors' URLs and referrers. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES.get(c) ?? c);

const TITLES = { weekly: 'Weekly', monthly: 'Monthly' } as const;

/**
 * The mail of a summary (`docs/app.md`, "Email reports"): the top stats with their change, then
 * each list's rows (visits or visitors, revenue, change of the count). Every label is escaped in
 * the HTML part; the text part holds the same figures in the same order.
 */
export function renderSummary(summary: EmailSummary, links: SummaryLinks): RenderedSummary {
  const period = periodLabel(summary.kind, summary.range);
  const before = periodLabel(summary.kind, summary.previous_range);
  const subject = `${TITLES[summary.kind]} report for ${summary.site}: ${period}`;

  const text: string[] = [
    `${TITLES[summary.kind]} report for ${summary.site}`,
    `${period} (change against ${before})`,
    '',
  ];
  for (const t of summary.totals)
    text.push(`${t.label}: ${value(t.value, t.key === 'revenue_usd')} (${changeLabel(t)})`);
  for (const list of summary.lists) {
    text.push('', `${list.title} (${list.counts}, revenue, change of ${list.counts.toLowerCase()})`);
    if (list.rows.length === 0) text.push('  none in this period');
    for (const r of list.rows)
      text.push(
        `  ${r.label}: ${value(r.count.value, false)}, ${value(r.revenue_usd.value, true)} (${changeLabel(r.count)})`,
      );
  }
  text.push('', `Dashboard: ${links.dashboard}`, `Unsubscribe: ${links.unsubscribe}`, '');

  const cell = 'padding:4px 8px;border-bottom:1px solid #e5e7eb;';
  const num = `${cell}text-align:right;font-variant-numeric:tabular-nums;`;
  const tiles = summary.totals
    .map(
      (t) =>
        `<td style="padding:8px 12px;"><div style="color:#6b7280;font-size:12px;">${escapeHtml(t.label)}</div>` +
        `<div style="font-size:20px;font-weight:600;">${escapeHtml(value(t.value, t.key === 'revenue_usd'))}</div>` +
        `<div style="font-size:12px;">${escapeHtml(changeLabel(t))}</div></td>`,
    )
    .join('');
  const tables = summary.lists
    .map((list) => {
      const rows =
        list.rows.length === 0
          ? `<tr><td colspan="4" style="${cell}color:#6b7280;">None in this period</td></tr>`
          : list.rows
              .map(
                (r) =>
                  `<tr><td style="${cell}">${escapeHtml(r.label)}</td><td style="${num}">${escapeHtml(value(r.count.value, false))}</td>` +
                  `<td style="${num}">${escapeHtml(value(r.revenue_usd.value, true))}</td><td style="${num}">${escapeHtml(changeLabel(r.count))}</td></tr>`,
              )
              .join('');
      return (
        `<h2 style="font-size:16px;margin:24px 0 8px;">${escapeHtml(list.title)}</h2>` +
        `<table style="border-collapse:collapse;width:100%;font-size:14px;"><thead><tr>` +
        `<th style="${cell}text-align:left;">${list.title === 'Goals' ? 'Goal' : 'Name'}</th><th style="${num}">${escapeHtml(list.counts)}</th>` +
        `<th style="${num}">Revenue</th><th style="${num}">Change</th></tr></thead><tbody>${rows}</tbody></table>`
      );
    })
    .join('');
  const html =
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>` +
    `<body style="font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#111827;max-width:640px;margin:0 auto;padding:16px;">` +
    `<h1 style="font-size:20px;margin:0 0 4px;">${escapeHtml(`${TITLES[summary.kind]} report for ${summary.site}`)}</h1>` +
    `<p style="color:#6b7280;margin:0 0 16px;">${escapeHtml(period)}, change against ${escapeHtml(before)}</p>` +
    `<table style="border-collapse:collapse;"><tr>${tiles}</tr></table>${tables}` +
    `<p style="margin-top:24px;"><a href="${escapeHtml(links.dashboard)}">Open the dashboard</a></p>` +
    `<p style="color:#6b7280;font-size:12px;">You receive this because an owner of ${escapeHtml(summary.site)} on Footfall added your address. ` +
    `<a href="${escapeHtml(links.unsubscribe)}">Unsubscribe</a></p></body></html>`;
  return { subject, html, text: text.join('\n') };
}
