import * as z from 'zod';
import { NotFoundError } from '../domain/errors.js';
import { dataNamespace, namespaceOf, type SiteConfig } from '../domain/site.js';
import type { ArchiveEraser } from '../ports.js';

/** Whom an erasure names: a visitor id (the tracker's), or a payment provider's customer id. */
export const erasureRequestSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('visitor'), id: z.string().min(1).max(256) }),
  z.object({ kind: z.literal('customer'), id: z.string().min(1).max(256) }),
]);
export type ErasureRequest = z.infer<typeof erasureRequestSchema>;

/** A stored item as read, keys included: the erasure rewrites it field by field and puts it back whole. */
export type StoredItem = Record<string, unknown>;

/** The audit record of an erasure (item ERASURE, `docs/data-model.md`): counts, never the person's ids. */
export interface ErasureRecord {
  /** RFC 3339. */
  at: string;
  kind: ErasureRequest['kind'];
  visitors: number;
  payments: number;
  customers: number;
  visit_items: number;
  archive_files: number;
  archive_events: number;
  /** The generation the rebuild made live without the person. */
  generation: number;
}

export interface ErasureStore {
  /** The PAYMENT items of a namespace, whole. */
  payments(ns: string): Promise<StoredItem[]>;
  /** The CUSTOMER items of a namespace, whole. */
  customers(ns: string): Promise<StoredItem[]>;
  put(item: StoredItem): Promise<void>;
  /** Replaces the CUSTOMER item `old` by `next`, keyed by `next`'s provider and customer id: the put, then the delete. */
  replaceCustomer(old: StoredItem, next: StoredItem): Promise<void>;
  /** Deletes the visitor's partition in a namespace (visits, chunks, payment copies, marker); resolves with the items deleted. */
  deleteVisitor(ns: string, visitor: string): Promise<number>;
  lastGeneration(domain: string): Promise<number>;
  audit(domain: string, record: ErasureRecord): Promise<void>;
}

export interface ErasureDeps {
  sites: { getSite(domain: string): Promise<SiteConfig | null> };
  store: ErasureStore;
  archive: ArchiveEraser;
  /** `footfall rebuild` of the site: derives every report again from the archive and the payment items; resolves with the live generation. */
  rebuild: (domain: string) => Promise<number>;
  clock: () => number;
  /** A fresh random pseudonym (the customer id the person's payments keep, so customer counts stay). */
  pseudonym: () => string;
}

/** Payment fields that name or point at the person; everything else (amounts, currency, dates, payment ids) is kept. */
const PERSON_FIELDS = ['customer_id', 'visitor_id', 'visitor', 'subscription_id'] as const;

const strings = (values: unknown[]) => values.filter((v): v is string => typeof v === 'string' && v.length > 0);

/** Whom an erasure found: every visitor id and provider customer id that is the person. */
export interface ErasedPerson {
  visitors: string[];
  customers: string[];
}

/** The person found, and how many PAYMENT and CUSTOMER items name them (what `eraseItems` rewrites). */
export interface FoundPerson extends ErasedPerson {
  payments: number;
  customerItems: number;
}

/** What the item step of an erasure changed (`eraseItems`). */
export interface ErasedItems {
  payments: number;
  customers: number;
  visit_items: number;
}

/**
 * The person a request names, grown to a fixed point: a customer's visitors
 * (their payments' and CUSTOMER item's), and a visitor's customers' other
 * visitors. Reads the live generation's PAYMENT and CUSTOMER items. Once
 * `eraseItems` ran, the person cannot be found again: keep what this returns.
 */
export async function findPerson(
  deps: Pick<ErasureDeps, 'store'>,
  site: SiteConfig,
  request: ErasureRequest,
): Promise<FoundPerson> {
  const ns = namespaceOf(site);
  const payments = await deps.store.payments(ns);
  const customers = await deps.store.customers(ns);
  const visitors = new Set<string>();
  const customerIds = new Set<string>();
  if (request.kind === 'visitor') visitors.add(request.id);
  else customerIds.add(request.id);
  const isTheirs = (p: StoredItem) =>
    customerIds.has(String(p.customer_id)) || strings([p.visitor_id, p.visitor]).some((v) => visitors.has(v));
  for (let grown = true; grown;) {
    grown = false;
    const add = (set: Set<string>, values: string[]) => {
      for (const v of values) {
        if (set.has(v)) continue;
        set.add(v);
        grown = true;
      }
    };
    for (const p of payments) {
      if (!isTheirs(p)) continue;
      add(visitors, strings([p.visitor_id, p.visitor]));
      add(customerIds, strings([p.customer_id]));
    }
    for (const c of customers) {
      const credit = c.credit as { visitor?: unknown } | null | undefined;
      const named = strings([c.metadata_visitor, credit?.visitor]);
      if (customerIds.has(String(c.customer_id))) add(visitors, named);
      else if (named.some((v) => visitors.has(v))) add(customerIds, strings([c.customer_id]));
    }
  }
  return {
    visitors: [...visitors],
    customers: [...customerIds],
    payments: payments.filter(isTheirs).length,
    customerItems: customers.filter((c) => customerIds.has(String(c.customer_id))).length,
  };
}

