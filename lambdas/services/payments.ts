import { namespaceOf, writeTargets, type SiteConfig } from '../domain/site.js';
import { paymentDimensionsOf } from '../domain/rollup.js';
import type { PaymentFact, ProviderFacts, Provider } from '../domain/payments/facts.js';
import { creditVisit, firstTouchOf, touchOf } from '../domain/payments/attribution.js';
import { paymentsToRecredit } from '../domain/payments/recredit.js';
import {
  emptyPayment,
  isCountable,
  mergePaymentFact,
  paymentChanged,
  type Payment,
} from '../domain/payments/payment.js';
import { emptyCustomer, paidBefore, withSubscription, type Customer } from '../domain/payments/customer.js';
import { contributionOf, customerKey, paymentKey } from '../domain/payments/contribution.js';
import type { UsdRate } from '../domain/payments/money.js';
import type {
  CustomerStore,
  DerivedPaymentSync,
  PayerCohorts,
  PaymentListLayout,
  PaymentRecordStore,
  PaymentTimelineStore,
  PendingCreditStore,
  RecomputeBatch,
  VisitStore,
} from '../ports.js';

const DAY_MS = 86_400_000;
/** How long a payment whose visitor has no visit yet is credited again (webhooks are faster than the stream). */
export const PENDING_CREDIT_MS = DAY_MS;

/** The payment use cases' ports: one per item family of the payments (`docs/data-model.md`, "Payments"). */
export interface PaymentDeps {
  /** Payments and their aliases. */
  payments: PaymentRecordStore;
  customers: CustomerStore;
  /** The payments on visitors' timelines. */
  timeline: PaymentTimelineStore;
  /** Payments waiting for their visitor's visits. */
  pending: PendingCreditStore;
  /** A payment's list items, counters and timeline copy. */
  derived: DerivedPaymentSync;
  /** Retention's payers and cohorts: each payment's and customer's payer summary kept in line with it. */
  payers: PayerCohorts;
  /** Where the payment list places a payment, and the batches its recomputes are left to. */
  list: PaymentListLayout;
  visits: VisitStore;
  /** The USD rates in force (bundled table plus refreshed overrides), fetched once per payment settled. */
  rates: () => Promise<UsdRate>;
  clock: () => number;
}

/**
 * Credits a payment to one visit (`docs/payments.md`, "Customers and
 * attribution", "Customer → visitor"): a renewal inherits the credit of its customer's first
 * attributed payment; otherwise the visitor is that of the customer's first
 * attributed payment when it was made before this one (`paidBefore`), else
 * the payment's own `footfall_visitor_id`, else the customer's metadata
 * visitor, and the site's model picks among that visitor's visits in the
 * lookback window. A payment that is not countable (`isCountable`: failed, or
 * without its status, time or amount yet) inherits nothing and is credited by
 * its own visitor alone. Defined by event time, so the credit does not depend on
 * the order the customer's payments arrive in (`settlePayment` credits the
 * others again when the customer's credit moves).
 */
export async function attribute(
  deps: { visits: Pick<VisitStore, 'visitsAround' | 'firstVisit'> },
  site: SiteConfig,
  p: Payment,
  customer: Customer | null,
): Promise<Payment> {
  const key = paymentKey(p);
  // A payment that moved no money (failed, or not yet known to be paid) takes nothing from its customer's credit:
  // only countable payments are credited again when that credit moves, so anything else inheriting it would keep
  // whichever credit it met first.
  const inherited = isCountable(p) && customer?.credit && customer.credit.payment_id !== key ? customer.credit : null;
  if (p.is_renewal && inherited) {
    return {
      ...p,
      visitor: inherited.visitor,
      touch: inherited.touch,
      touch_dims: inherited.touch_dims,
      first_touch: inherited.first_touch,
    };
  }
  const earlier =
    inherited && p.ts !== null && paidBefore({ ts: inherited.ts, key: inherited.payment_id }, { ts: p.ts, key });
  const visitor = (earlier ? inherited.visitor : null) ?? p.visitor_id ?? customer?.metadata_visitor ?? null;
  if (!visitor || p.ts === null) return { ...p, visitor, touch: null, touch_dims: null, first_touch: null };
  const visits = await deps.visits.visitsAround(namespaceOf(site), visitor, p.ts - site.lookback_days * DAY_MS, p.ts);
  const credited = creditVisit(visits, p.ts, site.attribution, site.lookback_days);
  const first = await deps.visits.firstVisit(namespaceOf(site), visitor);
  return {
    ...p,
    visitor,
    touch: credited ? touchOf(credited) : null,
    touch_dims: credited ? paymentDimensionsOf(credited) : null,
    first_touch: first && first.start <= p.ts ? firstTouchOf(first) : null,
  };
}

