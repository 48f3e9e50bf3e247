import { rng } from '../local/demo/workload.js';
/** A desktop Chrome (the visits' browser; any real one would do). */
const CHROME_UA_BENCH =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

const DAY = 86_400_000;
const CURRENCIES = [
  ['USD', 2900],
  ['EUR', 2700],
  ['GBP', 2300],
  ['JPY', 4500],
] as const;

/** A year of payments as `footfall import payments` lines, and the page views of the visits that earned them. */
export interface PaymentMix {
  /** JSON lines, one per payment, plus one per later refund of a paid one (the same id, `refunded` raised). */
  lines: string[];
  /** Distinct payments the lines name. */
  payments: number;
  /** `import events` lines for the visitors whose visits are in before the payments. */
  events: string[];
}

/**
 * The import's stated mix (`docs/benchmarks.md`, "Import"): customers buying
 * a monthly subscription in one of four currencies (USD, EUR, GBP, JPY) and
 * renewing until they churn (1 in 8 a month); 4% of renewals fail; 5% of
 * paid payments are refunded later in part and 2% in full, each refund a
 * second line of the same payment; 1 payment in 10 is a one-off without a
 * customer. Three in four customers carry a visitor id: of those, four in
 * five have their visit (a Search or Direct page view on the day before the
 * purchase) imported before the payments, the rest come later (payments
 * imported before their visits). Payments are spread over the year before
 * `endMs`, in the lines' order by time.
 */
export function paymentMix(payments: number, endMs: number, seed = 35): PaymentMix {
  const rnd = rng(seed);
  const start = endMs - 365 * DAY;
  const rows: Array<{ ts: number; line: Record<string, unknown> }> = [];
  const events: string[] = [];
  let n = 0;
  let customer = 0;
  while (n < payments) {
    const id = `pi_${n}`;
    if (rnd() < 0.1) {
      const [currency, amount] = CURRENCIES[Math.floor(rnd() * CURRENCIES.length)]!;
      rows.push({
        ts: start + rnd() * 365 * DAY,
        line: { provider: 'stripe', provider_payment_id: id, amount, currency },
      });
      n++;
      continue;
    }
    const c = customer++;
    const [currency, amount] = CURRENCIES[c % CURRENCIES.length]!;
    const visitor = rnd() < 0.75 ? `v${String(c).padStart(10, '0')}` : null;
    let ts = start + rnd() * 330 * DAY;
    if (visitor && rnd() < 0.8) {
      const search = rnd() < 0.5;
      events.push(
        JSON.stringify({
          n: 'pageview',
          u: `https://bench.example/${search ? 'search' : 'direct'}`,
          ts: new Date(ts - DAY).toISOString(),
          v: visitor,
          ua: CHROME_UA_BENCH,
          ...(search ? { r: 'https://www.google.com/' } : {}),
        }),
      );
    }
    for (let month = 0; n < payments && ts < endMs; month++, ts += 30 * DAY) {
      const renewal = month > 0;
      const failed = renewal && rnd() < 0.04;
      const pid = `pi_${n++}`;
      const base = {
        provider: 'stripe',
        provider_payment_id: pid,
        amount,
        currency,
        status: failed ? 'failed' : 'paid',
        customer_id: `cus_${c}`,
        ...(visitor ? { visitor_id: visitor } : {}),
        is_renewal: renewal,
        subscription_id: `sub_${c}`,
      };
      rows.push({ ts, line: base });
      // A failed payment moved no money: nothing to refund.
      const refund = failed ? 1 : rnd();
      if (refund < 0.05)
        rows.push({
          ts: ts + 3 * DAY,
          line: { ...base, refunded: refund < 0.02 ? amount : Math.floor(amount / 2), payment_ts: ts },
        });
      if (rnd() < 0.125) break;
    }
  }
  rows.sort((a, b) => a.ts - b.ts);
  const lines = rows.map(({ ts, line }) => {
    const { payment_ts, refunded, ...rest } = line as { payment_ts?: number; refunded?: number };
    const full = refunded !== undefined && refunded === (rest as { amount: number }).amount;
    return JSON.stringify({
      ...rest,
      ts: new Date(payment_ts ?? ts).toISOString(),
      ...(refunded !== undefined ? { refunded, status: full ? 'refunded' : 'paid' } : {}),
    });
  });
  return { lines, payments: n, events };
}
