import * as z from 'zod';
import { FieldError } from '../domain/errors.js';
import type { Telemetry } from '../observability/telemetry.js';
import { eraseItems, findPerson, type ErasureDeps, type ErasureRecord } from './erasure.js';
import type { RebuildSteps } from './rebuild-steps.js';

/** The steps of an erasure request, in order, as the app shows them (`docs/security.md`, "Erasing a person"). */
export const ERASURE_PHASES = [
  'queued',
  'erasing items',
  'waiting for the archive',
  'rewriting the archive',
  'rebuilding',
] as const;
export type ErasurePhase = (typeof ERASURE_PHASES)[number];

/** How far each phase is into the whole, in percent: the rebuild, which reads the whole archive, is most of it. */
const PHASE_START: Readonly<Record<ErasurePhase, number>> = {
  queued: 0,
  'erasing items': 5,
  'waiting for the archive': 10,
  'rewriting the archive': 20,
  rebuilding: 30,
};

/** The most visitor or customer ids one person may have (a customer's devices): bounds the request item. */
export const MAX_PERSON_IDS = 200;

/**
 * An erasure asked for in the app and not finished (item ERASURE_REQUEST,
 * `docs/data-model.md`): the person's ids are in it until the erasure is done,
 * then the item is deleted and only the ERASURE record (counts) remains.
 * < 64 KB: at most `MAX_PERSON_IDS` ids of ≤ 256 characters each way.
 */
export const pendingErasureSchema = z.object({
  domain: z.string(),
  id: z.string(),
  kind: z.enum(['visitor', 'customer']),
  /** The id the owner gave. */
  person: z.string(),
  /** When it was asked for, ms since epoch. */
  requested: z.number(),
  phase: z.enum(ERASURE_PHASES),
  visitors: z.array(z.string()).max(MAX_PERSON_IDS).nullable(),
  customers: z.array(z.string()).max(MAX_PERSON_IDS).nullable(),
  items: z.object({ payments: z.number(), customers: z.number(), visit_items: z.number() }).nullable(),
  archive: z.object({ files: z.number(), events: z.number() }).nullable(),
  generation: z.number().int().nullable(),
  waits: z.record(z.string(), z.number()),
  fraction: z.number().min(0).max(1),
  /** Why the last step failed, with no id of the person (it is retried at the next run); null when it did not. */
  error: z.string().nullable(),
});
export type PendingErasure = z.infer<typeof pendingErasureSchema>;

/** Where erasure requests wait and their audit records go (`DynamoErasureStore`). */
export interface ErasureQueue {
  add(request: PendingErasure): Promise<void>;
  /** Requests not finished, oldest first: of one site, or of every site. */
  pending(domain?: string): Promise<PendingErasure[]>;
  save(request: PendingErasure): Promise<void>;
  /** Writes the audit record, then deletes the request (and with it the person's ids). */
  finish(request: PendingErasure, record: ErasureRecord): Promise<void>;
  /** Deletes a request whose site is gone (its deletion took the person with it). */
  drop(request: PendingErasure): Promise<void>;
  /** The site's latest audit records, newest first. */
  records(domain: string, limit: number): Promise<ErasureRecord[]>;
}

/** The app's form (Site settings › Erase a person, or a visitor's page): whom, and the domain typed again. */
export const eraseBody = z.object({
  kind: z.enum(['visitor', 'customer', 'email'], 'Choose visitor, customer or email.'),
  id: z.string('Enter the id.').trim().min(1, 'Enter the id.').max(256, 'At most 256 characters.'),
  confirm: z.string('Type the domain to confirm.').trim().toLowerCase(),
});
export type EraseBody = z.infer<typeof eraseBody>;

/** Why an email cannot be erased by: Footfall never stores one (`docs/security.md`). */
export const NO_EMAILS =
  "Footfall stores no email addresses: payments keep the provider's customer id. Find the customer by email at the provider (Stripe: Customers, search the email) and erase by its customer id (cus_…).";

/**
 * A new request for `domain` from the app's form (the owner and the
 * confirmation checked by the caller): queued, advanced by the scheduled
 * function (`advanceErasures`).
 * @throws FieldError (400, field `kind`) for an email
 */
export function newErasureRequest(domain: string, body: EraseBody, now: number, id: string): PendingErasure {
  if (body.kind === 'email') throw new FieldError('kind', NO_EMAILS);
  return {
    domain,
    id,
    kind: body.kind,
    person: body.id,
    requested: now,
    phase: 'queued',
    visitors: null,
    customers: null,
    items: null,
    archive: null,
    generation: null,
    // The person's events put before now may still be on their way to the archive: its rewrite waits from here.
    waits: { archive: now },
    fraction: 0,
    error: null,
  };
}

/** An erasure as the app shows it: no id of the person. */
export interface ErasureView {
  id: string;
  kind: PendingErasure['kind'];
  /** RFC 3339. */
  requested: string;
  status: 'pending' | 'running' | 'done';
  phase: ErasurePhase | 'done';
  percent: number;
  error: string | null;
}

/** What `GET /api/app/sites/{domain}/erasures` answers: requests under way, and the audit records of the finished ones. */
export interface ErasureStatus {
  pending: ErasureView[];
  done: ErasureRecord[];
}