/**
 * A customer after one of its payments settled: earliest payment and earliest attributed payment, in event-time
 * order (`paidBefore`), so the same payments give the same customer whatever order they settle in.
 */
export function customerAfter(customer: Customer, p: Payment): Customer {
  const key = paymentKey(p);
  let next = customer;
  const first = (held: { ts: number; id: string }) =>
    paidBefore({ ts: p.ts as number, key }, { ts: held.ts, key: held.id });
  if (isCountable(p) && (!next.first_payment || next.first_payment.id === key || first(next.first_payment))) {
    next = { ...next, first_payment: { id: key, ts: p.ts } };
  } else if (!isCountable(p) && next.first_payment?.id === key) {
    next = { ...next, first_payment: null };
  }
  const attributed = isCountable(p) && p.touch && p.touch_dims && p.visitor && !p.is_renewal;
  if (
    attributed &&
    (!next.credit || next.credit.payment_id === key || first({ ts: next.credit.ts, id: next.credit.payment_id }))
  ) {
    next = {
      ...next,
      credit: {
        payment_id: key,
        ts: p.ts,
        visitor: p.visitor as string,
        touch: p.touch!,
        touch_dims: p.touch_dims!,
        first_touch: p.first_touch,
      },
    };
  } else if (!attributed && next.credit?.payment_id === key) {
    next = { ...next, credit: null };
  }
  // The same customer again is no change: updateCustomer then writes nothing (a re-credit that changed nothing is free).
  return JSON.stringify(next) === JSON.stringify(customer) ? customer : next;
}

/** Applies `change` to a stored customer (created empty), retrying on a concurrent writer (`ver`). */
export async function updateCustomer(
  deps: Pick<PaymentDeps, 'customers'>,
  site: string,
  provider: Provider,
  customerId: string,
  change: (c: Customer) => Customer,
): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const current =
      (await deps.customers.getCustomer(site, provider, customerId)) ?? emptyCustomer(site, provider, customerId);
    const next = change(current);
    if (next === current) return;
    if (await deps.customers.putCustomer({ ...next, ver: current.ver + 1 })) return;
  }
  throw new Error(`customer ${provider}:${customerId}: too many concurrent updates`);
}

/**
 * Merges facts into a payment (or just re-credits it when `fact` is null),
 * stores it, and brings the customer, the payment rollups, the visitor's
 * timeline and the pending list in line. Idempotent: the same fact again
 * leaves every item as it was.
 *
 * @param batch when given, the payment rollups' recomputes (and the
 *   retention payers' and cohorts', `PayerCohorts.syncPayment`) wait for
 *   `deps.derived.finishSync(batch)`, done once for many payments
 *   (`recreditVisitors`); the caller must call it
 * @param queued payment keys (`paymentKey`) the caller settles next, after this one: a re-credit of the
 *   customer (its credit moved) leaves them to it
 * @returns the payment as stored, or null when there is nothing to store
 */
