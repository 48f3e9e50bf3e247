import { createHash } from 'node:crypto';
import { addDays, daysBetween, eachDay, localDay } from '../domain/range.js';
import { VISIT_GAP_MS } from '../domain/visit.js';
import { namespaceOf, type SiteConfig } from '../domain/site.js';
import type { TrackedEvent } from '../domain/tracked-event.js';
import type { UsdRate } from '../domain/payments/money.js';
import type { Contribution } from '../domain/payments/contribution.js';
import { archiveSpan, byMonth, listedPaymentRow, paymentTableRow, visitRowsOfDays } from '../domain/visit-days.js';
import { TABLE_ROW_FORM, type PaymentTableRow, type VisitRow } from '../domain/visit-table.js';
import type {
  ArchiveChanges,
  ArchiveReader,
  PaymentTableSource,
  PaymentsWritten,
  RecentArchive,
  VisitTableStore,
} from '../ports.js';
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
  /** The archive through its query engine: the first day, and spans longer than `RECENT_MAX_DTS` (a first run, a rebuild, an import). */
  archive: Pick<ArchiveReader, 'events' | 'firstDay'>;
  /**
   * The archive's recent partitions read object by object (`RecentArchive`): the open days at every run, a
   * day closing, changed days of a short span. A run whose listing of the open days is the one their file
   * was written from skips them (`openSourceDigest`). Without it every span goes through `archive`.
   */
  recent?: RecentArchive;
  table: VisitTableStore;
  /**
   * The site's payments: a month's from the payment list, and the months' change counters
   * (`writePaymentTable`); the whole PAYMENT partition only for a month listed in the old form.
   */
  payments: PaymentTableSource;
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

/**
 * `changesEveryMs` of the deployed writer: one listing of a site's archive a day. A day less one run
 * (`OPERATIONS_EVERY_MS`): a site nobody looks at is refreshed once a day, at the same 15-minute run give or
 * take the schedule's seconds, and a look due a second later would wait a day more.
 */
export const CHANGES_EVERY_MS_IN_AWS = 86_400_000 - 15 * 60_000;

/**
 * The longest span of UTC partition days read through `recent` rather than the query engine: the open
 * days' (`archiveSpan` of one or two site-local days, five or six), a day closing (five), changed days of
 * up to three site-local days (seven). A closed day's partition holds about a hundred 15-minute objects,
 * mostly copied already while it was open.
 */
const RECENT_MAX_DTS = 7;

/** What a run wrote. */
export interface VisitTableOutcome {
  /** Site-local days written into month files. */
  days: number;
  /** Visit rows written into month files. */
  rows: number;
  /** Visit rows of the open days; null when they were not read again (their archive objects are those already written). */
  open: number | null;
  /** Months of the payments table written. */
  paymentMonths: number;
}

/** The last site-local day that can no longer grow at `now` (ms). */
export const lastClosedDay = (now: number, timezone: string) => addDays(localDay(now - CLOSE_DELAY_MS, timezone), -1);

/** The events of a span of UTC partition days: from `recent` up to `RECENT_MAX_DTS` days, else from the query engine. */
async function eventsOf(
  deps: VisitTableDeps,
  site: SiteConfig,
  fromDt: string,
  toDt: string,
): Promise<AsyncIterable<TrackedEvent[]>> {
  if (deps.recent && daysBetween(fromDt, toDt) <= RECENT_MAX_DTS)
    return (await deps.recent.snapshot(site.domain, fromDt, toDt)).events();
  return deps.archive.events(site.domain, fromDt, toDt);
}

/** The visit rows of the site-local days `from`..`to`, sessionized from `events` (their `archiveSpan`). */
async function rowsOf(
  events: AsyncIterable<TrackedEvent[]>,
  site: SiteConfig,
  from: string,
  to: string,
): Promise<VisitRow[]> {
  const all: TrackedEvent[] = [];
  for await (const page of events) for (const e of page) all.push(reclassify(e));
  return visitRowsOfDays(all, namespaceOf(site), site.timezone, from, to);
}

async function rowsOfDays(deps: VisitTableDeps, site: SiteConfig, from: string, to: string): Promise<VisitRow[]> {
  const { fromDt, toDt } = archiveSpan(from, to);
  return rowsOf(await eventsOf(deps, site, fromDt, toDt), site, from, to);
}

/**
 * What the open days' rows are a function of (`PaymentsWritten.openSource`): the days, the site's namespace
 * and time zone, and the digest of the archive objects they are read from (`ArchiveSnapshot.digest`).
 */
function openSourceDigest(site: SiteConfig, from: string, to: string, listing: string): string {
  return createHash('sha256')
    .update(JSON.stringify([namespaceOf(site), site.timezone, from, to, listing]))
    .digest('base64url');
}

