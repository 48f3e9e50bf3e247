import type { DynamoConnection } from '../client.js';
import { BULK_CONCURRENCY } from '../batch.js';
import { checkedBatchWrite, readChangeCounters } from '../change-counter.js';
import { inParallel } from '../../../domain/parallel.js';
import { dayCohort, keptFrom, monthCohort, type PayerSummary } from '../../../domain/reports/cohorts.js';
import { CohortMemberStore } from './cohort-member-store.js';
import { CohortStore } from './cohort-store.js';
import { cohortItems, dayPeriod, monthPeriod } from './cohort-items.js';

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

  constructor(private readonly conn: DynamoConnection) {
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
   * `days` for a bulk load's days (`docs/data-model.md`, "The bulk recompute"): a month's days'
   * change counters read (one Query), then one paged Query of the month's members (instead of one
   * per day); their items written with BatchWriteItem, carrying the counters as read
   * (`checkedBatchWrite`), and the counters read again: a day whose counter moved meanwhile is
   * recomputed as `day` does. Then each month. Memory: one month's members at a time.
   */
  async bulk(site: string, timezone: string, days: Iterable<string>, now?: number): Promise<void> {
    const byMonth = new Map<string, string[]>();
    for (const day of new Set(days)) byMonth.set(day.slice(0, 7), [...(byMonth.get(day.slice(0, 7)) ?? []), day]);
    for (const [month, monthDays] of [...byMonth].sort(([a], [b]) => a.localeCompare(b))) {
      const range = this.cohorts.counters(site, `${month}-01`, `${month}-31`);
      const seen = await readChangeCounters(this.conn, range);
      const members = await this.members.ofMonth(site, month);
      const kept = keptFrom(now, timezone);
      const checked = monthDays.sort().map((day) => {
        const { cohort, payers } = dayCohort(members.get(day) ?? [], kept);
        const src = seen.get(day) ?? 0;
        return { period: day, src, items: cohortItems(site, dayPeriod(day), cohort, payers, src) };
      });
      const moved = await checkedBatchWrite(this.conn, range, checked);
      await inParallel(moved, BULK_CONCURRENCY, (day) => this.day(site, timezone, day, now));
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