export async function settlePayment(
  deps: PaymentDeps,
  site: SiteConfig,
  provider: Provider,
  fact: PaymentFact | null,
  knownId?: string,
  batch?: RecomputeBatch,
  queued?: ReadonlySet<string>,
): Promise<Payment | null> {
  const ns = namespaceOf(site);
  const known = fact ? await deps.payments.findPaymentIds(ns, provider, [fact.id, ...fact.aliases]) : [];
  const id = knownId ?? known[0] ?? fact?.id;
  if (!id) return null;
  // An event that names two payments stored apart folds the later-sorted ones into the first.
  if (!knownId) for (const other of known.slice(1)) await foldPayment(deps, site, provider, id, other);
  for (let attempt = 0; attempt < 20; attempt++) {
    const current = await deps.payments.getPayment(ns, provider, id);
    if (!current && !fact) return null;
    const base = current ?? emptyPayment(ns, provider, id);
    const merged = fact ? mergePaymentFact(base, { ...fact, id, aliases: [...fact.aliases, fact.id] }) : base;
    const customer = merged.customer_id ? await deps.customers.getCustomer(ns, provider, merged.customer_id) : null;
    const credited = await attribute(deps, site, merged, customer);
    const rate = await deps.rates();
    // Positions the payment leaves in the list (a re-credit, a refund, a real time replacing a stand-in)
    // are kept on the payment until removed, so a crash before their removal is mended by the retry.
    const left = current
      ? positionsOf(deps.list, current, site.timezone, rate).filter(
          (pos) => !positionsOf(deps.list, credited, site.timezone, rate).includes(pos),
        )
      : [];
    const unlisted = [...new Set([...(credited.unlisted ?? []), ...left])];
    const candidate: Payment = { ...credited, ...(unlisted.length > 0 ? { unlisted } : {}) };
    if (unlisted.length === 0) delete candidate.unlisted;
    const changed = !current || paymentChanged(current, candidate);
    const payment = { ...candidate, rev: changed ? base.rev + 1 : base.rev };
    // A payment that changes payer (a customer id learnt later) leaves the old payer's retention first, so a crash cannot strand it there.
    if (current && customerKey(current) !== customerKey(payment))
      await deps.payers.dropPayment(ns, site.timezone, customerKey(current), paymentKey(current), deps.clock());
    if (changed && !(await deps.payments.putPayment(payment, base.rev))) continue;
    if (fact) await deps.payments.linkAliases(ns, provider, id, payment.aliases);
    let creditMoved = false;
    if (payment.customer_id)
      await updateCustomer(deps, ns, provider, payment.customer_id, (c) => {
        const next = customerAfter(c, payment);
        creditMoved = JSON.stringify(next.credit) !== JSON.stringify(c.credit);
        return next;
      });
    await deps.derived.syncDerived(
      payment,
      contributionOf(payment, site.timezone, rate),
      current ? { visitor: current.visitor, ts: current.ts } : null,
      batch,
    );
    await deps.payers.syncPayment(payment.site, site.timezone, payment, rate, deps.clock(), batch);
    // A payment whose visitor has no credited visit yet may be waiting for the stream.
    const waiting =
      payment.visitor !== null &&
      payment.touch === null &&
      payment.ts !== null &&
      deps.clock() - payment.ts < PENDING_CREDIT_MS;
    if (waiting) await deps.pending.markPending(ns, payment, (payment.ts ?? 0) + PENDING_CREDIT_MS);
    else await deps.pending.clearPending(ns, payment);
    if (creditMoved) await recreditCustomer(deps, site, payment, batch, queued);
    return payment;
  }
  throw new Error(`payment ${provider}:${id}: too many concurrent updates`);
}

/**
 * Settles again, in credit order, a customer's other payments after its credit (first attributed payment) moved:
 * its later purchases take their visitor from the credit and its renewals inherit it (`attribute`). The payments
 * are those with a payer entry (`payerPayments`: every payment of the customer that was ever countable). A re-settle
 * can move the credit again only while the customer has none, so the cascade ends.
 */
