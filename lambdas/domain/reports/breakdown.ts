import { NONE } from '../rollup.js';
import { UNATTRIBUTED_KEY, valueTotals, type ValueCounters } from '../payments/contribution.js';
import { ratio, usd } from './periods.js';

/** A breakdown row (`docs/api.md` "Breakdowns"). */
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
 * The rows of a breakdown (`docs/api.md` "Breakdowns", rules 1–5): visits that started in the
 * range per value, and the payments of the range credited to a visit with
 * that value (for `page`, to every page of the credited visit); payments with
 * no credited visit form the Unattributed row. Ordered by revenue, then
 * visitors, then label; `total` is the row count before `limit`.
 *
 * @param visitCounts value → visits, one map per rollup item read
 * @param paymentCounters value → counted payments, net cents, payers, one map per PAYMENT_DIMENSION item read
 */
export function breakdownRows(
  visitCounts: ReadonlyArray<Record<string, number>>,
  paymentCounters: ReadonlyArray<Record<string, ValueCounters>>,
  limit: number,
): { total: number; rows: BreakdownRow[] } {
  const rows = new Map<string, { visitors: number; payments: number; cents: number; customers: number }>();
  const row = (value: string) => {
    let r = rows.get(value);
    if (!r) rows.set(value, (r = { visitors: 0, payments: 0, cents: 0, customers: 0 }));
    return r;
  };
  for (const counts of visitCounts) for (const [value, n] of Object.entries(counts)) row(value).visitors += n;
  const totals = valueTotals(paymentCounters);
  const unattributed = totals.get(UNATTRIBUTED_KEY) ?? { payments: 0, cents: 0, payers: 0 };
  for (const [value, t] of totals) {
    if (value === UNATTRIBUTED_KEY) continue;
    const r = row(value);
    r.payments = t.payments;
    r.cents = t.cents;
    r.customers = t.payers;
  }
  const out: BreakdownRow[] = [...rows]
    .filter(([, r]) => r.visitors !== 0 || r.payments !== 0)
    .map(([value, r]) => ({
      key: value === NONE ? null : value,
      label: value === NONE ? NONE_LABEL : value,
      unattributed: false,
      visitors: r.visitors,
      payments: r.payments,
      customers: r.customers,
      revenue_usd: usd(r.cents),
      revenue_per_visitor: r.visitors > 0 ? ratio(r.cents / 100 / r.visitors) : null,
    }));
  if (unattributed.payments > 0) {
    out.push({
      key: null,
      label: UNATTRIBUTED_LABEL,
      unattributed: true,
      visitors: 0,
      payments: unattributed.payments,
      customers: unattributed.payers,
      revenue_usd: usd(unattributed.cents),
      revenue_per_visitor: null,
    });
  }
  out.sort((a, b) => b.revenue_usd - a.revenue_usd || b.visitors - a.visitors || a.label.localeCompare(b.label));
  return { total: out.length, rows: out.slice(0, limit) };
}
