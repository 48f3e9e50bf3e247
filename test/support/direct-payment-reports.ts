import { readFileSync } from 'node:fs';
import { directCredit, type DirectCredit } from './direct-credit.js';

/** The lookback of a site created without one (`docs/payments.md`, "Customers and attribution"). */
const DEFAULT_LOOKBACK_DAYS = 30;
/** ISO 4217 minor-unit digits of the currencies the inputs may use that do not have 2. */
const EXPONENTS: ReadonlyMap<string, number> = new Map([['JPY', 0]]);
/** The referrer hosts the inputs may use, and their channel; a page view without a referrer is Direct. */
const CHANNEL_OF_REFERRER: ReadonlyMap<string, string> = new Map([['www.google.com', 'Search']]);

/** The USD rate table as shipped (`data/fx/usd-rates.json`): table day → currency → USD per unit. */
function rateTable(): Array<[string, Map<string, number>]> {
  const file = JSON.parse(readFileSync(new URL('../../data/fx/usd-rates.json', import.meta.url), 'utf8')) as {
    rates: { [day: string]: { [currency: string]: number } };
  };
  return Object.entries(file.rates)
    .map(([day, rates]): [string, Map<string, number>] => [day, new Map(Object.entries(rates))])
    .sort(([a], [b]) => a.localeCompare(b));
}

/** One payment as its import lines state it once merged: the last line's fields, the largest refund. */
export interface DirectPayment {
  provider: string;
  id: string;
  ts: number;
  amount: number;
  currency: string;
  refunded: number;
  status: 'paid' | 'refunded' | 'failed';
  customer: string | null;
  visitor: string | null;
  renewal: boolean;
  /** Whole cents. */
  amountCents: number;
  /** Whole cents; 0 for a failed payment. */
  netCents: number;
  credit: DirectCredit;
}

/** What the reports should say about the payments, computed from the import's lines and events alone. */
export interface DirectPaymentReports {
  payments: DirectPayment[];
  overview: {
    payments: number;
    customers: number;
    revenue_usd: number;
    matched_payments: number;
    matched_revenue_usd: number;
    converted: number;
  };
  /** Per channel of the credited visit (Unattributed for none): payments, customers, revenue. */
  channels: Array<{ label: string; payments: number; customers: number; revenue_usd: number }>;
  /** The most distinct payers of counted payments in one UTC calendar month. */
  busiestMonthPayers: number;
  /** Retention's cohorts by the channel of each customer's first payment. */
  retention: Array<{
    label: string;
    customers: number;
    first_payment_usd: number;
    refunded_usd: number;
    net_ltv_usd: number;
  }>;
}

interface LineFields {
  provider: string;
  provider_payment_id: string;
  ts: string;
  amount: number;
  currency: string;
  refunded?: number;
  status?: 'paid' | 'refunded' | 'failed';
  customer_id?: string | null;
  visitor_id?: string | null;
  is_renewal?: boolean;
}

/** Sums whole cents into dollars, as the reports show money. */
const dollars = (cents: number) => cents / 100;

/**
 * The payment reports of a site that received `events` (`import events`
 * lines, one page view a visit, each visitor's only visit or visits) and
 * then `lines` (`import payments` lines, a payment's later refund a line of
 * its own), computed directly from the documented rules, not through the
 * importer (`docs/payments.md`: "Statuses", "Money", "Customers and
 * attribution"; `docs/retention.md`, "Who is counted", "Formulas"):
 *
 * - a payment's lines merge to the largest `refunded` and to `refunded` when
 *   any line says so; `amount_usd` is the amount in major units times the
 *   shipped table's rate in force on its UTC day, rounded to cents; `net_usd`
 *   scales it by the share not refunded, rounded to cents, and is 0 when failed;
 * - credit by `directCredit` with the site's default model and lookback
 *   (`last_non_direct`, 30 days); a visit's channel from its referrer;
 * - the overview counts payments that did not fail, their distinct payers
 *   (the customer, else the payment), their net revenue, and of those the
 *   credited ones ("matched": every visit is in the range);
 * - retention groups each customer by the channel credited to its first
 *   countable payment (every payment is countable but a failed one).
 *
 * Every payment and visit must lie within the reports' range and before now.
 */
