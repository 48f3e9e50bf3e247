import type { DynamoConnection } from '../client.js';
import { BULK_CONCURRENCY } from '../batch.js';
import { inParallel } from '../../../domain/parallel.js';
import { dayCohort, keptFrom, monthCohort, type PayerSummary } from '../../../domain/reports/cohorts.js';
import { CohortMemberStore } from './cohort-member-store.js';
import { CohortStore } from './cohort-store.js';
import { dayPeriod, monthPeriod } from './cohort-items.js';

/**
 * Recomputes cohort items from the items below them (`docs/retention.md`, "How it is computed: payer
 * summaries and cohort rollups"): a day from its members, a month from its days. Each bumps the
 * period's change counter before reading, and writes only over a result from an older counter.
 * `now` (ms since epoch) is the recompute's clock: "paying until" days before its site-local day
 * are dropped (`keptFrom`); without it none is.
 */
export class CohortRecompute {
  readonly members: CohortMemberStore;
  readonly cohorts: CohortStore;

  constructor(conn: DynamoConnection) {
    this.members = new CohortMemberStore(conn);
    this.cohorts = new CohortStore(conn);
  }

  /** Recomputes the cohorts of `days`, several at once, then of their months. */
  async days(site: string, timezone: string, days: readonly string[], now?: number): Promise<void> {
    await inParallel(days, BULK_CONCURRENCY, (day) => this.day(site, timezone, day, now));
    await inParallel([...new Set(days.map((d) => d.slice(0, 7)))], BULK_CONCURRENCY, (month) =>
      this.month(site, timezone, month, now),
    );
  }

  /** Recomputes a day's cohort items from its members. */
  async day(site: string, timezone: string, day: string, now?: number): Promise<void> {
    const src = await this.cohorts.bump(site, day);
    await this.writeDay(site, timezone, day, src, await this.members.ofDay(site, day), now);
  }

  /** Recomputes a month's cohort items from its days' items (read consistently). */
  async month(site: string, timezone: string, month: string, now?: number): Promise<void> {
    const src = await this.cohorts.bump(site, month);
    const days = await this.cohorts.read(site, { granularity: 'D', from: `${month}-01`, to: `${month}-31` }, true);
    await this.cohorts.write(site, monthPeriod(month), monthCohort(days, keptFrom(now, timezone)), src);
  }

  /**
   * `days` for a bulk load's days: a month's days' counters bumped first, then one paged Query of
   * the month's members (instead of one per day), so each day's result carries the guard `day`'s
   * would; then each month. Memory: one month's members at a time.
   */
  async bulk(site: string, timezone: string, days: Iterable<string>, now?: number): Promise<void> {
    const byMonth = new Map<string, string[]>();
    for (const day of new Set(days)) byMonth.set(day.slice(0, 7), [...(byMonth.get(day.slice(0, 7)) ?? []), day]);
    for (const [month, monthDays] of [...byMonth].sort(([a], [b]) => a.localeCompare(b))) {
      const src = new Map<string, number>();
      await inParallel(monthDays, BULK_CONCURRENCY, async (day) => {
        src.set(day, await this.cohorts.bump(site, day));
      });
      const members = await this.members.ofMonth(site, month);
      await inParallel(monthDays.sort(), BULK_CONCURRENCY, (day) =>
        this.writeDay(site, timezone, day, src.get(day) ?? 0, members.get(day) ?? [], now),
      );
    }
    await inParallel([...byMonth.keys()], BULK_CONCURRENCY, (month) => this.month(site, timezone, month, now));
  }

  private async writeDay(
    site: string,
    timezone: string,
    day: string,
    src: number,
    members: readonly PayerSummary[],
    now?: number,
  ): Promise<void> {
    await this.cohorts.write(site, dayPeriod(day), dayCohort(members, keptFrom(now, timezone)), src);
  }
}