/** A request's progress, 0..100: its phase's start, and the rebuild's fraction in the last one. */
export function erasureView(r: PendingErasure): ErasureView {
  const start = PHASE_START[r.phase];
  const percent = r.phase === 'rebuilding' ? start + (100 - start) * r.fraction : start;
  return {
    id: r.id,
    kind: r.kind,
    requested: new Date(r.requested).toISOString(),
    status: r.phase === 'queued' ? 'pending' : 'running',
    phase: r.phase,
    percent: Math.min(99, Math.floor(percent)),
    error: r.error,
  };
}

export interface ErasureDriverDeps extends Pick<ErasureDeps, 'sites' | 'store' | 'archive' | 'clock' | 'pseudonym'> {
  queue: ErasureQueue;
  /** How long after a request the person's events may still reach the archive (the Firehose fence), ms. */
  archiveFenceMs: number;
  /** Brings the archive up to date once that wait has passed (locally: drains the stream). */
  catchUp: () => Promise<void>;
  /** Advances the site's rebuild within the deadline (`stepRebuild`), saving its state through `save`. */
  rebuild: (
    domain: string,
    state: RebuildSteps,
    deadline: number,
    save: () => Promise<void>,
  ) => Promise<{ done: boolean }>;
  logger: Telemetry['logger'];
}

/**
 * Advances one erasure request by as many steps as fit before `deadline`
 * (ms), saving the request after each (`docs/security.md`, "Erasing a
 * person"): the person found (`findPerson`), their items erased
 * (`eraseItems`), the archive rewritten once the events they sent before
 * the request are in it, the site rebuilt (`stepRebuild`), then the audit
 * record written and the request, with the person's ids, deleted. The same
 * steps as `erasePerson`; a crash anywhere resumes from the last save, and
 * every step is safe to repeat.
 * @returns the audit record once done, else null (more steps left, or the site is gone)
 */
export async function advanceErasure(
  deps: ErasureDriverDeps,
  request: PendingErasure,
  deadline: number,
): Promise<ErasureRecord | null> {
  const save = () => deps.queue.save(request);
  const site = await deps.sites.getSite(request.domain);
  if (!site) {
    // Deleted meanwhile: the site's deletion took every item and file of the person.
    await deps.queue.drop(request);
    return null;
  }
  while (deps.clock() < deadline) {
    switch (request.phase) {
      case 'queued': {
        // A rebuild under way copies the data as it was: start once it is done.
        if (site.building !== undefined) return null;
        const person = await findPerson(deps, site, { kind: request.kind, id: request.person });
        request.visitors = person.visitors.slice(0, MAX_PERSON_IDS);
        request.customers = person.customers.slice(0, MAX_PERSON_IDS);
        // Counted now: a repeat of the items step after a crash finds them rewritten already.
        request.items = { payments: person.payments, customers: person.customerItems, visit_items: 0 };
        request.phase = 'erasing items';
        await save();
        break;
      }
      case 'erasing items': {
        const erased = await eraseItems(deps, site, {
          visitors: request.visitors ?? [],
          customers: request.customers ?? [],
        });
        request.items = {
          payments: request.items?.payments ?? erased.payments,
          customers: request.items?.customers ?? erased.customers,
          visit_items: (request.items?.visit_items ?? 0) + erased.visit_items,
        };
        request.phase = 'waiting for the archive';
        await save();
        break;
      }
      case 'waiting for the archive':
        if (deps.clock() < (request.waits.archive ?? request.requested) + deps.archiveFenceMs) return null;
        await deps.catchUp();
        request.phase = 'rewriting the archive';
        break;
      case 'rewriting the archive':
        request.archive = await deps.archive.eraseVisitors(request.domain, request.visitors ?? []);
        request.phase = 'rebuilding';
        await save();
        break;
      case 'rebuilding': {
        const { done } = await deps.rebuild(request.domain, request, deadline, save);
        if (!done) {
          await save();
          return null;
        }
        const record: ErasureRecord = {
          at: new Date(deps.clock()).toISOString(),
          kind: request.kind,
          visitors: request.visitors?.length ?? 0,
          payments: request.items?.payments ?? 0,
          customers: request.items?.customers ?? 0,
          visit_items: request.items?.visit_items ?? 0,
          archive_files: request.archive?.files ?? 0,
          archive_events: request.archive?.events ?? 0,
          generation: request.generation ?? 0,
        };
        await deps.queue.finish(request, record);
        return record;
      }
    }
  }
  return null;
}

/**
 * Advances every pending erasure request, oldest first, until `deadline`
 * (ms): the scheduled function's share of the work. A request that fails is
 * logged (its id and the error's name: no id of the person, and no message
 * that might quote one) and tried again at the next run.
 * @returns the site (domain) of each request finished in this run
 */
export async function advanceErasures(deps: ErasureDriverDeps, deadline: number): Promise<string[]> {
  const finished: string[] = [];
  for (const request of await deps.queue.pending()) {
    if (deps.clock() >= deadline) break;
    try {
      if (request.error !== null) {
        request.error = null;
        await deps.queue.save(request);
      }
      if (await advanceErasure(deps, request, deadline)) finished.push(request.domain);
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      deps.logger.error('erasure step failed; the next run tries again', {
        request: request.id,
        site: request.domain,
        phase: request.phase,
        error: name,
      });
      request.error = `The step "${request.phase}" failed (${name}); it is tried again at the next run, within 15 minutes.`;
      await deps.queue.save(request);
    }
  }
  return finished;
}
