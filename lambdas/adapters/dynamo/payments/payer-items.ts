import { PK, SK } from '../table.js';
import { PARTITIONS } from '../items.js';
import { PROVIDERS, type Provider } from '../../../domain/payments/facts.js';
import type { StoredEntry } from '../../../domain/payments/payer.js';
import type { PayerPayment, PayerSummary } from '../../../domain/reports/cohorts.js';

/**
 * The payer partition `CP#<site>` (`docs/data-model.md`, "Retention: payer summaries and cohorts"):
 *
 * - PAYER_PAYMENT `<payer id>P#<provider:id>`: one countable payment of a payer (`PayerPayment`
 *   as JSON, `e`), with the payment's `rev`; a payment that stopped being countable keeps its key
 *   without `e` (so an older revision cannot bring it back). `pending` until the payer's summary
 *   took it in. ≤ 1 KB (a campaign and a referrer host of the credit).
 * - PAYER_STATE `<payer id>S`: the payer's change counter `n`, the cohort days its member items
 *   may stand on (`held`, a string set of at most two days while a move runs, one after), `pend`
 *   while a recompute runs. < 200 B.
 *
 * `<payer id>` is the payer key (`customerKey`) with its length in front, `<length>:<payer>#`, so
 * no payer's prefix is another's and a payer's items are contiguous.
 */
export const payerPk = (site: string) => PARTITIONS.payer.key(site);
const { PAYER_PAYMENT, PAYER_STATE } = PARTITIONS.payer.items;

/** The key of a payer's PAYER_PAYMENT item for a payment (`provider:id`). */
export const entryKey = (site: string, payer: string, paymentKey: string) => ({
  [PK]: payerPk(site),
  [SK]: PAYER_PAYMENT.key(payer, paymentKey),
});

/** The key of a payer's PAYER_STATE item. */
export const stateKey = (site: string, payer: string) => ({ [PK]: payerPk(site), [SK]: PAYER_STATE.key(payer) });

/** The sort key prefix of a payer's PAYER_PAYMENT items. */
export const entriesPrefix = (payer: string) => PAYER_PAYMENT.range.of(payer);

/** The payer key of a PAYER_PAYMENT or PAYER_STATE sort key (`<length>:<payer>#…`). */
export function payerOfSk(sk: string): string {
  const colon = sk.indexOf(':');
  return sk.slice(colon + 1, colon + 1 + Number(sk.slice(0, colon)));
}

/**
 * A PAYER_PAYMENT item: `entry` the payment's entry (null once not countable), `pending` unless a
 * batch marked the payer's state instead.
 */
export function entryItem(
  site: string,
  payer: string,
  paymentKey: string,
  rev: number,
  entry: PayerPayment | string | null,
  pending: boolean,
): Record<string, unknown> {
  return {
    ...entryKey(site, payer, paymentKey),
    type: 'PAYER_PAYMENT',
    rev,
    ...(pending ? { pending: 1 } : {}),
    ...(entry !== null ? { e: typeof entry === 'string' ? entry : JSON.stringify(entry) } : {}),
  };
}

/** A stored PAYER_PAYMENT item as `entryChange` compares it. */
export const storedEntryOf = (item: Record<string, unknown>): StoredEntry => ({
  rev: Number(item.rev),
  pending: Boolean(item.pending),
  entry: typeof item.e === 'string' ? item.e : null,
});

/** The entry of a PAYER_PAYMENT item, or null when the payment is no longer countable. */
export const entryOf = (item: Record<string, unknown>): PayerPayment | null =>
  typeof item.e === 'string' ? (JSON.parse(item.e) as PayerPayment) : null;

/** The payment (`provider`, `id`) of a PAYER_PAYMENT sort key under `prefix`; null for an unknown provider. */
export function paymentOfSk(sk: string, prefix: string): { provider: Provider; id: string } | null {
  // `<provider>:<id>`: a provider name has no colon, an id may.
  const key = sk.slice(prefix.length);
  const colon = key.indexOf(':');
  const provider = PROVIDERS.find((name) => name === key.slice(0, colon));
  return provider ? { provider, id: key.slice(colon + 1) } : null;
}

/** The days a PAYER_STATE item holds (`held`). */
export const heldOf = (item: Record<string, unknown> | undefined): string[] => [
  ...((item?.held as Set<string> | undefined) ?? []),
];

/** A settled PAYER_STATE item (as a bulk load writes it): counter 0, holding its summary's day, if any. */
export const stateItem = (site: string, payer: string, summary: PayerSummary | null): Record<string, unknown> => ({
  ...stateKey(site, payer),
  type: 'PAYER_STATE',
  n: 0,
  ...(summary ? { held: new Set([summary.day]) } : {}),
});
