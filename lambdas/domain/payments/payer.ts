import type { Customer, SubscriptionState } from './customer.js';
import type { PayerSummary } from '../reports/cohorts.js';

/**
 * The rules that keep a payer's retention items in line with its payments and its customer
 * (`docs/retention.md`, "How it is computed: payer summaries and cohort rollups"; `docs/data-model.md`,
 * "Retention: payer summaries and cohorts"): which revision of a payment's entry counts, which cohort days a payer's summary
 * leaves and touches, and when the site's status sources must learn of a provider. Storage reads
 * the facts and writes what these decide.
 *
 * A payer key is `customerKey` (`contribution.ts`): `<provider>:<customer id>`, or
 * `payment:<provider>:<payment id>` for a payment without a customer.
 */

const NO_CUSTOMER = 'payment:';

/** The provider of a payer key. */
export const payerProvider = (payer: string): string =>
  (payer.startsWith(NO_CUSTOMER) ? payer.split(':')[1] : payer.split(':')[0]) ?? '';

/** The provider's customer id of a payer key (it may hold colons), or null for a payment without a customer. */
export const payerCustomerId = (payer: string): string | null =>
  payer.startsWith(NO_CUSTOMER) ? null : payer.slice(payer.indexOf(':') + 1);

/** A payment's stored payer entry: its revision, `pending` until the payer's summary took it in, its entry JSON (`e`, absent once not countable). */
export interface StoredEntry {
  rev: number;
  pending: boolean;
  entry: string | null;
}

/**
 * What syncing a payment's entry does (`docs/data-model.md`, PAYER_PAYMENT): `none` when no entry
 * is stored and none is wanted (never countable), or a newer revision than the payment's wrote it;
 * `inLine` when the stored entry is the wanted one and its payer's summary took it in; else `write`.
 *
 * @param wanted the payment's entry JSON, null when the payment is not countable
 */
export function entryChange(
  stored: StoredEntry | null,
  rev: number,
  wanted: string | null,
): 'none' | 'inLine' | 'write' {
  if (stored === null) return wanted === null ? 'none' : 'write';
  if (stored.rev > rev) return 'none';
  return !stored.pending && stored.entry === wanted ? 'inLine' : 'write';
}

/** Where a payer's cohort member moves: from the days its state holds (`held`) to its summary's day (null: none). */
export interface MemberMove {
  /** Held days other than the summary's: their member items go. */
  left: string[];
  /** Every day left or joined, sorted: their cohorts are recomputed. */
  days: string[];
}

/** The cohort days a payer's summary leaves and touches (`held`: the days its member items may stand on). */
export function memberMove(held: Iterable<string>, day: string | null): MemberMove {
  const before = new Set(held);
  return {
    left: [...before].filter((d) => d !== day).sort(),
    days: [...new Set([...before, ...(day !== null ? [day] : [])])].sort(),
  };
}

/** Whether a payer's state holds exactly its summary's day (or no day without a summary): no member item is to move. */
export function heldInLine(held: readonly string[], day: string | null): boolean {
  return held.length === (day === null ? 0 : 1) && held.every((d) => d === day);
}

/** What a payer's recompute read: its summary and its customer's subscription statuses. */
export interface PayerFacts {
  summary: PayerSummary | null;
  statuses: SubscriptionState[];
  customerExists: boolean;
}

/**
 * Whether the site's status sources (`p_<provider>`: true once it sent a subscription status)
 * already say what a payer implies: a payer with a summary or a customer makes its provider a
 * source, one with subscription statuses a source of statuses. Sources only grow
 * (`docs/retention.md`, `status_sources` under "How it is computed").
 */
export function sourcesInLine(
  provider: string,
  facts: PayerFacts,
  sources: Readonly<Record<string, boolean>>,
): boolean {
  if (facts.summary === null && !facts.customerExists) return true;
  return provider in sources && (facts.statuses.length === 0 || sources[provider] === true);
}

/** A customer's subscription statuses (none without a customer). */
export const statusesOf = (customer: Customer | undefined): SubscriptionState[] =>
  Object.values(customer?.subscriptions ?? {});

/** The status sources of a set of customers: each one's provider, true when any of that provider's sent a status. */
export function statusSources(customers: readonly Customer[]): Map<string, boolean> {
  const sources = new Map<string, boolean>();
  for (const c of customers)
    sources.set(c.provider, (sources.get(c.provider) ?? false) || Object.keys(c.subscriptions).length > 0);
  return sources;
}
