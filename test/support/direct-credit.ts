import type { AttributionModel } from '../../lambdas/domain/site.js';

const DAY = 86_400_000;

/** A visit as a direct computation sees it: its visitor, start (ms since epoch) and channel. */
export interface CreditVisit {
  visitor: string;
  start: number;
  channel: string;
}

/** A payment as a direct computation sees it: its id, visitor, payer, time (ms since epoch) and whether it renews. */
export interface CreditPayment {
  id: string;
  visitor: string | null;
  /** The provider's customer id; null for a one-off payment without one. */
  customer: string | null;
  ts: number;
  renewal: boolean;
  /** A failed attempt: it inherits no credit and lends none (docs/payments.md). */
  failed?: boolean;
}

/** The visit a payment is credited to: its start (ms since epoch) and channel; null when unattributed. */
export type DirectCredit = { start: number; channel: string } | null;

/**
 * The visit each payment should be credited to, computed from the inputs
 * alone, for tests to hold the importer and the webhooks to
 * (`docs/payments.md`, "Customers and attribution"): among the payment's
 * visitor's visits that started at most `lookbackDays` before the payment
 * and not after it, the model's pick (`first_touch` the earliest,
 * `last_touch` the latest, `last_non_direct` the latest that is not Direct,
 * else the latest); a renewal inherits the credit of its customer's first
 * attributed purchase, and a failed payment is credited by its own visitor
 * alone and is never the customer's credit. Payments are taken in credit order (purchases before
 * renewals, then by time, then id). Keyed by payment id.
 */
export function directCredit(
  visits: readonly CreditVisit[],
  payments: readonly CreditPayment[],
  model: AttributionModel,
  lookbackDays: number,
): Map<string, DirectCredit> {
  const byVisitor = new Map<string, CreditVisit[]>();
  for (const v of visits) {
    const own = byVisitor.get(v.visitor);
    if (own) own.push(v);
    else byVisitor.set(v.visitor, [v]);
  }
  for (const vs of byVisitor.values()) vs.sort((a, b) => a.start - b.start);
  const pick = (visitor: string | null, ts: number): DirectCredit => {
    if (!visitor) return null;
    const window = (byVisitor.get(visitor) ?? []).filter((v) => v.start <= ts && v.start >= ts - lookbackDays * DAY);
    const chosen =
      model === 'first_touch'
        ? window[0]
        : model === 'last_touch'
          ? window.at(-1)
          : ([...window].reverse().find((v) => v.channel !== 'Direct') ?? window.at(-1));
    return chosen ? { start: chosen.start, channel: chosen.channel } : null;
  };
  const ordered = [...payments].sort(
    (a, b) => Number(a.renewal) - Number(b.renewal) || a.ts - b.ts || a.id.localeCompare(b.id),
  );
  const out = new Map<string, DirectCredit>();
  const firstCredit = new Map<string, DirectCredit>();
  for (const p of ordered) {
    const inherited = p.customer ? firstCredit.get(p.customer) : undefined;
    const credit = p.renewal && inherited && !p.failed ? inherited : pick(p.visitor, p.ts);
    if (!p.renewal && !p.failed && p.customer && credit && !firstCredit.has(p.customer))
      firstCredit.set(p.customer, credit);
    out.set(p.id, credit);
  }
  return out;
}
