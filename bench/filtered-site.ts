import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENTS_PER_VISIT, planVisits, visitEvents, type TrafficOptions } from './traffic.js';
import { OUTBOUND_GOAL, buildVisits, visitEventOf } from '../lambdas/domain/visit.js';
import { monthOf, sortKey, visitRow, type PaymentTableRow, type VisitRow } from '../lambdas/domain/visit-table.js';
import { addDays, localDay } from '../lambdas/domain/range.js';
import { LocalVisitTable, TABLE_FORMAT } from '../local/visit-table.js';
import { rng } from '../local/demo/workload.js';

/**
 * The filtered-dashboard bench's site (`docs/benchmarks.md`, "Filtered
 * dashboards at full scale"): a year of visits and payments written into the
 * product's visit and payments tables by `LocalVisitTable`, the writer the
 * scheduled function runs.
 *
 * Visits are `bench/traffic.ts`'s (its plan of visitors and start times,
 * its per-visit draws of channel, referrer, campaign, pages, goals and the
 * visitor's market, device, system and browser), grouped into visits by the
 * sessionizer's own rule (`buildVisits`) and turned into rows by the
 * writer's own `visitRow`: the rows the writer writes from the archive's
 * events of those visits, without the archive and the sessionizer's
 * round trips in between, with custom properties on landing page views and
 * signups (`benchProps`). The site's time zone is UTC.
 *
 * Payments follow the import bench's mix (`bench/payment-mix.ts`): monthly
 * subscriptions renewing every 30 days until the customer churns (1 in 8
 * a month), 4% of renewals failing, 1 purchase in 10 a one-off; three
 * first purchases in four are credited to a visit of the 30 days before
 * them, and a renewal keeps its first purchase's credit (so it is credited
 * to a visit up to a year old). Each day's first purchases make up the
 * day's share of `paymentsPerMonth` less the renewals due that day.
 *
 * Cached under `bench/.cold/filtered-site-<key>/`, the key a hash of the
 * options, this generator's version and the table's format
 * (`TABLE_FORMAT`, the sort); written month by month, each month marked
 * done with its generation time, so an interrupted run resumes at the
 * first month not done.
 */

export interface BenchSiteOptions {
  visitsPerMonth: number;
  paymentsPerMonth: number;
  /** Last day of the year, `YYYY-MM-DD` (UTC). */
  end: string;
  days: number;
  seed: number;
}

export const BENCH_SITE_DOMAIN = 'bench.example';
export const BENCH_SITE_TIMEZONE = 'UTC';
/** Raised when what the generator writes changes, so the cache is written again. */
const GENERATOR_VERSION = 3;
/**
 * The cache of the format before outbound link URLs (`links`), which the engine reads as clicking none
 * (`beforeCurrentForm`): the generator's version then, and the visit table's format without the column.
 */
const BEFORE_LINKS = {
  generatorVersion: 2,
  format: {
    ...TABLE_FORMAT,
    columns: TABLE_FORMAT.columns.filter((c) => !c.startsWith('links ')),
    paymentColumns: TABLE_FORMAT.paymentColumns.filter((c) => !c.startsWith('links ')),
  },
};
/** Distinct outbound link URLs of the bench site's clicks (`benchLink`). */
const BENCH_LINKS = 200;
const DAY_MS = 86_400_000;
const RENEWAL_MS = 30 * DAY_MS;
const LOOKBACK_MS = 30 * DAY_MS;

/** The site's table directory and what generating it cost. */
export interface BenchSite {
  root: string;
  /** First and last day with visits, `YYYY-MM-DD`. */
  firstDay: string;
  lastDay: string;
  visits: number;
  payments: number;
  /** Wall time of writing every month, ms, summed over the runs that wrote them. */
  generationMs: number;
  /** Months written by this run (the others came from the cache). */
  writtenNow: number;
}

/** The filtered bench's site (`bench/filtered.ts`) at `visitsPerMonth` visits a month: a year to 2026-11-26. */
export const filteredBenchOptions = (visitsPerMonth: number): BenchSiteOptions => ({
  visitsPerMonth,
  paymentsPerMonth: visitsPerMonth / 10,
  end: '2026-11-26',
  days: 365,
  seed: 33,
});

/** The cache directory of a site's options: their hash with the generator's version and the table's format. */
export function benchSiteRoot(
  options: BenchSiteOptions,
  version: { generatorVersion: number; format: unknown } = {
    generatorVersion: GENERATOR_VERSION,
    format: TABLE_FORMAT,
  },
): string {
  const material = JSON.stringify({
    options,
    GENERATOR_VERSION: version.generatorVersion,
    TABLE_FORMAT: version.format,
    sort: sortKey.toString(),
  });
  const key = createHash('sha256').update(material).digest('hex').slice(0, 12);
  return fileURLToPath(new URL(`./.cold/filtered-site-${key}/`, import.meta.url));
}