async function recreditCustomer(
  deps: PaymentDeps,
  site: SiteConfig,
  payment: Payment,
  batch?: RecomputeBatch,
  queued?: ReadonlySet<string>,
) {
  const ns = namespaceOf(site);
  const self = paymentKey(payment);
  const keys = (await deps.payers.payerPaymentKeys(ns, customerKey(payment))).filter((k) => {
    const key = paymentKey({ provider: k.provider, provider_payment_id: k.id });
    return key !== self && !queued?.has(key);
  });
  if (keys.length === 0) return;
  const others = await deps.payments.getPayments(keys.map((k) => ({ site: ns, provider: k.provider, id: k.id })));
  others.sort(creditOrder);
  for (const p of others) await settlePayment(deps, site, p.provider, null, p.provider_payment_id, batch);
}

/** The list positions (`positionId`) a payment occupies in its current state. */
export function positionsOf(list: PaymentListLayout, p: Payment, timezone: string, rate: UsdRate): string[] {
  const c = contributionOf(p, timezone, rate);
  return c ? list.positions(p.site, c) : [];
}

/** The facts a stored payment stands for, so it can be merged into another. */
function asFact(p: Payment): PaymentFact {
  const fact: PaymentFact = {
    provider: p.provider,
    id: p.provider_payment_id,
    aliases: p.aliases,
    refunded: p.refunded,
    is_renewal: p.is_renewal,
    refunds: Object.entries(p.refunds ?? {}).map(([id, amount]) => ({ id, amount })),
  };
  const provisional = new Set(p.provisional ?? []);
  const fallback: NonNullable<PaymentFact['fallback']> = {};
  if (p.ts !== null) (provisional.has('ts') ? fallback : fact).ts = p.ts;
  if (p.amount !== null) (provisional.has('amount') ? fallback : fact).amount = p.amount;
  if (Object.keys(fallback).length > 0) fact.fallback = fallback;
  if (p.currency !== null) fact.currency = p.currency;
  if (p.provider_amount_usd !== null) fact.amount_usd = p.provider_amount_usd;
  if (p.status !== null) fact.status = p.status;
  if (p.customer_id !== null) fact.customer_id = p.customer_id;
  if (p.visitor_id !== null) fact.visitor_id = p.visitor_id;
  if (p.subscription_id !== null) fact.subscription_id = p.subscription_id;
  return fact;
}

/**
 * Merges the payment stored as `otherId` into `id`: its facts into the
 * survivor, its aliases pointed at the survivor, its rollup entries and
 * timeline copy removed, its row deleted. Each step can be repeated, so a
 * crash in between is mended by the provider's retry.
 */
async function foldPayment(
  deps: PaymentDeps,
  site: SiteConfig,
  provider: Provider,
  id: string,
  otherId: string,
): Promise<void> {
  const ns = namespaceOf(site);
  const other = await deps.payments.getPayment(ns, provider, otherId);
  if (!other) return;
  await settlePayment(deps, site, provider, { ...asFact(other), id, aliases: [otherId, ...other.aliases] }, id);
  await deps.payments.repointAliases(ns, provider, id, [otherId, ...other.aliases]);
  const rate = await deps.rates();
  const gone: Payment = {
    ...other,
    visitor: null,
    rev: other.rev + 1,
    unlisted: [...new Set([...(other.unlisted ?? []), ...positionsOf(deps.list, other, site.timezone, rate)])],
  };
  await deps.derived.syncDerived(gone, null, { visitor: other.visitor, ts: other.ts });
  await deps.payers.dropPayment(ns, site.timezone, customerKey(other), paymentKey(other), deps.clock());
  await deps.pending.clearPending(ns, other);
  await deps.payments.deletePayment(ns, provider, otherId);
}

export interface FactsOutcome {
  payments: number;
  subscriptions: number;
  customers: number;
}

/**
 * Applies one verified webhook's facts: customers and subscriptions first, so
 * payments see them. Written to every generation of `writeTargets(site)` (a
 * rebuild's too, while one runs), the live one first.
 */
export async function applyProviderFacts(
  deps: PaymentDeps,
  site: SiteConfig,
  facts: ProviderFacts,
): Promise<FactsOutcome> {
  for (const target of writeTargets(site)) await applyFactsTo(deps, target, facts);
  return {
    payments: facts.payments.length,
    subscriptions: facts.subscriptions.length,
    customers: facts.customers.length,
  };
}

