import { OUTBOUND_GOAL, VISIT_GAP_MS, type Visit } from '../visit.js';
import type { PaymentRow } from './payment-row.js';

const iso = (ms: number) => new Date(ms).toISOString();

export type Step =
  | { type: 'page'; ts: string; path: string; secs: number | null }
  | { type: 'goal'; ts: string; name: string }
  | { type: 'exit'; ts: string; page: string | null; link: string | null }
  | ({ type: 'payment' } & PaymentRow);

export interface VisitEntry {
  type: 'visit';
  start: string;
  end: string;
  channel: string;
  referrer_host: string | null;
  source: string | null;
  campaign: string | null;
  pageviews: number;
  steps: Step[];
}

export type TimelineEntry = VisitEntry | ({ type: 'payment' } & PaymentRow);

/** The visitor timeline (`docs/api.md` "Visitor timeline"). */
export interface Timeline {
  site: string;
  visitor_id: string;
  country: string | null;
  browser: string | null;
  device: string | null;
  entries: TimelineEntry[];
  payments: PaymentRow[];
}

/**
 * A visitor's timeline (`docs/api.md` "Visitor timeline"): visits oldest first with their
 * pages (`secs` to the next page view, null for the last), goals, payments
 * made during the visit (from its start to 30 minutes after its last event)
 * and, once the visit is over (30 minutes without an event, as of `now`), an
 * exit step with the last page and the last outbound link. Steps are in time
 * order and the exit is last: its time is the visit's last event, or a
 * payment made after that (at the provider's checkout), whichever is later. Payments outside
 * every visit are entries of their own. The header (country, browser,
 * device) is the latest visit's.
 *
 * @param now ms since epoch: decides which visits are over
 */
export function buildTimeline(
  site: string,
  visitorId: string,
  visits: readonly Visit[],
  payments: readonly PaymentRow[],
  now: number,
): Timeline {
  const sorted = [...visits].sort((a, b) => a.start - b.start);
  const paymentTimes = payments.map((p) => ({ row: p, ts: Date.parse(p.ts) }));
  const placed = new Set<PaymentRow>();
  const entries: TimelineEntry[] = sorted.map((visit) => {
    const pageviews = visit.events.filter((e) => e.type === 'pageview');
    const steps: Array<{ at: number; step: Step }> = [];
    // Events are in time order, so the next page view is the next in the list.
    pageviews.forEach((e, i) => {
      const next = pageviews[i + 1];
      steps.push({
        at: e.ts,
        step: { type: 'page', ts: iso(e.ts), path: e.path, secs: next ? Math.round((next.ts - e.ts) / 1000) : null },
      });
    });
    for (const e of visit.events)
      if (e.type === 'goal') steps.push({ at: e.ts, step: { type: 'goal', ts: iso(e.ts), name: e.goal ?? '' } });
    for (const p of paymentTimes) {
      if (!placed.has(p.row) && p.ts >= visit.start && p.ts < visit.end + VISIT_GAP_MS) {
        steps.push({ at: p.ts, step: { type: 'payment', ...p.row } });
        placed.add(p.row);
      }
    }
    // Time order; at equal times the order of the list above (pages, goals, payments) holds, as sort is stable.
    steps.sort((a, b) => a.at - b.at);
    if (now - visit.end >= VISIT_GAP_MS) {
      const lastPage = pageviews[pageviews.length - 1];
      const lastLink = [...visit.events].reverse().find((e) => e.type === 'goal' && e.goal === OUTBOUND_GOAL && e.link);
      // The exit is last: at the visit's last event, or at a payment made after it (at checkout) when there is one.
      const exitAt = Math.max(visit.end, steps[steps.length - 1]?.at ?? visit.end);
      steps.push({
        at: exitAt,
        step: { type: 'exit', ts: iso(exitAt), page: lastPage?.path ?? null, link: lastLink?.link ?? null },
      });
    }
    return {
      type: 'visit',
      start: iso(visit.start),
      end: iso(visit.end),
      channel: visit.attrs.channel,
      referrer_host: visit.attrs.referrer_host,
      source: visit.attrs.source,
      campaign: visit.attrs.utm_campaign,
      pageviews: pageviews.length,
      steps: steps.map((s) => s.step),
    };
  });
  const outside = paymentTimes.filter((p) => !placed.has(p.row));
  const all: Array<{ at: number; entry: TimelineEntry }> = [
    ...entries.map((entry, i) => ({ at: sorted[i]?.start ?? 0, entry })),
    ...outside.map((p) => ({ at: p.ts, entry: { type: 'payment' as const, ...p.row } })),
  ];
  all.sort((a, b) => a.at - b.at);
  const latest = sorted[sorted.length - 1];
  return {
    site,
    visitor_id: visitorId,
    country: latest?.attrs.country ?? null,
    browser: latest?.attrs.browser ?? null,
    device: latest?.attrs.device ?? null,
    entries: all.map((a) => a.entry),
    payments: [...payments].sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts)),
  };
}