/**
 * The cache the bench reads: the current format's, or where that was never started and `FILTERED_SITE` is not
 * `regenerate`, the one written before outbound link URLs were kept (`BEFORE_LINKS`), read as it is and never
 * written (a full-scale site takes some 50 minutes to generate); null when neither exists.
 */
export function existingBenchSite(options: BenchSiteOptions): { root: string; readOnly: boolean } | null {
  const root = benchSiteRoot(options);
  if (existsSync(root) || process.env.FILTERED_SITE === 'regenerate') return { root, readOnly: false };
  const before = benchSiteRoot(options, BEFORE_LINKS);
  return existsSync(before) ? { root: before, readOnly: true } : null;
}

/**
 * The link URL of a visit's outbound click (`visit` its plan index), drawn from the index so the traffic's random
 * draws are unchanged: one of `BENCH_LINKS` URLs, the first ones most often (about a Zipf law, as the panel's).
 */
function benchLink(visit: number, goal: string | null): string | null {
  if (goal !== OUTBOUND_GOAL) return null;
  const u = (Math.imul(visit + 1, 2_654_435_761) >>> 0) / 2 ** 32;
  return linkUrl(Math.floor(BENCH_LINKS ** u) - 1);
}

const linkUrl = (k: number) => `https://partner-${k}.example.com/ref?from=bench`;
/** Every outbound link URL of the bench site (`benchLink`). */
export const BENCH_LINK_URLS: readonly string[] = Array.from({ length: BENCH_LINKS }, (_, k) => linkUrl(k));

/**
 * The custom properties of a visit's `n`th event (`visit` its plan index), drawn from the indexes so the traffic's
 * random draws are unchanged: `logged_in` on each landing page view, and `plan` (one of three) and
 * `variant` (one of 40) on each signup; the Properties panel reads them.
 */
function benchProps(visit: number, n: number, goal: string | null): string | null {
  if (n === 0) return JSON.stringify({ logged_in: String(visit % 5 === 0) });
  if (goal !== 'Signup') return null;
  return JSON.stringify({ plan: ['free', 'pro', 'team'][visit % 3], variant: `v${visit % 40}` });
}

/** One planned payment: `visit` is the plan's index of the credited visit, null when Unattributed. */
interface PlannedPayment {
  key: string;
  ts: number;
  cents: number;
  customer: string;
  failed: boolean;
  visit: number | null;
}

/** The year's payments, by the mix in the module's doc (deterministic for the seed). */
function planPayments(options: BenchSiteOptions, from: number, to: number, starts: Float64Array): PlannedPayment[] {
  const random = rng(options.seed * 7 + 1);
  const perDay = (options.paymentsPerMonth * 12) / 365;
  const renewals = new Map<number, PlannedPayment[]>();
  const out: PlannedPayment[] = [];
  let customers = 0;
  for (let day = 0; from + day * DAY_MS < to; day++) {
    const dayStart = from + day * DAY_MS;
    const due = renewals.get(day) ?? [];
    renewals.delete(day);
    const renew = (p: PlannedPayment) => {
      // A customer churns 1 month in 8; the others renew 30 days later.
      if (random() < 1 / 8) return;
      const next = { ...p, key: `stripe:in_${out.length}_${p.customer}`, ts: p.ts + RENEWAL_MS };
      next.failed = random() < 0.04;
      const at = Math.floor((next.ts - from) / DAY_MS);
      const bucket = renewals.get(at);
      if (bucket) bucket.push(next);
      else renewals.set(at, [next]);
    };
    for (const p of due) {
      out.push(p);
      renew(p);
    }
    for (let n = due.length; n < perDay; n++) {
      const ts = dayStart + Math.floor(random() * DAY_MS);
      const oneOff = random() < 0.1;
      const customer = `cus_${customers++}`;
      const credited = random() < 0.75 ? visitBefore(starts, ts, random) : null;
      const p: PlannedPayment = {
        key: `stripe:pi_${out.length}`,
        ts,
        cents: random() < 0.3 ? 1900 : 4900,
        customer: oneOff ? `one-off:${out.length}` : customer,
        failed: false,
        visit: credited,
      };
      out.push(p);
      if (!oneOff) renew(p);
    }
  }
  return out;
}

/** A uniformly chosen visit of the 30 days before `ts` (the plan is sorted by start), or null when there is none. */
function visitBefore(starts: Float64Array, ts: number, random: () => number): number | null {
  const lo = firstAtOrAfter(starts, ts - LOOKBACK_MS);
  const hi = firstAtOrAfter(starts, ts);
  return hi > lo ? lo + Math.floor(random() * (hi - lo)) : null;
}

