import { namespaceOf, writeTargets, type SiteConfig } from '../domain/site.js';
import { aliasRef, type PaymentFact, type Provider, type ProviderFacts } from '../domain/payments/facts.js';
import { emptyPayment, mergePaymentFact, paymentChanged, type Payment } from '../domain/payments/payment.js';
import { emptyCustomer, withSubscription, type Customer } from '../domain/payments/customer.js';
import { customerKey, paymentKey } from '../domain/payments/contribution.js';
import type { Visit } from '../domain/visit.js';
import type {
  BulkLoadStep,
  CustomerBulk,
  PaymentBulkLoads,
  PaymentRecordBulk,
  PaymentTimelineBulk,
  PendingCreditBulk,
  VisitStore,
} from '../ports.js';
import { inParallel, writeBehind } from '../domain/parallel.js';
import {
  PENDING_CREDIT_MS,
  attribute,
  creditOrder,
  customerAfter,
  positionsOf,
  settlePayment,
  updateCustomer,
  type PaymentDeps,
} from './payments.js';

/** What `importPayments` needs beyond the per-payment path's ports: each family's bulk writes, and the bulk load. */
export type PaymentImportDeps = PaymentDeps & {
  payments: PaymentRecordBulk;
  customers: CustomerBulk;
  timeline: PaymentTimelineBulk;
  pending: PendingCreditBulk;
  bulk: PaymentBulkLoads;
};

/**
 * The import's phases, in order; `reading payments` is the caller's (the lines parsed so far). `storing
 * payments` writes the PAYMENT, alias and CUSTOMER items (new payments' PAYMENT and alias items from
 * `crediting payments` on), `writing payments` the derived items of each chunk
 * (list, timeline copies, payer entries), `recomputing days` the visitors' markers and each day and month
 * touched, `recomputing cohorts` the payers' summaries and cohorts. Each is reported as it begins, so a
 * crash test can stop the import in any of them (`test/reliability/import-payments-crash.test.ts`).
 */
export type PaymentImportPhase =
  | 'reading payments'
  | 'crediting payments'
  | 'storing payments'
  | 'writing payments'
  | 'recomputing days'
  | 'recomputing cohorts';

export interface PaymentImportProgress {
  phase: PaymentImportPhase;
  /** Payments credited, stored or written so far (all of them in the recomputing phases). */
  done: number;
  total: number;
  /** `done / total`, 0..1; null in the recomputing phases, which count no payments. */
  fraction: number | null;
}

export interface PaymentImportOptions {
  /** Payments credited at once (their visits read in parallel); default 16. */
  concurrency?: number;
  /** Payments per bulk-load chunk; default 1,000. */
  chunk?: number;
  onProgress?: (progress: PaymentImportProgress) => void;
}

export interface PaymentImportOutcome {
  /** Payments (distinct rows) the facts name. */
  payments: number;
  /** Of those, settled one by one (`settlePayment`) rather than in bulk: linked to two stored rows, or changed meanwhile. */
  settledOneByOne: number;
}

const FAR_FUTURE_MS = 9_999_999_999_999;

/** New payments handed to `bulkPutPayments` at once while crediting goes on (about 1 KB each). */
const NEW_PAYMENTS_BUFFER = 500;

/** The progress phase of each step of the bulk loader's `finish`. */
const RECOMPUTE_PHASES: Readonly<Record<BulkLoadStep, PaymentImportPhase>> = {
  days: 'recomputing days',
  cohorts: 'recomputing cohorts',
};

/** Thrown when a site cannot take a bulk import now; the CLI shows the message. */
export class PaymentImportError extends Error {}

/**
 * Imports many payments' facts (`footfall import payments`, `docs/payments.md`
 * "Importing historic payments") with the results of applying them one by one
 * through `applyProviderFacts`, at bulk speed: the facts are merged per
 * payment in memory (in their order, as `mergePaymentFact` would one by one),
 * every payment is credited in credit order (first payments before renewals,
 * then by time; customers updated as `settlePayment` does), and the items are
 * written with BatchWriteItem: PAYMENT, PAYMENT_ALIAS (a new payment's while
 * the others are still credited) and CUSTOMER items,
 * then the derived items through `PaymentBulkLoads.bulkLoader` (the
 * loader the report benchmark and `footfall rebuild` use), which recomputes
 * every day and month touched, and the payers' cohorts, from the table, so
 * payments already stored count too.
 *
 * Idempotent and resumable: a rerun after a crash anywhere reads back what
 * was stored, merges the same facts (no change), and writes every derived
 * item of the imported payments again, unconditionally; positions a changed
 * payment left stay on it (`unlisted`) until their days are recomputed.
 * Payments already stored are written conditionally on their `rev`; one that
 * changed meanwhile, or that links two stored rows, is settled one by one
 * after the bulk. The list and cohorts are written as `bulkLoader` writes
 * them: a webhook for the same payments during the import may race (as with
 * `footfall rebuild`). Memory holds every payment of the import.
 *
 * @throws PaymentImportError while a rebuild of the site runs (its generation is being derived in bulk)
 */
