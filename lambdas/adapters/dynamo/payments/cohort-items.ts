import { PK, SK } from '../table.js';
import { PARTITIONS, periodSk } from '../items.js';
import {
  GROUPINGS,
  deserializeGroups,
  serializeGroups,
  type CohortGroups,
  type Grouping,
} from '../../../domain/reports/cohorts.js';
import { dict } from '../../../domain/dict.js';

/**
 * The cohort partition `CH#<site>` (`docs/data-model.md`, "Retention: payer summaries and cohorts"):
 *
 * - COHORT `D#<day>#<grouping>`, `M#<month>#<grouping>` (grouping: channels, referrers,
 *   campaigns): counters per group id (`serializeGroups`, `v`), `n` the payers of the period
 *   (channels items), `src` the change counter `C#<period>` (COHORT_CHANGE) it was computed from.
 *   Referrers and campaigns hold at most `COHORT_KEYS_PER_ITEM` ids; "paying until" days before
 *   the day of the recompute are dropped, so a group's histogram has at most 375 days:
 *   ≤ 100 × (≤ 2.3 KB id + 5 KB histogram) worst case, a few KB in practice.
 * - COHORT_SOURCES `SRC`: `p_<provider>` 0 (seen) or 1 (sent a subscription status).
 */
export const cohortPk = (site: string) => PARTITIONS.cohort.key(site);
const { COHORT, COHORT_CHANGE, COHORT_SOURCES } = PARTITIONS.cohort.items;

export const changeKey = (period: string) => COHORT_CHANGE.key(period);
export const sourcesKey = (site: string) => ({ [PK]: cohortPk(site), [SK]: COHORT_SOURCES.key() });
/** Range bounds of the COHORT items (a granularity's, a span of periods'). */
export const cohortRange = COHORT.range;

/** The period sort key part of a day (`D#<day>`) and of a month (`M#<month>`). */
export const dayPeriod = (day: string) => periodSk('D', day);
export const monthPeriod = (month: string) => periodSk('M', month);

/**
 * The three COHORT items of a period (`D#<day>` or `M#<month>`): one per grouping, the channels one
 * carrying the period's payers (`n`), each computed from change counter `src`.
 */
export function cohortItems(
  site: string,
  period: string,
  cohort: CohortGroups,
  payers: number,
  src: number,
): Array<Record<string, unknown>> {
  return GROUPINGS.map((grouping) => ({
    [PK]: cohortPk(site),
    [SK]: COHORT.key(period, grouping),
    type: 'COHORT',
    v: serializeGroups(cohort[grouping]),
    ...(grouping === 'channels' ? { n: payers } : {}),
    src,
  }));
}

/** A COHORT item's period (`YYYY-MM-DD` or `YYYY-MM`), grouping, counters and, on a channels item, payers. */
export function cohortItemOf(item: Record<string, unknown>): {
  period: string;
  grouping: Grouping;
  groups: CohortGroups[Grouping];
  payers: number | null;
} {
  const [, period = '', grouping] = String(item[SK]).split('#');
  return {
    period,
    grouping: grouping as Grouping,
    groups: deserializeGroups(String(item.v)),
    payers: grouping === 'channels' ? Number(item.n ?? 0) : null,
  };
}

/** The day of a day COHORT item's sort key (`D#<YYYY-MM-DD>#…`). */
export const dayOfSk = (sk: string) => sk.slice(2, 12);

/** The status sources of a COHORT_SOURCES item: per provider, whether it sent a subscription status. */
export function sourcesOf(item: Record<string, unknown> | undefined): Record<string, boolean> {
  const sources = dict<boolean>();
  for (const [k, v] of Object.entries(item ?? {})) if (k.startsWith('p_')) sources[k.slice(2)] = Number(v) === 1;
  return sources;
}
