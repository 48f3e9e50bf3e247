import { unpackDimension } from '../../lambdas/adapters/dynamo/payments/payment-counter-codec.js';

/**
 * What "the same items" means when a bulk path's table is compared with
 * the table the stack's write paths leave (`test/bench/bench-site.test.ts`,
 * `test/payments/bulk-load-chunks.test.ts`): bookkeeping of the write paths
 * (the rollup log's state, the list's and the cohorts' change counters and
 * the recompute guard `src`, rollup `seq`/`ver`, a payer's recompute
 * counter), payment aliases (webhook lookups no report reads) and batch
 * markers are left out; JSON attributes are compared parsed (a
 * PAYMENT_DIMENSION item's counters as `v`, packed or not), visitor id
 * sets sorted, and a rollup's values back at 0 left out (a value a visit
 * moved away from, such as its former exit page, stays stored at 0, which
 * no report shows: `docs/data-model.md` ROLLUP).
 */
export const BOOKKEEPING = new Set([
  'ROLLUP_LOG_STATE',
  'PAYMENT_ALIAS',
  'PAYMENT_CHANGE',
  'COHORT_CHANGE',
  'BATCH_MARKER',
  'RECENT_PAYMENT_MARK',
]);
const DROPPED_ATTRIBUTES = ['src', 'seq', 'ver'];
/** Change counters kept on data items of some types (retention's payer state counts its recomputes). */
const COUNTERS: Record<string, string[]> = { PAYER_STATE: ['n', 'pend'] };

/** An item in a form where equal meaning is equal value: JSON attributes parsed, visitor id sets sorted, bookkeeping attributes dropped. */
export function normalize(item: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) {
    if (DROPPED_ATTRIBUTES.includes(k) || COUNTERS[String(item.type)]?.includes(k)) continue;
    if (item.type === 'PAYMENT_DIMENSION' && (k === 'v' || k === 'vz')) {
      out.v = dimensionValues(item);
      continue;
    }
    let value: unknown = v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v;
    if (typeof value === 'string' && /^[[{]/.test(value)) value = JSON.parse(value);
    if (item.type === 'ROLLUP' && k === 'ids') value = [...(value as string[])].sort();
    if (item.type === 'ROLLUP' && k === 'counts') value = liveCounts(value as Record<string, number>);
    if (item.type === 'ROLLUP' && k === 'vv')
      value = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([g, s]) => [g, Array.isArray(s) ? [...s].sort() : s]),
      );
    out[k] = value;
  }
  return out;
}

/**
 * A rollup's visits per value without the values back at 0: a value a visit moved away from (its
 * former exit page) stays stored at 0, which no report shows, so runs whose batch boundaries differ
 * hold the same figures whether or not they kept it (`docs/data-model.md` ROLLUP).
 */
export const liveCounts = (counts: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0));

/** A PAYMENT_DIMENSION item's counters, packed (`vz` as bytes, or in base64 as `scanAll` gives it) or in the older JSON `v`. */
export const dimensionValues = (item: Record<string, unknown>) =>
  unpackDimension(typeof item.vz === 'string' ? { vz: Buffer.from(item.vz, 'base64') } : item);

/** A PAYMENT_DIMENSION item of a bucket without payments: the bulk recompute writes every bucket of a day, a webhook only those it touched. */
export const emptyDimension = (item: Record<string, unknown>) =>
  item.type === 'PAYMENT_DIMENSION' && Object.keys(dimensionValues(item)).length === 0;

/** Whether an item takes part in the comparison: not bookkeeping, not an empty dimension bucket. */
export const compared = (item: Record<string, unknown>) =>
  !BOOKKEEPING.has(String(item.type ?? '')) && !emptyDimension(item);

/**
 * A PAYMENT_ALIAS of a payment's own id: the webhook path writes one, an import does not (its PAYMENT
 * item answers for the id, `PaymentRecords.aliasTargets`), so tables compared across the two leave
 * it out; every other alias must match.
 */
export const ownAlias = (item: Record<string, unknown>) => item.type === 'PAYMENT_ALIAS' && item.sk === item.payment_id;