/**
 * Records, before closed days from `from` are written, that the payments months from its month on are to be
 * written again (`PaymentsWritten.visitsFrom`): their payments carry those days' visit rows, and a run that
 * fails after the visits are written leaves the mark for the next.
 */
async function markVisitsWritten(deps: VisitTableDeps, site: SiteConfig, from: string): Promise<void> {
  const state = await deps.table.paymentsWritten(site.domain);
  if (state?.visitsFrom !== undefined && state.visitsFrom <= from) return;
  const empty = {
    namespace: namespaceOf(site),
    counters: new Map<string, number>(),
    openDigest: '',
    rowForm: TABLE_ROW_FORM,
  };
  await deps.table.setPaymentsWritten(site.domain, { ...(state ?? empty), visitsFrom: from });
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
  await markVisitsWritten(deps, site, from);
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
 * The payments months a run writes (`docs/data-model.md`, "Filtered reports", *Payments*): a month whose
 * change counter moved since it was written (`seen`; a month never written has none there), a month written
 * before that has no counter now (written empty, recorded as 0), and, when the run wrote visits of the days
 * from `visitsFrom` on, every month with payments from that day's month on: a payment carries its credited
 * visit's row, its visit starts at or before it, and a renewal keeps an old visit's credit.
 * @param counters the month change counters now (`PaymentTableSource.monthCounters`)
 * @param files the months holding a payments file
 * @returns the months, sorted
 */
export function paymentMonthsToWrite(
  counters: ReadonlyMap<string, number>,
  seen: ReadonlyMap<string, number>,
  files: readonly string[],
  visitsFrom: string | null,
): string[] {
  const since = visitsFrom?.slice(0, 7) ?? null;
  const months = new Set([...counters.keys(), ...files, ...seen.keys()]);
  return [...months]
    .filter((m) => {
      const n = counters.get(m) ?? 0;
      if (seen.get(m) !== n) return true;
      return n > 0 && since !== null && m >= since;
    })
    .sort();
}

/**
 * Rewrites the payments months that need it (`paymentMonthsToWrite`), each from one paged Query of its
 * PAYMENT_LIST partition (`listedPaymentRow`); a month holding a list item in the old form is written from the
 * stored payments instead (`paymentRowsOfOldListForm`); a month written again only for its credited visits,
 * its counter unchanged, from its own file's rows (`VisitTableStore.readPayments`), reading no partition. The month counters are read before the lists, so a
 * change the read missed is followed by a bump the next run sees.
 * @param visits `from`: the first site-local day whose visits were written or changed since, null when none;
 *   `openDigest`: the open days' rows as written (`digestOfRows`), recorded with the counters; `state`: what
 *   the months were last written from (`VisitTableStore.paymentsWritten`)
 * @returns the months written
 */
export async function writePaymentTable(
  deps: VisitTableDeps,
  site: SiteConfig,
  visits: { from: string | null; openDigest: string; openSource?: string; state: PaymentsWritten | null },
): Promise<number> {
  const namespace = namespaceOf(site);
  const { state } = visits;
  const [counters, files] = await Promise.all([deps.payments.monthCounters(namespace), deps.table.months(site.domain)]);
  const seen = state?.namespace === namespace ? state.counters : new Map<string, number>();
  const months = paymentMonthsToWrite(counters, seen, files.payments, visits.from);
  const oldForm = paymentRowsOfOldListForm(deps, site);
  const listedRows = async (month: string) => {
    const listed = counters.has(month) ? newestOfEach(await deps.payments.listedMonth(namespace, month)) : [];
    const rows = listed.flatMap((c) => listedPaymentRow(c) ?? []);
    return rows.length === listed.length ? rows : oldForm(month);
  };
  const written = new Map([...seen].filter(([m]) => counters.has(m) || files.payments.includes(m)));
  for (const month of months) {
    // A month whose list did not change since this writer wrote it has its rows in its file: only its visits changed.
    const unchanged = seen.has(month) && seen.get(month) === counters.get(month);
    await deps.table.writePayments(
      site.domain,
      month,
      unchanged ? await deps.table.readPayments(site.domain, month) : await listedRows(month),
    );
    written.set(month, counters.get(month) ?? 0);
  }
  const moved =
    state?.namespace !== namespace ||
    state.rowForm !== TABLE_ROW_FORM ||
    state.openDigest !== visits.openDigest ||
    state.openSource !== visits.openSource ||
    state.visitsFrom;
  if (months.length > 0 || moved) {
    const source = visits.openSource === undefined ? {} : { openSource: visits.openSource };
    await deps.table.setPaymentsWritten(site.domain, {
      namespace,
      counters: written,
      openDigest: visits.openDigest,
      ...source,
      rowForm: TABLE_ROW_FORM,
    });
  }
  return months.length;
}

/**
 * A digest of visit rows (SHA-256 of their JSON, by visit id): the open days' rows change at most runs of a
 * site with traffic, and a run whose open rows equal the last written ones need not write their payments again.
 */
export function digestOfRows(rows: readonly VisitRow[]): string {
  const hash = createHash('sha256');
  for (const r of [...rows].sort((a, b) => (a.visit_id < b.visit_id ? -1 : a.visit_id > b.visit_id ? 1 : 0)))
    hash.update(JSON.stringify(r)).update('\n');
  return hash.digest('base64url');
}

/** One contribution per payment, its newest revision: a payment moving within a month holds its old position until its recompute ends. */
function newestOfEach(listed: readonly Contribution[]): Contribution[] {
  const out = new Map<string, Contribution>();
  for (const c of listed) if ((out.get(c.key)?.rev ?? -1) < c.rev) out.set(c.key, c);
  return [...out.values()];
}

/**
 * The rows of a month from the site's stored payments, for a month whose list holds an item written before
 * contributions carried the credited visit's id (`isListedWithoutVisitId`): one paged Query of the whole
 * PAYMENT partition, read once a run and only for such a month, at today's rates.
 */
function paymentRowsOfOldListForm(
  deps: VisitTableDeps,
  site: SiteConfig,
): (month: string) => Promise<PaymentTableRow[]> {
  let all: Promise<Map<string, PaymentTableRow[]>> | undefined;
  return async (month) => {
    all ??= Promise.all([deps.payments.listPayments(namespaceOf(site)), deps.rates()]).then(([payments, rate]) =>
      byMonth<PaymentTableRow>(payments.flatMap((p) => paymentTableRow(p, site.timezone, rate) ?? [])),
    );
    return (await all).get(month) ?? [];
  };
}

/**
 * The scheduled run's work for a site: the closed days not yet written go
 * into their month files (from the archive's first day on the first run), the
 * open days (after the last closed one, today included) are sessionized again
 * into the open file unless their archive objects, as listed (`recent`), are those the file was written
 * from (`openSourceDigest`, recorded with the payments' state once the file is written), and the payments
 * months that need it are rewritten (`writePaymentTable`): a run with nothing new reads no object and
 * writes nothing. The last closed day written is recorded only once its month is, so a failed
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
  const opened = addDays(closed, 1);
  const { fromDt, toDt } = archiveSpan(opened, today);
  const snapshot = deps.recent ? await deps.recent.snapshot(site.domain, fromDt, toDt) : null;
  const openSource = snapshot ? openSourceDigest(site, opened, today, snapshot.digest) : undefined;
  const state = await deps.table.paymentsWritten(site.domain);
  let open: VisitRow[] | null = null;
  let openDigest = state?.openDigest ?? '';
  if (openSource === undefined || state?.openSource !== openSource) {
    open = await rowsOf(
      snapshot ? await snapshot.events() : await deps.archive.events(site.domain, fromDt, toDt),
      site,
      opened,
      today,
    );
    await deps.table.writeOpen(site.domain, open);
    openDigest = digestOfRows(open);
  }
  const openFrom = state?.openDigest === openDigest ? null : opened;
  const visitsFrom = [state?.visitsFrom ?? null, openFrom].filter((d): d is string => d !== null).sort()[0] ?? null;
  const paymentMonths = await writePaymentTable(deps, site, { from: visitsFrom, openDigest, openSource, state });
  if (look) await deps.table.setChangesSeen(site.domain, now);
  const outcome = { days: written.days + late.days, rows: written.rows + late.rows, paymentMonths };
  return { ...outcome, open: open?.length ?? null };
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
 * The scheduled run's work for a site, as `refreshVisitTable`, after dropping a table written for
 * another generation than the site's live one (`docs/data-model.md`, "Filtered reports"): a
 * `footfall rebuild` switched generations since, classifying every visit by the rules of the code it
 * ran, while the months written before keep the rules of the release that wrote them. The refresh
 * then writes the table whole from the archive, so a filter matching every visit gives the rebuilt
 * rollups' figures. The generation written for is the namespace the payments state holds; a table
 * never written has none. A crash after the drop leaves no state, so the next run writes it whole.
 * Likewise a table written in an older form of the rows (`PaymentsWritten.rowForm` before
 * `TABLE_ROW_FORM`: before rows kept their outbound link URLs), once, at the site's first refresh under the release.
 * @throws Error with the archive's or the table's message
 */
export async function refreshSiteTable(deps: VisitTableDeps, site: SiteConfig): Promise<VisitTableOutcome> {
  const state = await deps.table.paymentsWritten(site.domain);
  const stale = state !== null && (state.namespace !== namespaceOf(site) || (state.rowForm ?? 1) < TABLE_ROW_FORM);
  if (stale) await deps.table.dropSite(site.domain);
  return refreshVisitTable(deps, site);
}