export async function importPayments(
  deps: PaymentImportDeps,
  site: SiteConfig,
  facts: readonly ProviderFacts[],
  options: PaymentImportOptions = {},
): Promise<PaymentImportOutcome> {
  const targets = writeTargets(site);
  if (targets.length > 1)
    throw new PaymentImportError(
      `a rebuild of ${site.domain} is running: import payments once it switched (footfall rebuild --site ${site.domain})`,
    );
  return importInto(deps, site, facts, options);
}

/** The payments of the import by canonical id, with their facts in order, and those to settle one by one. */
interface Grouped {
  byId: Map<string, { provider: Provider; id: string; facts: PaymentFact[] }>;
  oneByOne: PaymentFact[];
  /** Keys (`aliasRef`) of `byId` whose row some id named is stored: the others are new, with nothing to read. */
  stored: Set<string>;
}

/** Groups payment facts by the stored row (or the row they start) their ids point at. */
async function groupFacts(deps: PaymentImportDeps, ns: string, facts: readonly PaymentFact[]): Promise<Grouped> {
  const stored = await deps.payments.aliasTargets(
    ns,
    facts.flatMap((f) => [f.id, ...f.aliases].map((id) => ({ provider: f.provider, id }))),
  );
  // Ids first seen in this import point at the row their first fact starts.
  const fresh = new Map<string, string>();
  const byId = new Map<string, { provider: Provider; id: string; facts: PaymentFact[] }>();
  const tainted = new Set<string>();
  const oneByOne: PaymentFact[] = [];
  const known = new Set<string>();
  for (const fact of facts) {
    const refs = [fact.id, ...fact.aliases].map((id) => aliasRef(fact.provider, id));
    const rows = [...new Set(refs.map((r) => stored.get(r) ?? fresh.get(r)).filter((r) => r !== undefined))].sort();
    const id = rows[0] ?? fact.id;
    const key = aliasRef(fact.provider, id);
    if (rows.length > 1 || rows.some((r) => tainted.has(aliasRef(fact.provider, r)))) {
      // Two rows to fold: `settlePayment` does it, for this fact and every fact of those rows.
      for (const r of rows) {
        const k = aliasRef(fact.provider, r);
        tainted.add(k);
        oneByOne.push(...(byId.get(k)?.facts ?? []));
        byId.delete(k);
      }
      oneByOne.push(fact);
      continue;
    }
    for (const r of refs) if (!stored.has(r)) fresh.set(r, id);
    if (refs.some((r) => stored.has(r))) known.add(key);
    const group = byId.get(key) ?? { provider: fact.provider, id, facts: [] };
    group.facts.push(fact);
    byId.set(key, group);
  }
  return { byId, oneByOne, stored: known };
}

/** Reads each visitor's visits once (one Query of the partition), then answers `attribute`'s reads from memory. */
function cachedVisits(deps: PaymentDeps): { visits: Pick<VisitStore, 'visitsAround' | 'firstVisit'> } {
  const all = new Map<string, Promise<Visit[]>>();
  const visitsOf = (site: string, visitor: string) => {
    const key = `${site}\u0000${visitor}`;
    let got = all.get(key);
    if (!got) {
      got = deps.visits
        .visitsAround(site, visitor, 0, FAR_FUTURE_MS)
        .then((vs) => [...vs].sort((a, b) => a.start - b.start));
      all.set(key, got);
    }
    return got;
  };
  return {
    visits: {
      // The same selection as the store's: visits ending at or after `from` and starting at or before `to`.
      visitsAround: async (site, visitor, from, to) =>
        (await visitsOf(site, visitor)).filter((v) => v.end >= from && v.start <= to).reverse(),
      firstVisit: async (site, visitor) => (await visitsOf(site, visitor))[0] ?? null,
    },
  };
}