async function applyFactsTo(deps: PaymentDeps, site: SiteConfig, facts: ProviderFacts): Promise<void> {
  const ns = namespaceOf(site);
  for (const c of facts.customers) {
    await updateCustomer(deps, ns, c.provider, c.customer_id, (current) =>
      current.metadata_visitor === c.visitor_id ? current : { ...current, metadata_visitor: c.visitor_id },
    );
    await deps.payers.syncCustomer(ns, site.timezone, c.provider, c.customer_id, deps.clock());
  }
  for (const s of facts.subscriptions) {
    if (!s.customer_id) continue;
    await updateCustomer(deps, ns, s.provider, s.customer_id, (current) =>
      withSubscription(current, s.subscription_id, { status: s.status, paying: s.paying, ts: s.ts }),
    );
    // Also when nothing changed: a retry after a crash between the customer's write and this recompute finishes it.
    await deps.payers.syncCustomer(ns, site.timezone, s.provider, s.customer_id, deps.clock());
  }
  for (const p of facts.payments) await settlePayment(deps, site, p.provider, p);
}

/**
 * Credits again the payments waiting for their visits; drops those past their
 * time. Every generation of `writeTargets(site)`.
 * @returns payments credited again in the live generation
 */
export async function recreditPending(deps: PaymentDeps, site: SiteConfig): Promise<number> {
  const [live, ...others] = writeTargets(site);
  const done = await recreditPendingIn(deps, live as SiteConfig);
  for (const target of others) await recreditPendingIn(deps, target);
  return done;
}

async function recreditPendingIn(deps: PaymentDeps, site: SiteConfig): Promise<number> {
  const ns = namespaceOf(site);
  let done = 0;
  for (const pending of await deps.pending.listPending(ns)) {
    const payment = await settlePayment(deps, site, pending.provider, null, pending.id);
    if (payment && pending.until < deps.clock()) await deps.pending.clearPending(ns, payment);
    done++;
  }
  return done;
}

/** First payments before renewals (renewals inherit their customer's first credit), then by time. */
export const creditOrder = (a: Payment, b: Payment) =>
  Number(a.is_renewal) - Number(b.is_renewal) || (a.ts ?? 0) - (b.ts ?? 0);

/**
 * Credits again the payments on the timelines of `visitors` that their new
 * visits can change — called by the sessionizer after it wrote visits of
 * these visitors (`docs/payments.md` "Customers and attribution"): a visit that arrives after its payment (an
 * import, a redelivered webhook, a late stream) can make the payment
 * attributable, or change which visit earned it (an earlier non-Direct visit
 * in the window) or its first touch. Crediting therefore does not depend on
 * the order data arrives in.
 *
 * Of each visitor's payments, those a visit starting at or after the entry's
 * `since` can change (`paymentsToRecredit`: a payment at or after `since`,
 * and then the visitor's renewals) are settled again, in credit order; an
 * entry without `since` credits them all. `settlePayment` is idempotent and
 * writes nothing when a credit does not change, so a retried batch, which
 * selects the same payments, finishes what a crash interrupted. The payments'
 * list items are written first and each day and month they touch is
 * recomputed once, at the end (`RecomputeBatch`). A visitor costs one Query
 * of its payments, plus a BatchGetItem when it has some.
 *
 * Each entry is credited in the generation its `namespace` names, among
 * `writeTargets(site)`; an entry without one, in every generation.
 *
 * @returns payments credited again in the live generation
 */
export async function recreditVisitors(
  deps: PaymentDeps,
  site: SiteConfig,
  entries: ReadonlyArray<{ visitor: string; since?: number; namespace?: string }>,
): Promise<number> {
  let done = 0;
  for (const [i, target] of writeTargets(site).entries()) {
    const ns = namespaceOf(target);
    const credited = await recreditVisitorsIn(
      deps,
      target,
      entries.filter((e) => e.namespace === undefined || e.namespace === ns),
    );
    if (i === 0) done = credited;
  }
  return done;
}

