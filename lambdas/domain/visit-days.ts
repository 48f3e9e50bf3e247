import type { TrackedEvent } from './tracked-event.js';
import { buildVisits, visitEventOf, type VisitEvent } from './visit.js';
import { addDays, localDay } from './range.js';
import { contributionOf, type Contribution } from './payments/contribution.js';
import type { Payment } from './payments/payment.js';
import type { UsdRate } from './payments/money.js';
import { visitRow, type PaymentTableRow, type VisitRow } from './visit-table.js';

/**
 * The visit table's rows of some site-local days, from the archive's events
 * (`docs/data-model.md`, "Filtered reports": the writer), by the
 * sessionizer's own rules: one visitor's events grouped by `buildVisits`
 * (gaps of `VISIT_GAP_MS`, attributes of the visit's first event), each visit
 * counted on the site-local day it started, as the rollups count it.
 */

/**
 * Archive partitions (`dt`, UTC days) read around the site-local days
 * `from`..`to`: a day each side for the time zone (UTC−12 to UTC+14), one more
 * before for the previous day's tail (a visit that started before `from` and
 * runs on past midnight is recognised as that earlier visit, not counted again
 * as a new one) and one more after for a visit started on `to` that runs past
 * its midnight (its pages, duration and exit page).
 */
export function archiveSpan(from: string, to: string): { fromDt: string; toDt: string } {
  return { fromDt: addDays(from, -2), toDt: addDays(to, 2) };
}

/**
 * The rows of the visits that started on the site-local days `from`..`to`
 * (inclusive, `YYYY-MM-DD`), from every event of `archiveSpan(from, to)`.
 * A visit whose events chain back, less than 30 minutes apart, to before the
 * span's tail (over a day of unbroken activity) would be cut at the span's
 * start: the bound of the tail read.
 *
 * @param events the site's events of the span, in any order (duplicates by `event_id` kept once)
 * @param timezone the site's IANA time zone
 * @returns the rows, in no particular order (the table's writer sorts them)
 */
export function visitRowsOfDays(
  events: Iterable<TrackedEvent>,
  site: string,
  timezone: string,
  from: string,
  to: string,
): VisitRow[] {
  const byVisitor = new Map<string, VisitEvent[]>();
  for (const e of events) {
    const list = byVisitor.get(e.visitor_id);
    if (list) list.push(visitEventOf(e));
    else byVisitor.set(e.visitor_id, [visitEventOf(e)]);
  }
  const rows: VisitRow[] = [];
  for (const [visitor, list] of byVisitor)
    for (const visit of buildVisits(site, visitor, list)) {
      const day = localDay(visit.start, timezone);
      if (day >= from && day <= to) rows.push(visitRow(visit, timezone));
    }
  return rows;
}

/**
 * A stored payment as the payments table keeps it: its contribution
 * (`contributionOf`: net USD cents at `rate`, payer key, site-local day) and
 * its credited visit's id (`Touch.session_id`). Null while the payment has no
 * contribution (no time, amount, currency or rate yet).
 */
export function paymentTableRow(p: Payment, timezone: string, rate: UsdRate): PaymentTableRow | null {
  const c = contributionOf(p, timezone, rate);
  return c === null ? null : listedPaymentRow(c);
}

/**
 * A listed payment (PAYMENT_LIST's contribution) as the payments table keeps it: the same row
 * `paymentTableRow` makes of the stored payment, at the rate the list settled it at (the rate the
 * unfiltered revenue counts). Null for an item in the old form: attributed, without the credited
 * visit's id (`isListedWithoutVisitId`).
 */
export function listedPaymentRow(c: Contribution): PaymentTableRow | null {
  if (isListedWithoutVisitId(c)) return null;
  return {
    key: c.key,
    ts: c.ts,
    day: c.day,
    cents: c.cents,
    customer: c.customer,
    failed: c.failed,
    refunded: c.refunded,
    visit_id: c.touch_day === null ? null : (c.visit ?? null),
    visit_day: c.touch_day,
  };
}

/** A list item written before contributions carried the credited visit's id: attributed, `visit` absent. */
export const isListedWithoutVisitId = (c: Contribution) => c.touch_day !== null && c.visit === undefined;

/** Rows grouped by their site-local month (`YYYY-MM`). */
export function byMonth<T extends { day: string }>(rows: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const month = r.day.slice(0, 7);
    const list = out.get(month);
    if (list) list.push(r);
    else out.set(month, [r]);
  }
  return out;
}