async function importInto(
  deps: PaymentImportDeps,
  site: SiteConfig,
  facts: readonly ProviderFacts[],
  options: PaymentImportOptions,
): Promise<PaymentImportOutcome> {
  const ns = namespaceOf(site);
  const rate = await deps.rates();
  const now = deps.clock();

  const { byId, oneByOne, stored } = await groupFacts(
    deps,
    ns,
    facts.flatMap((f) => f.payments),
  );
  // A row none of whose ids was found stored (no alias, no PAYMENT item) is new: only the others are read.
  const storedRows = [...byId].filter(([key]) => stored.has(key)).map(([, g]) => g);
  const before = new Map(
    (await deps.payments.getPayments(storedRows.map((g) => ({ site: ns, provider: g.provider, id: g.id })))).map(
      (p) => [aliasRef(p.provider, p.provider_payment_id), p],
    ),
  );

  // Customers: the stored ones, then every customer and subscription fact in order (as `applyFactsTo`).
  const customers = new Map<string, Customer>();
  for (const c of await deps.customers.listCustomers(ns)) customers.set(aliasRef(c.provider, c.customer_id), c);
  const storedCustomers = new Map(customers);
  const customerOf = (provider: Provider, id: string) =>
    customers.get(aliasRef(provider, id)) ?? emptyCustomer(ns, provider, id);
  const changes = new Map<string, Array<(c: Customer) => Customer>>();
  const change = (provider: Provider, id: string, fn: (c: Customer) => Customer) => {
    const key = aliasRef(provider, id);
    const current = customerOf(provider, id);
    const next = fn(current);
    if (next === current) return;
    customers.set(key, next);
    changes.set(key, [...(changes.get(key) ?? []), fn]);
  };
  const statusOnly = new Set<string>();
  for (const f of facts) {
    for (const c of f.customers) {
      change(c.provider, c.customer_id, (cur) =>
        cur.metadata_visitor === c.visitor_id ? cur : { ...cur, metadata_visitor: c.visitor_id },
      );
      statusOnly.add(aliasRef(c.provider, c.customer_id));
    }
    for (const s of f.subscriptions) {
      if (!s.customer_id) continue;
      change(s.provider, s.customer_id, (cur) =>
        withSubscription(cur, s.subscription_id, { status: s.status, paying: s.paying, ts: s.ts }),
      );
      statusOnly.add(aliasRef(s.provider, s.customer_id));
    }
  }

  // Every payment merged, then credited in credit order; a customer's payments one after another.
  const merged = [...byId.entries()].map(([key, g]) => {
    const current = before.get(key) ?? null;
    const base = current ?? emptyPayment(ns, g.provider, g.id);
    const payment = g.facts.reduce(
      (p, f) => mergePaymentFact(p, { ...f, id: g.id, aliases: [...f.aliases, f.id] }),
      base,
    );
    return { current, payment };
  });
  merged.sort((a, b) => creditOrder(a.payment, b.payment));
  const byPayer = new Map<string, typeof merged>();
  for (const m of merged) byPayer.set(customerKey(m.payment), [...(byPayer.get(customerKey(m.payment)) ?? []), m]);
  const visits = cachedVisits(deps);
  const settled: Array<{ current: Payment | null; payment: Payment }> = [];
  let credited = 0;
  const total = merged.length;
  const report = (phase: PaymentImportPhase, done: number, counted = true) =>
    options.onProgress?.({ phase, done, total, fraction: !counted ? null : total === 0 ? 1 : done / total });
  // New payments' PAYMENT items are written while the others are credited (nothing reads them meanwhile,
  // and a rerun finds them unchanged): the store works while this thread credits.
  const newPayments = writeBehind(NEW_PAYMENTS_BUFFER, (ps: Payment[]) => deps.payments.bulkPutPayments(ps));
  await inParallel([...byPayer.values()], options.concurrency ?? 16, async (payments) => {
    for (const { current, payment: m } of payments) {
      const customer = m.customer_id ? (customers.get(aliasRef(m.provider, m.customer_id)) ?? null) : null;
      const c = await attribute(visits, site, m, customer);
      const held = new Set(positionsOf(deps.list, c, site.timezone, rate));
      const left = current ? positionsOf(deps.list, current, site.timezone, rate).filter((pos) => !held.has(pos)) : [];
      const unlisted = [...new Set([...(c.unlisted ?? []), ...left])];
      const candidate: Payment = { ...c, ...(unlisted.length > 0 ? { unlisted } : {}) };
      if (unlisted.length === 0) delete candidate.unlisted;
      const changed = !current || paymentChanged(current, candidate);
      const payment = { ...candidate, rev: changed ? (current?.rev ?? 0) + 1 : (current?.rev ?? 0) };
      if (payment.customer_id) change(payment.provider, payment.customer_id, (cur) => customerAfter(cur, payment));
      settled.push({ current, payment });
      if (!current) await newPayments.add(payment);
      if (++credited % 1000 === 0) report('crediting payments', credited);
    }
  });
  report('crediting payments', credited);
  report('storing payments', 0);

  // Timeline copies that moved go first: a crash after it leaves the stored payment to point at them again.
  const moved = settled.filter(
    ({ current, payment }) => current?.visitor && (current.visitor !== payment.visitor || current.ts !== payment.ts),
  );
  await deps.timeline.bulkDropTimelineCopies(moved.map((m) => m.current!));
  for (const { current, payment } of settled)
    if (current && customerKey(current) !== customerKey(payment))
      await deps.payers.dropPayment(ns, site.timezone, customerKey(current), paymentKey(current), now);

  // PAYMENT items: new ones in bulk (most already written), changed ones on their revision; a lost race is settled one by one.
  await newPayments.done();
  const lost = new Set<string>();
  for (const { current, payment } of settled) {
    if (!current || payment.rev === current.rev) continue;
    if (await deps.payments.putPayment(payment, current.rev))
      await deps.payments.linkAliases(ns, payment.provider, payment.provider_payment_id, payment.aliases, false);
    else lost.add(aliasRef(payment.provider, payment.provider_payment_id));
  }

  // Customers: new ones in bulk, changed ones on their version (a lost race replays this import's changes).
  const fresh: Customer[] = [];
  for (const [key, fns] of changes) {
    const next = customers.get(key)!;
    const stored = storedCustomers.get(key);
    if (!stored) fresh.push({ ...next, ver: 1 });
    else if (!(await deps.customers.putCustomer({ ...next, ver: stored.ver + 1 })))
      await updateCustomer(deps, ns, next.provider, next.customer_id, (c) => fns.reduce((acc, fn) => fn(acc), c));
  }
  await deps.customers.bulkLoadCustomers(fresh);

  // Pending credits: as `settlePayment` marks and clears them.
  const kept = settled.filter((s) => !lost.has(aliasRef(s.payment.provider, s.payment.provider_payment_id)));
  const pending = new Set((await deps.pending.listPending(ns)).map((p) => aliasRef(p.provider, p.id)));
  const waiting = (p: Payment) =>
    p.visitor !== null && p.touch === null && p.ts !== null && now - p.ts < PENDING_CREDIT_MS;
  await deps.pending.bulkPending(
    ns,
    kept
      .filter((s) => waiting(s.payment))
      .map((s) => ({ payment: s.payment, until: (s.payment.ts ?? 0) + PENDING_CREDIT_MS })),
    kept
      .filter((s) => !waiting(s.payment) && pending.has(aliasRef(s.payment.provider, s.payment.provider_payment_id)))
      .map((s) => s.payment),
  );
  report('storing payments', total);

  // The derived items, by the bulk loader: list, timeline copies, payers; then each day, month and cohort once.
  const load = deps.bulk.bulkLoader(ns, site.timezone, rate, {
    writePayments: false,
    now,
    raiseMarkers: true,
  });
  report('writing payments', 0);
  await load.unlist(kept.flatMap((s) => s.payment.unlisted ?? []));
  const chunk = options.chunk ?? 1000;
  for (let i = 0; i < kept.length; i += chunk) {
    await load.add(kept.slice(i, i + chunk).map((s) => s.payment));
    report('writing payments', Math.min(i + chunk, kept.length));
  }
  await load.finish((step) => report(RECOMPUTE_PHASES[step], kept.length, false));
  for (const { payment } of kept) if (payment.unlisted?.length) await deps.payments.clearUnlisted(payment);

  // Customers whose statuses changed with no payment in the import: their payer summaries.
  const payers = new Set(kept.map((s) => customerKey(s.payment)));
  for (const key of statusOnly) {
    const c = customers.get(key);
    if (c && !payers.has(`${c.provider}:${c.customer_id}`))
      await deps.payers.syncCustomer(ns, site.timezone, c.provider, c.customer_id, now);
  }

  // Customers whose credit moved (an imported purchase earlier than the stored ones): their stored payments
  // outside the import follow it, credited again one by one in credit order, as `settlePayment` does.
  for (const [key, c] of customers) {
    const stored = storedCustomers.get(key);
    if (!stored || JSON.stringify(stored.credit) === JSON.stringify(c.credit)) continue;
    const outside = (await deps.payers.payerPaymentKeys(ns, `${c.provider}:${c.customer_id}`)).filter(
      (k) => !byId.has(aliasRef(k.provider, k.id)),
    );
    const others = await deps.payments.getPayments(outside.map((k) => ({ site: ns, provider: k.provider, id: k.id })));
    for (const p of others.sort(creditOrder)) await settlePayment(deps, site, p.provider, null, p.provider_payment_id);
  }

  // Last, one by one: facts linking stored rows, and payments another writer changed meanwhile.
  const again = [...oneByOne, ...[...byId.entries()].filter(([key]) => lost.has(key)).flatMap(([, g]) => g.facts)];
  for (const fact of again) await settlePayment(deps, site, fact.provider, fact);
  return {
    payments: byId.size + new Set(oneByOne.map((f) => aliasRef(f.provider, f.id))).size,
    settledOneByOne: again.length,
  };
}
