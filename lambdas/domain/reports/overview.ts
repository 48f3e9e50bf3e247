import { countVisitors, unionSketches, type VisitorSketch } from '../visitor-sketch.js';
import { FAILED, type TotalsEntry } from '../payments/entries.js';
import type { DateRange } from '../range.js';
import { ratio, usd } from './periods.js';

/** Overview totals (spec §2.4). */
export interface OverviewTotals {
  visitors: number;
  sessions: number;
  payments: number;
  customers: number;
  revenue_usd: number;
  converted: number;
  matched_payments: number;
  matched_revenue_usd: number;
  conversion: number | null;
  revenue_per_visitor: number | null;
}

/** What the overview reads for one range: the visits rollups and the payment totals entries. */
export interface OverviewInput {
  visits: ReadonlyArray<{ visits: number; sketch: VisitorSketch }>;
  payments: ReadonlyArray<Record<string, TotalsEntry>>;
}

/**
 * Totals of one range (spec §2.4). A payment counts when it did not fail; it
 * is matched when its credited visit started in the range (its visitor was
 * tracked in the range); `converted` counts the distinct customers of matched
 * payments. `conversion` and `revenue_per_visitor` stay null until a payment
 * is matched.
 */
export function overviewTotals(input: OverviewInput, range: Pick<DateRange, 'from' | 'to'>): OverviewTotals {
  const visitors = countVisitors(unionSketches(input.visits.map((v) => v.sketch)));
  const sessions = input.visits.reduce((n, v) => n + v.visits, 0);
  let payments = 0;
  let cents = 0;
  let matched = 0;
  let matchedCents = 0;
  const customers = new Set<string>();
  const converted = new Set<string>();
  for (const entries of input.payments) {
    for (const entry of Object.values(entries)) {
      if (entry.length === 1) continue;
      const [, , net, customer, touchDay, flags] = entry;
      if (flags & FAILED) continue;
      payments++;
      cents += net;
      customers.add(customer);
      if (touchDay !== null && touchDay >= range.from && touchDay <= range.to) {
        matched++;
        matchedCents += net;
        converted.add(customer);
      }
    }
  }
  return {
    visitors,
    sessions,
    payments,
    customers: customers.size,
    revenue_usd: usd(cents),
    converted: converted.size,
    matched_payments: matched,
    matched_revenue_usd: usd(matchedCents),
    conversion: matched > 0 && visitors > 0 ? ratio(converted.size / visitors) : null,
    revenue_per_visitor: matched > 0 && visitors > 0 ? ratio(matchedCents / 100 / visitors) : null,
  };
}

/** Relative change (spec §2.4, DESIGN.md): `(current - previous) / previous`, null when previous is 0 or missing. */
export function relativeChange(current: number | null, previous: number | null): number | null {
  if (current === null || previous === null || previous === 0) return null;
  return ratio((current - previous) / previous);
}

export const CHANGE_KEYS = ['visitors', 'revenue_usd', 'payments', 'conversion', 'revenue_per_visitor'] as const;

/** The `change` object of the overview. */
export function overviewChange(current: OverviewTotals, previous: OverviewTotals): Record<(typeof CHANGE_KEYS)[number], number | null> {
  return Object.fromEntries(CHANGE_KEYS.map((k) => [k, relativeChange(current[k], previous[k])])) as Record<(typeof CHANGE_KEYS)[number], number | null>;
}
