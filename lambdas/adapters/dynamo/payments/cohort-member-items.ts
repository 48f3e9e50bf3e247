import { PK, SK } from '../table.js';
import { PARTITIONS } from '../items.js';
import type { PayerSummary } from '../../../domain/reports/cohorts.js';

/**
 * The cohort member partition `CM#<site>` (`docs/data-model.md`, "Retention: payer summaries and
 * cohorts"): COHORT_MEMBER `<first day>#<payer>`, a payer's summary (`PayerSummary` as JSON, `m`) on
 * the site-local day of its first countable payment, with the payer counter it was computed from
 * (`src`). ≤ 1 KB.
 */
export const memberPk = (site: string) => PARTITIONS.cohortMember.key(site);
const { COHORT_MEMBER } = PARTITIONS.cohortMember.items;

/** The key of a payer's member item on a day. */
export const memberKey = (site: string, day: string, payer: string) => ({
  [PK]: memberPk(site),
  [SK]: COHORT_MEMBER.key(day, payer),
});

/** Sort key prefixes of a day's and of a month's members. */
export const dayMembers = (day: string) => COHORT_MEMBER.range.day(day);
export const monthMembers = (month: string) => COHORT_MEMBER.range.month(month);

/** The stored form of a summary (`m`): what a recompute compares to know whether the member is in line. */
export const summaryJson = (summary: PayerSummary | null): string | null => (summary ? JSON.stringify(summary) : null);

/** A payer's member item, its summary computed from the payer counter `src`. */
export const memberItem = (site: string, payer: string, summary: PayerSummary, src: number) => ({
  ...memberKey(site, summary.day, payer),
  type: 'COHORT_MEMBER',
  m: summaryJson(summary),
  src,
});

/** The summary of a member item. */
export const summaryOf = (item: Record<string, unknown>): PayerSummary => JSON.parse(String(item.m)) as PayerSummary;