async function recreditVisitorsIn(
  deps: PaymentDeps,
  site: SiteConfig,
  visitors: ReadonlyArray<{ visitor: string; since?: number }>,
): Promise<number> {
  const ns = namespaceOf(site);
  // Every payment's list items first, then each day and month they touch recomputed once (the write budget, `docs/benchmarks.md` "Budgets").
  const batch = deps.list.batch();
  let done = 0;
  for (const { visitor, since } of visitors) {
    const keys = await deps.timeline.visitorPayments(ns, visitor);
    if (keys.length === 0) continue;
    const all = await deps.payments.getPayments(keys.map((k) => ({ site: ns, provider: k.provider, id: k.id })));
    all.sort(creditOrder);
    const payments = since === undefined ? all : paymentsToRecredit(all, since);
    // A customer's credit moving on the way re-credits its other payments, except those settled next here.
    const queued = new Set(payments.map(paymentKey));
    for (const p of payments) {
      queued.delete(paymentKey(p));
      await settlePayment(deps, site, p.provider, null, p.provider_payment_id, batch, queued);
    }
    done += payments.length;
  }
  await deps.derived.finishSync(batch);
  return done;
}

/**
 * Credits every payment of a site again (after a change of attribution model
 * or lookback window), in every generation of `writeTargets(site)`.
 * @returns payments of the live generation credited again
 */
export async function recreditSite(deps: PaymentDeps, site: SiteConfig): Promise<number> {
  const [live, ...others] = writeTargets(site);
  const done = await recreditGeneration(deps, live as SiteConfig);
  for (const target of others) await recreditGeneration(deps, target);
  return done;
}

/** Credits every payment of exactly `site`'s live generation again (`recreditSite` without the fan-out; a rebuild uses it on the generation it builds). */
export async function recreditGeneration(deps: PaymentDeps, site: SiteConfig): Promise<number> {
  const payments = await deps.payments.listPayments(namespaceOf(site));
  // First payments before renewals, so renewals inherit the new credit.
  payments.sort(creditOrder);
  for (const p of payments) await settlePayment(deps, site, p.provider, null, p.provider_payment_id);
  return payments.length;
}

/**
 * Copies a generation's payment facts into another generation of the same
 * site (`footfall rebuild`, `docs/rebuild.md`): payments come from the
 * providers, not from the archive, so a generation built from the archive
 * gets them from the live one. Customers first (their metadata visitor and
 * subscription statuses), then every payment as the facts it stands for, in
 * credit order (first payments before renewals), each credited against the
 * target generation's visits. Everything derived (credits, customers' first
 * payments, rollups, timeline copies, pending credits) is computed again in
 * the target's layout. Idempotent, and commutes with webhooks written to
 * both generations meanwhile (facts merge).
 *
 * @param onProgress called after each payment with the count done and the total
 * @returns payments copied
 */
export async function copyPayments(
  deps: PaymentDeps,
  from: SiteConfig,
  to: SiteConfig,
  onProgress?: (done: number, total: number) => void | Promise<void>,
): Promise<number> {
  const target = namespaceOf(to);
  for (const c of await deps.customers.listCustomers(namespaceOf(from))) {
    await updateCustomer(deps, target, c.provider, c.customer_id, (current) => {
      let next =
        c.metadata_visitor && current.metadata_visitor !== c.metadata_visitor
          ? { ...current, metadata_visitor: c.metadata_visitor }
          : current;
      for (const [id, state] of Object.entries(c.subscriptions)) next = withSubscription(next, id, state);
      return next;
    });
    await deps.payers.syncCustomer(target, to.timezone, c.provider, c.customer_id, deps.clock());
  }
  const payments = await deps.payments.listPayments(namespaceOf(from));
  payments.sort(creditOrder);
  let done = 0;
  for (const p of payments) {
    await settlePayment(deps, to, p.provider, asFact(p), p.provider_payment_id);
    await onProgress?.(++done, payments.length);
  }
  return done;
}
