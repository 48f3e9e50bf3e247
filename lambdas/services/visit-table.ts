import { addDays, eachDay, localDay } from '../domain/range.js';
import { VISIT_GAP_MS } from '../domain/visit.js';
import { namespaceOf, type SiteConfig } from '../domain/site.js';
import type { TrackedEvent } from '../domain/tracked-event.js';
import type { UsdRate } from '../domain/payments/money.js';
import type { Payment } from '../domain/payments/payment.js';
import { archiveSpan, byMonth, paymentTableRow, visitRowsOfDays } from '../domain/visit-days.js';
import type { PaymentTableRow, VisitRow } from '../domain/visit-table.js';
import type { ArchiveChanges, ArchiveReader, VisitTableStore } from '../ports.js';
import { reclassify } from './rebuild.js';

/**
 * The writer of the visit and payments tables behind filtered reports
 * (`docs/data-model.md`, "Filtered reports: where the numbers come from"):
 * the site's events read back from the archive and sessionized by the
 * sessionizer's rules (`visitRowsOfDays`), with the channel rules of
 * `footfall rebuild` (`reclassify`), so that a filter matching every visit
 * gives the rollups' figures; and the site's stored payments with their
 * credited visit's id.
 */

/**
 * How long after a site-local day ends its visits can still change: a visit
 * open at midnight ends 30 minutes after its last event (`VISIT_GAP_MS`), and
 * the archive holds an event at most 25 minutes after it was put
 * (`docs/sql.md`, "Layout", the lag row). Closed days are written once into their month's
 * file; later days are the open days.
 */
export const CLOSE_DELAY_MS = VISIT_GAP_MS + 25 * 60_000;

export interface VisitTableDeps {
  archive: Pick<ArchiveReader, 'events' | 'firstDay'>;
  table: VisitTableStore;
  /** The site's stored payments (`PaymentRecordStore.listPayments`: one paged Query of its PAYMENT partition). */
  payments: { listPayments(site: string): Promise<Payment[]> };
  rates: () => Promise<UsdRate>;
  clock: () => number;
  /**
   * The archive's changed partitions: closed days already written whose archive days changed since
   * the last run (late events, an import) are written again. Without it a written day stays as written.
   */
  changes?: ArchiveChanges;
  /**
   * How long, ms, after its last look the writer lists the archive for changed days again (0, the default: every
   * run). In AWS a look lists every object of the site's archive, about 35 requests for a year of it, which at
   * every 15-minute run was the largest line of the writer's bill; late events in days already written are
   * imports and re-driven batches, which may then wait up to this long (`docs/cost.md`, "Filtered reports").
   */
  changesEveryMs?: number;
}

/** `changesEveryMs` of the deployed writer: one listing of a site's archive a day. */
export const CHANGES_EVERY_MS_IN_AWS = 86_400_000;

/** What a run wrote. */
export interface VisitTableOutcome {
  /** Site-local days written into month files. */
  days: number;
  /** Visit rows written into month files. */
  rows: number;
  /** Visit rows of the open days. */
  open: number;
  /** Months of the payments table written. */
  paymentMonths: number;
}

/** The last site-local day that can no longer grow at `now` (ms). */
export const lastClosedDay = (now: number, timezone: string) => addDays(localDay(now - CLOSE_DELAY_MS, timezone), -1);

async function rowsOfDays(deps: VisitTableDeps, site: SiteConfig, from: string, to: string): Promise<VisitRow[]> {
  const { fromDt, toDt } = archiveSpan(from, to);
  const events: TrackedEvent[] = [];
  for await (const page of await deps.archive.events(site.domain, fromDt, toDt))
    for (const e of page) events.push(reclassify(e));
  return visitRowsOfDays(events, namespaceOf(site), site.timezone, from, to);
}

/**
 * Rewrites the site's month files for the site-local days `from`..`to`: a
 * month covered whole is written from the archive alone; a month covered in
 * part keeps its other days' rows as written.
 * @returns the days and rows written
 * @throws Error with the archive's or the table's message (a month already rewritten stays so)
 */
export async function writeDays(
  deps: VisitTableDeps,
  site: SiteConfig,
  from: string,
  to: string,
): Promise<{ days: number; rows: number }> {
  let rows = 0;
  const days = eachDay(from, to);
  const months = byMonth(days.map((day) => ({ day })));
  for (const [month, inMonth] of months) {
    const first = inMonth[0]!.day;
    const last = inMonth.at(-1)!.day;
    const fresh = await rowsOfDays(deps, site, first, last);
    const whole = first === `${month}-01` && addDays(last, 1).slice(0, 7) !== month;
    const kept = whole
      ? []
      : (await deps.table.readMonth(site.domain, month)).filter((r) => r.day < first || r.day > last);
    await deps.table.writeMonth(site.domain, month, [...kept, ...fresh]);
    rows += fresh.length;
  }
  return { days: days.length, rows };
}

/**
 * Rewrites the payments table from the site's stored payments: one paged
 * Query of the PAYMENT partition (`docs/data-model.md`: a month's payments
 * cannot be read alone there, the partition is keyed by payment id), every
 * month holding a payment written, and a month written before that holds none
 * now written empty.
 * @returns the months written
 */
