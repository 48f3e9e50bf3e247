/**
 * Test helpers for provider webhooks: read a fixture's raw bytes, and merge
 * payment facts the way the store's contract says (facts.ts: one row per
 * purchase, ids and aliases as one set) so a story of events can be checked
 * to converge.
 */
import { readFileSync } from 'node:fs';
import type { PaymentFact, Provider } from '../../lambdas/domain/payments/facts.js';

/** The fixture file's text, byte for byte: what the provider would have sent as the body. */
export function fixture(provider: Provider, name: string): string {
  return readFileSync(new URL(`../fixtures/payments/${provider}/${name}`, import.meta.url), 'utf8');
}

/** The fixture parsed, for building variants of it. */
export function fixtureJson(provider: Provider, name: string): Record<string, unknown> {
  return JSON.parse(fixture(provider, name)) as Record<string, unknown>;
}

/** A merged payment row: every id it is known by, and the union of its facts. */
export interface MergedPayment {
  ids: string[];
  fact: Omit<PaymentFact, 'id' | 'aliases'>;
}

const STATUS_RANK = { failed: 0, paid: 1, refunded: 2 } as const;

/**
 * The store's merge as facts.ts states it: facts whose id/alias sets meet are
 * one payment (transitively); later facts win field by field, except that
 * the time is the earliest reported, `refunded` only grows and a status never
 * steps back down failed < paid < refunded (a late `failed` delivery cannot
 * undo a success).
 */
export function converge(facts: readonly PaymentFact[]): MergedPayment[] {
  let rows: { ids: Set<string>; fact: Omit<PaymentFact, 'id' | 'aliases'> }[] = [];
  for (const f of facts) {
    const { id, aliases, ...fields } = f;
    const ids = new Set([id, ...aliases]);
    const hits = rows.filter((r) => [...ids].some((x) => r.ids.has(x)));
    rows = rows.filter((r) => !hits.includes(r));
    const merged = { ids, fact: {} as Omit<PaymentFact, 'id' | 'aliases'> };
    for (const part of [...hits.map((h) => h.fact), fields]) {
      const before = merged.fact;
      merged.fact = { ...before, ...part };
      if (before.ts !== undefined && part.ts !== undefined) merged.fact.ts = Math.min(before.ts, part.ts);
      merged.fact.refunded = Math.max(before.refunded ?? 0, part.refunded ?? 0) || undefined;
      if (before.status && part.status && STATUS_RANK[part.status] < STATUS_RANK[before.status])
        merged.fact.status = before.status;
      if (merged.fact.refunded === undefined) delete merged.fact.refunded;
      // A fallback stands in only until the payment's own event states the time (payment.ts mergePaymentFact).
      if (merged.fact.ts !== undefined) delete merged.fact.fallback;
    }
    for (const h of hits) for (const x of h.ids) ids.add(x);
    rows.push(merged);
  }
  return rows.map((r) => ({ ids: [...r.ids].sort(), fact: r.fact }));
}