export function directPaymentReports(lines: readonly string[], events: readonly string[]): DirectPaymentReports {
  const table = rateTable();
  const rateOn = (currency: string, day: string) => {
    if (currency === 'USD') return 1;
    const inForce = table.filter(([d, rates]) => d <= day && rates.has(currency)).at(-1) ?? table[0]!;
    const rate = inForce[1].get(currency);
    if (rate === undefined) throw new Error(`no USD rate for ${currency}`);
    return rate;
  };
  const merged = new Map<string, LineFields & { refunded: number }>();
  for (const text of lines) {
    const line = JSON.parse(text) as LineFields;
    const key = `${line.provider}:${line.provider_payment_id}`;
    const before = merged.get(key);
    const status = before?.status === 'refunded' ? 'refunded' : (line.status ?? 'paid');
    merged.set(key, { ...line, status, refunded: Math.max(before?.refunded ?? 0, line.refunded ?? 0) });
  }

  const visits = events.map((text) => {
    const e = JSON.parse(text) as { ts: string; v: string; r?: string };
    const channel = e.r ? CHANNEL_OF_REFERRER.get(new URL(e.r).host) : 'Direct';
    if (!channel) throw new Error(`no channel known for the referrer ${e.r}`);
    return { visitor: e.v, start: Date.parse(e.ts), channel };
  });
  const credits = directCredit(
    visits,
    [...merged.values()].map((l) => ({
      id: `${l.provider}:${l.provider_payment_id}`,
      visitor: l.visitor_id ?? null,
      customer: l.customer_id ?? null,
      ts: Date.parse(l.ts),
      renewal: l.is_renewal ?? false,
      failed: l.status === 'failed',
    })),
    'last_non_direct',
    DEFAULT_LOOKBACK_DAYS,
  );

  const payments = [...merged.entries()].map(([key, l]): DirectPayment => {
    const exponent = EXPONENTS.get(l.currency) ?? 2;
    const ts = Date.parse(l.ts);
    const major = Number((l.amount / 10 ** exponent).toFixed(exponent));
    const usd = Math.round(major * rateOn(l.currency, new Date(ts).toISOString().slice(0, 10)) * 100) / 100;
    const status = l.status ?? 'paid';
    return {
      provider: l.provider,
      id: l.provider_payment_id,
      ts,
      amount: l.amount,
      currency: l.currency,
      refunded: l.refunded,
      status,
      customer: l.customer_id ?? null,
      visitor: l.visitor_id ?? null,
      renewal: l.is_renewal ?? false,
      amountCents: Math.round(usd * 100),
      netCents: status === 'failed' ? 0 : Math.round(((usd * (l.amount - l.refunded)) / l.amount) * 100),
      credit: credits.get(key) ?? null,
    };
  });

  const payerOf = (p: DirectPayment) => `${p.provider}:${p.customer ?? p.id}`;
  const counted = payments.filter((p) => p.status !== 'failed');
  const matched = counted.filter((p) => p.credit !== null);
  const sumCents = (ps: readonly DirectPayment[]) => ps.reduce((sum, p) => sum + p.netCents, 0);
  const labelOf = (credit: DirectCredit) => credit?.channel ?? 'Unattributed';

  const groupBy = (ps: readonly DirectPayment[], keyOf: (p: DirectPayment) => string) => {
    const groups = new Map<string, DirectPayment[]>();
    for (const p of ps) {
      const group = groups.get(keyOf(p));
      if (group) group.push(p);
      else groups.set(keyOf(p), [p]);
    }
    return groups;
  };
  const byChannel = groupBy(counted, (p) => labelOf(p.credit));

  // Each customer's payments, its first (earliest, then by id) deciding its group.
  const byPayer = groupBy(counted, payerOf);
  const cohorts = new Map<string, { customers: number; first: number; refunded: number; net: number }>();
  for (const ps of byPayer.values()) {
    const first = [...ps].sort((a, b) => a.ts - b.ts || a.id.localeCompare(b.id))[0]!;
    const label = labelOf(first.credit);
    const c = cohorts.get(label) ?? { customers: 0, first: 0, refunded: 0, net: 0 };
    cohorts.set(label, {
      customers: c.customers + 1,
      first: c.first + first.netCents,
      refunded: c.refunded + ps.reduce((sum, p) => sum + p.amountCents - p.netCents, 0),
      net: c.net + sumCents(ps),
    });
  }

  const byMonth = groupBy(counted, (p) => new Date(p.ts).toISOString().slice(0, 7));
  return {
    payments,
    busiestMonthPayers: Math.max(0, ...[...byMonth.values()].map((ps) => new Set(ps.map(payerOf)).size)),
    overview: {
      payments: counted.length,
      customers: new Set(counted.map(payerOf)).size,
      revenue_usd: dollars(sumCents(counted)),
      matched_payments: matched.length,
      matched_revenue_usd: dollars(sumCents(matched)),
      converted: new Set(matched.map(payerOf)).size,
    },
    channels: [...byChannel]
      .map(([label, ps]) => ({
        label,
        payments: ps.length,
        customers: new Set(ps.map(payerOf)).size,
        revenue_usd: dollars(sumCents(ps)),
      }))
      .sort((a, b) => a.label.localeCompare(b.label)),
    retention: [...cohorts]
      .map(([label, c]) => ({
        label,
        customers: c.customers,
        first_payment_usd: dollars(c.first),
        refunded_usd: dollars(c.refunded),
        net_ltv_usd: dollars(c.net),
      }))
      .sort((a, b) => a.label.localeCompare(b.label)),
  };
}