/**
 * Steps 2 and 3 of `erasePerson`: deletes the person's visitor partitions in
 * every generation the site ever had, and rewrites the live generation's
 * PAYMENT and CUSTOMER items without them. Safe to repeat with the same
 * `person` (a second run finds their items gone or pseudonymised already).
 */
export async function eraseItems(
  deps: Pick<ErasureDeps, 'store' | 'pseudonym'>,
  site: SiteConfig,
  person: ErasedPerson,
): Promise<ErasedItems> {
  const ns = namespaceOf(site);
  const visitors = new Set(person.visitors);
  const customerIds = new Set(person.customers);
  const isTheirs = (p: StoredItem) =>
    customerIds.has(String(p.customer_id)) || strings([p.visitor_id, p.visitor]).some((v) => visitors.has(v));
  let visitItems = 0;
  const last = Math.max(await deps.store.lastGeneration(site.domain), site.generation ?? 0, site.retired ?? 0);
  for (let g = 0; g <= last; g++)
    for (const v of visitors) visitItems += await deps.store.deleteVisitor(dataNamespace(site.domain, g), v);

  const pseudonyms = new Map<string, string>();
  const pseudonymOf = (id: string) => {
    let pseudonym = pseudonyms.get(id);
    if (pseudonym === undefined) pseudonyms.set(id, (pseudonym = deps.pseudonym()));
    return pseudonym;
  };
  let paymentCount = 0;
  for (const p of await deps.store.payments(ns)) {
    if (!isTheirs(p)) continue;
    const next: StoredItem = { ...p };
    for (const field of PERSON_FIELDS) {
      const value = p[field];
      if (typeof value !== 'string') continue;
      next[field] = field === 'customer_id' || field === 'subscription_id' ? pseudonymOf(value) : null;
    }
    // The credit is recomputed by the rebuild; the person's visit must not survive in the copy read meanwhile.
    next.touch = null;
    next.first_touch = null;
    next.touch_dims = null;
    await deps.store.put(next);
    paymentCount++;
  }
  let customerCount = 0;
  for (const c of await deps.store.customers(ns)) {
    if (!customerIds.has(String(c.customer_id))) continue;
    const id = pseudonymOf(String(c.customer_id));
    const subscriptions = Object.fromEntries(
      Object.entries((c.subscriptions ?? {}) as Record<string, unknown>).map(([k, v]) => [pseudonymOf(k), v]),
    );
    await deps.store.replaceCustomer(c, {
      ...c,
      customer_id: id,
      metadata_visitor: null,
      credit: null,
      subscriptions,
    });
    customerCount++;
  }
  return { payments: paymentCount, customers: customerCount, visit_items: visitItems };
}

/**
 * Erases a person from a site (GDPR Art. 17, CCPA; `docs/security.md`,
 * "Erasing a person"):
 *
 * 1. Finds the person's visitor ids: the one named, or for a customer id
 *    every visitor its payments and CUSTOMER item name (`findPerson`).
 * 2. Deletes those visitors' partitions (visits, timelines, payment copies)
 *    in every generation the site ever had.
 * 3. Rewrites the live generation's PAYMENT items without the person:
 *    customer id and subscription ids replaced by one random pseudonym each
 *    (so the number of customers and renewals stays, and nothing links back),
 *    visitor ids removed; the CUSTOMER item moved to the pseudonym without its
 *    visitor. Amounts, currencies, dates, refunds and payment ids are kept.
 * 4. Rewrites the archive's files that hold the visitors' events without them.
 * 5. Rebuilds the site: every derived item (rollups' visitor sets, payment
 *    list, payer and cohort items, credits) is computed again from the
 *    rewritten archive and payments, and the old generation is deleted.
 * 6. Writes the audit record (counts only).
 *
 * In one go, for the CLI; the app's requests go through the same steps one
 * at a time, checkpointed (`advanceErasure`, `erasure-requests.ts`).
 * @throws NotFoundError when the site does not exist
 * @throws Error when a rebuild of the site is running (its generation is built from the data as it was)
 */
export async function erasePerson(deps: ErasureDeps, domain: string, request: ErasureRequest): Promise<ErasureRecord> {
  const site = await deps.sites.getSite(domain);
  if (!site) throw new NotFoundError(`site ${domain} does not exist`);
  if (site.building !== undefined)
    throw new Error(`${domain}: a rebuild is running; finish it (footfall rebuild) before erasing anyone`);
  const person = await findPerson(deps, site, request);
  const items = await eraseItems(deps, site, person);
  const archive = await deps.archive.eraseVisitors(domain, person.visitors);
  const generation = await deps.rebuild(domain);
  const record: ErasureRecord = {
    at: new Date(deps.clock()).toISOString(),
    kind: request.kind,
    visitors: person.visitors.length,
    ...items,
    archive_files: archive.files,
    archive_events: archive.events,
    generation,
  };
  await deps.store.audit(domain, record);
  return record;
}
