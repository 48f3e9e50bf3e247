import { NONE } from '../rollup.js';
import type { DimensionEntry } from '../payments/entries.js';
import { ratio, usd } from './periods.js';

/** A breakdown row (spec §2.5). */
export interface BreakdownRow {
  key: string | null;
  label: string;
  unattributed: boolean;
  visitors: number;
  payments: number;
  customers: number;
  revenue_usd: number;
  revenue_per_visitor: number | null;
}

export const NONE_LABEL = '(none)';
export const UNATTRIBUTED_LABEL = 'Unattributed';

/**
 * The rows of a breakdown (spec §4.2 rules 1–5): visits that started in the
 * range per value, and the payments of the range credited to a visit with
 * that value (for `page`, to every page of the credited visit); payments with
 * no credited visit form the Unattributed row. Ordered by revenue, then
 * visitors, then label; `total` is the row count before `limit`.
 *
 * @param visitCounts value → visits, one map per rollup item read
 * @param paymentEntries payment key → entry, one map per payment rollup item read
 */
export function breakdownRows(
  visitCounts: ReadonlyArray<Record<string, number>>,
  paymentEntries: ReadonlyArray<Record<string, DimensionEntry>>,
  limit: number,
): { total: number; rows: BreakdownRow[] } {
  const rows = new Map<string, { visitors: number; payments: number; cents: number; customers: Set<string> }>();
  const row = (value: string) => {
    let r = rows.get(value);
    if (!r) rows.set(value, (r = { visitors: 0, payments: 0, cents: 0, customers: new Set() }));
    return r;
  };
  for (const counts of visitCounts) for (const [value, n] of Object.entries(counts)) row(value).visitors += n;
  const unattributed = { payments: 0, cents: 0, customers: new Set<string>() };
  for (const entries of paymentEntries) {
    for (const entry of Object.values(entries)) {
      if (entry.length === 1) continue;
      const [, net, customer, values] = entry;
      const targets = values === null ? [unattributed] : values.map(row);
      for (const t of targets) {
        t.payments++;
        t.cents += net;
        t.customers.add(customer);
      }
    }
  }
  const out: BreakdownRow[] = [...rows]
    .filter(([, r]) => r.visitors !== 0 || r.payments !== 0)
    .map(([value, r]) => ({
      key: value === NONE ? null : value,
      label: value === NONE ? NONE_LABEL : value,
      unattributed: false,
      visitors: r.visitors,
      payments: r.payments,
      customers: r.customers.size,
      revenue_usd: usd(r.cents),
      revenue_per_visitor: r.visitors > 0 ? ratio(r.cents / 100 / r.visitors) : null,
    }));
  if (unattributed.payments > 0) {
    out.push({ key: null, label: UNATTRIBUTED_LABEL, unattributed: true, visitors: 0, payments: unattributed.payments, customers: unattributed.customers.size, revenue_usd: usd(unattributed.cents), revenue_per_visitor: null });
  }
  out.sort((a, b) => b.revenue_usd - a.revenue_usd || b.visitors - a.visitors || a.label.localeCompare(b.label));
  return { total: out.length, rows: out.slice(0, limit) };
}