/** The first index of a sorted array whose value is ≥ `t`. */
function firstAtOrAfter(sorted: Float64Array, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] ?? Infinity) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The bench site's tables, written where missing (see the module's doc).
 * @param log progress lines (stderr in the bench)
 * @throws Error when the table cannot be written
 */
export async function benchSite(options: BenchSiteOptions, log: (line: string) => void): Promise<BenchSite> {
  const { root, readOnly } = existingBenchSite(options) ?? { root: benchSiteRoot(options), readOnly: false };
  if (readOnly)
    log(
      `reading ${root} as it is: written before link URLs were kept (FILTERED_SITE=regenerate writes the current format)`,
    );
  const from = Date.parse(`${addDays(options.end, -(options.days - 1))}T00:00:00Z`);
  const to = Date.parse(`${options.end}T00:00:00Z`) + DAY_MS;
  const traffic: TrafficOptions = {
    site: BENCH_SITE_DOMAIN,
    from,
    to,
    eventsPerMonth: options.visitsPerMonth * EVENTS_PER_VISIT,
    seed: options.seed,
  };
  const planned = performance.now();
  const plan = planVisits(traffic);
  const payments = planPayments(options, from, to, plan.start);
  log(`planned ${plan.start.length} visits and ${payments.length} payments in ${ms(planned)} ms`);
  const rowOf = (i: number): VisitRow => {
    const events = visitEvents(traffic, plan.start[i] ?? 0, plan.visitor[i] ?? 0, i)
      .filter(({ at }) => at < to)
      .map(({ event }, n) =>
        visitEventOf({ ...event, props: benchProps(i, n, event.goal), link: benchLink(i, event.goal) }),
      );
    const [visit] = buildVisits(BENCH_SITE_DOMAIN, `visitor-${plan.visitor[i]}`, events);
    if (!visit) throw new Error(`visit ${i} has no event`);
    return visitRow(visit, BENCH_SITE_TIMEZONE);
  };
  const paymentDays = payments.map((p) => localDay(p.ts, BENCH_SITE_TIMEZONE));
  const months = [...new Set(paymentDays.map((d) => d.slice(0, 7)))].sort();
  const doneFile = (month: string) => join(root, 'done', `${month}.json`);
  const table = new LocalVisitTable(root);
  let generationMs = 0;
  let writtenNow = 0;
  try {
    for (const month of months) {
      if (existsSync(doneFile(month))) {
        generationMs += Number(JSON.parse(readFileSync(doneFile(month), 'utf8')).ms);
        continue;
      }
      if (readOnly) throw new Error(`${root} has no ${month}: FILTERED_SITE=regenerate writes the site again`);
      const began = performance.now();
      // A visit's day is its first event's, which a late event may move before its planned start.
      const monthStart = Date.parse(`${month}-01T00:00:00Z`);
      const lo = firstAtOrAfter(plan.start, monthStart - DAY_MS);
      const hi = firstAtOrAfter(plan.start, monthStart + 32 * DAY_MS);
      const rows: VisitRow[] = [];
      for (let i = lo; i < hi; i++) {
        const row = rowOf(i);
        if (monthOf(row) === month) rows.push(row);
      }
      await table.writeMonth(BENCH_SITE_DOMAIN, month, rows);
      const paid: PaymentTableRow[] = payments.flatMap((p, i) => {
        const day = paymentDays[i] ?? '';
        if (day.slice(0, 7) !== month) return [];
        const visit = p.visit === null ? null : rowOf(p.visit);
        return [
          {
            key: p.key,
            ts: p.ts,
            day,
            cents: p.cents,
            customer: p.customer,
            failed: p.failed,
            refunded: false,
            visit_id: visit?.visit_id ?? null,
            visit_day: visit?.day ?? null,
          },
        ];
      });
      await table.writePayments(BENCH_SITE_DOMAIN, month, paid);
      const took = performance.now() - began;
      generationMs += took;
      writtenNow++;
      mkdirSync(join(root, 'done'), { recursive: true });
      writeFileSync(
        doneFile(month),
        JSON.stringify({ ms: Math.round(took), visits: rows.length, payments: paid.length }),
      );
      log(`${month}: ${rows.length} visits, ${paid.length} payments written in ${Math.round(took)} ms`);
    }
  } finally {
    await table.close();
  }
  return {
    root,
    firstDay: localDay(from, BENCH_SITE_TIMEZONE),
    lastDay: options.end,
    visits: plan.start.length,
    payments: payments.length,
    generationMs,
    writtenNow,
  };
}

const ms = (since: number) => Math.round(performance.now() - since);