export async function writePaymentTable(deps: VisitTableDeps, site: SiteConfig): Promise<number> {
  const [payments, rate, written] = await Promise.all([
    deps.payments.listPayments(namespaceOf(site)),
    deps.rates(),
    deps.table.months(site.domain),
  ]);
  const rows = payments.flatMap((p) => paymentTableRow(p, site.timezone, rate) ?? []);
  const months = byMonth<PaymentTableRow>(rows);
  for (const month of written.payments) if (!months.has(month)) months.set(month, []);
  for (const [month, list] of months) await deps.table.writePayments(site.domain, month, list);
  return months.size;
}

/**
 * The scheduled run's work for a site: the closed days not yet written go
 * into their month files (from the archive's first day on the first run), the
 * open days (after the last closed one, today included) are sessionized again
 * into the open file, and the payments table is rewritten (`writePaymentTable`).
 * The last closed day written is recorded only once its month is, so a failed
 * run is done again whole by the next.
 * @throws Error with the archive's or the table's message
 */
export async function refreshVisitTable(deps: VisitTableDeps, site: SiteConfig): Promise<VisitTableOutcome> {
  const now = deps.clock();
  const closed = lastClosedDay(now, site.timezone);
  const through = await deps.table.writtenThrough(site.domain);
  const seen = deps.changes ? await deps.table.changesSeen(site.domain) : null;
  const look = deps.changes !== undefined && (seen === null || now - seen >= (deps.changesEveryMs ?? 0));
  const late = look ? await rewriteChangedDays(deps, site, through, seen) : { days: 0, rows: 0 };
  // The archive's first partition is a UTC day: the site-local day before it may hold its first visits.
  const first = through === null ? await deps.archive.firstDay(site.domain) : null;
  const from = through !== null ? addDays(through, 1) : first !== null ? addDays(first, -1) : null;
  let written = { days: 0, rows: 0 };
  if (from !== null && from <= closed) {
    written = await writeDays(deps, site, from, closed);
    await deps.table.setWrittenThrough(site.domain, closed);
  }
  const today = localDay(now, site.timezone);
  const open = await rowsOfDays(deps, site, addDays(closed, 1), today);
  await deps.table.writeOpen(site.domain, open);
  const paymentMonths = await writePaymentTable(deps, site);
  if (look) await deps.table.setChangesSeen(site.domain, now);
  return { days: written.days + late.days, rows: written.rows + late.rows, open: open.length, paymentMonths };
}

/**
 * The closed days (up to `through`, the last written) to write again for the archive's partitions
 * that changed since the writer last looked: each changed UTC day `dt` holds events of the site-local
 * days before, on and after it (time zones, and a visit running on past midnight), so those three.
 * @returns inclusive site-local day spans, sorted, merged where they touch
 */
export function changedSpans(dts: readonly string[], through: string): Array<[string, string]> {
  const spans: Array<[string, string]> = [];
  for (const dt of [...dts].sort()) {
    const from = addDays(dt, -1);
    const to = addDays(dt, 1) < through ? addDays(dt, 1) : through;
    if (from > to) continue;
    const last = spans.at(-1);
    if (last && addDays(last[1], 1) >= from) last[1] = to > last[1] ? to : last[1];
    else spans.push([from, to]);
  }
  return spans;
}

/**
 * Writes again the closed days whose archive changed since the last look at `seen` (ms; `changedSpans`); nothing
 * before the first look.
 */
async function rewriteChangedDays(
  deps: VisitTableDeps,
  site: SiteConfig,
  through: string | null,
  seen: number | null,
): Promise<{ days: number; rows: number }> {
  if (!deps.changes || seen === null || through === null) return { days: 0, rows: 0 };
  let [days, rows] = [0, 0];
  for (const [from, to] of changedSpans(await deps.changes.changedDays(site.domain, seen), through)) {
    const written = await writeDays(deps, site, from, to);
    days += written.days;
    rows += written.rows;
  }
  return { days, rows };
}

/**
 * Rewrites the closed days `from`..`to` that late events touched (an import,
 * a re-delivered batch, a rebuild), then refreshes the open days and payments
 * (`refreshVisitTable`). Days after the last closed day written are left to
 * the refresh (they are the open days, or not yet written at all).
 */
export async function rewriteVisitDays(
  deps: VisitTableDeps,
  site: SiteConfig,
  from: string,
  to: string,
): Promise<VisitTableOutcome> {
  const through = await deps.table.writtenThrough(site.domain);
  let written = { days: 0, rows: 0 };
  if (through !== null && from <= through) written = await writeDays(deps, site, from, to < through ? to : through);
  const refreshed = await refreshVisitTable(deps, site);
  return { ...refreshed, days: written.days + refreshed.days, rows: written.rows + refreshed.rows };
}

/**
 * Rewrites the whole table of a site from the archive (`footfall rebuild`):
 * every month from the archive's first day to the last closed day, a month
 * written before and holding no visit now written empty, then the open days
 * and payments.
 */
export async function rewriteVisitTable(deps: VisitTableDeps, site: SiteConfig): Promise<VisitTableOutcome> {
  const first = await deps.archive.firstDay(site.domain);
  const closed = lastClosedDay(deps.clock(), site.timezone);
  const { visits } = await deps.table.months(site.domain);
  let written = { days: 0, rows: 0 };
  const from = first === null ? null : addDays(first, -1);
  if (from !== null && from <= closed) {
    written = await writeDays(deps, site, `${from.slice(0, 7)}-01`, closed);
    await deps.table.setWrittenThrough(site.domain, closed);
  }
  for (const month of visits)
    if (from === null || month < from.slice(0, 7)) await deps.table.writeMonth(site.domain, month, []);
  const refreshed = await refreshVisitTable(deps, site);
  return { ...refreshed, days: written.days, rows: written.rows };
}
