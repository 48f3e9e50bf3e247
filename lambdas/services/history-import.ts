import type { SecretBox } from '../ports.js';
import type { Provider, ProviderFacts } from '../domain/payments/facts.js';
import { mapPage, type HistoryRange, type HistorySource } from '../domain/payments/history-source.js';
import { HISTORY_KEYS } from '../domain/payments/history-keys.js';
import type { SiteConfig } from '../domain/site.js';
import { ConflictError } from '../domain/errors.js';
import { importPayments, PaymentImportError, type PaymentImportDeps } from './payment-import.js';
import { readPage, type PageReadOptions } from './history-pages.js';

/** A job's state: reading and importing, finished, or stopped by an error (a new start resumes it). */
export type ImportJobStatus = 'running' | 'done' | 'failed';

export interface ImportCounts {
  /** Objects read from the provider's lists. */
  read: number;
  /** Objects whose facts were imported (payments, refunds, customers, subscriptions). */
  imported: number;
  /** Objects that state nothing to import (an unpaid checkout, a customer without a visitor id). */
  skipped: number;
  /** Objects the provider's webhook mapping refused (`invalid` names the first few). */
  failed: number;
}

/**
 * One provider history import of a site begun in the app (item IMPORT_JOB, `docs/data-model.md`): where
 * its reading is (the list `kind` of the source's kinds, by index, and the cursor within it), what it
 * counted, and the API key sealed while it runs. Times are ms since epoch; `since`/`until` Unix seconds.
 */
export interface ImportJob {
  site: string;
  provider: Provider;
  status: ImportJobStatus;
  since: number | null;
  until: number | null;
  /** `HISTORY_KEYS[provider].scope`'s id (a Lemon Squeezy store), null for the whole key. */
  scope: string | null;
  /** Index of the list being read in the source's `kinds`; `kinds.length` once every list is read. */
  kind: number;
  /** The next page's cursor in that list, null for its first page. */
  cursor: string | null;
  counts: ImportCounts;
  /** At most `MAX_INVALID_LINES` lines of refused objects, each at most 200 characters. */
  invalid: string[];
  /** Why the job stopped, in words (at most 300 characters), null otherwise. */
  error: string | null;
  started: number;
  updated: number;
  /** The email of who started it. */
  by: string;
  /** The invocation that holds the job: a run whose save finds another id stops (a newer one took over). */
  run: string;
  /** The API key sealed by `SecretBox.seal` (context `<provider>-import`) while running; null once it ended. */
  sealedKey: string | null;
}

/** Storage of import jobs (`DynamoImportJobStore`): one item per site and provider, read consistently. */
export interface ImportJobStore {
  get(site: string, provider: Provider): Promise<ImportJob | null>;
  /**
   * Writes `job` if the stored one is still `expected` (compared by `run` and `updated`; null: none
   * stored). Returns false when another writer changed it first.
   */
  put(job: ImportJob, expected: Pick<ImportJob, 'run' | 'updated'> | null): Promise<boolean>;
}

/** What starting a job needs: the store, the secret box that seals the key, and the invoker of the imports function. */
export interface ImportStartDeps {
  jobs: ImportJobStore;
  secrets: Pick<SecretBox, 'seal'>;
  /** Invokes the imports function asynchronously for the job (`run` its lease id); resolves once the invocation is queued. */
  invoke(site: string, provider: Provider, run: string): Promise<void>;
  clock: () => number;
  newId: () => string;
}

/** What running a job needs besides the store: the key's opening, each provider's lists, the bulk import. */
export interface ImportRunDeps {
  jobs: ImportJobStore;
  secrets: Pick<SecretBox, 'open'>;
  sites: { getSite(domain: string): Promise<SiteConfig | null> };
  /** A provider's lists for a key (`historySource`). */
  sources(provider: Provider, apiKey: string, scope: string | undefined): HistorySource<string>;
  payments: PaymentImportDeps;
  clock: () => number;
  /** Rate-limit back-off of `readPage` (tests shorten it). */
  pages?: PageReadOptions;
  /** Objects a batch; default `IMPORT_BATCH_OBJECTS`. */
  batchObjects?: number;
}

/** Objects read between two imports and checkpoints: a crash re-reads at most this many. */
export const IMPORT_BATCH_OBJECTS = 1000;
/** Refused objects' lines kept on the job (the count has them all). */
const MAX_INVALID_LINES = 3;
/**
 * A running job whose last save is older than this is stalled (its function died past its retries):
 * a new start takes it over. Over the function's 15-minute timeout, so a live run is never taken.
 */
export const IMPORT_STALE_MS = 20 * 60_000;

/** The secret box context of a job's key: the site, and the provider marked so it never opens as a webhook secret. */
const keyContext = (site: string, provider: Provider) => ({ site, provider: `${provider}-import` });

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** What the app shows of a job (`GET /api/app/sites/{domain}/imports/{provider}`): never the key. */
export interface ImportJobView {
  provider: Provider;
  status: ImportJobStatus;
  /** Running, but not saved for `IMPORT_STALE_MS`: starting again takes it over. */
  stalled: boolean;
  since: string | null;
  until: string | null;
  counts: ImportCounts;
  invalid: string[];
  error: string | null;
  started: string;
  updated: string;
  by: string;
}

const day = (s: number | null) => (s === null ? null : new Date(s * 1000).toISOString().slice(0, 10));

/** The app's view of `job` at `now` (ms). */
export function importJobView(job: ImportJob, now: number): ImportJobView {
  return {
    provider: job.provider,
    status: job.status,
    stalled: job.status === 'running' && now - job.updated > IMPORT_STALE_MS,
    since: day(job.since),
    until: day(job.until),
    counts: job.counts,
    invalid: job.invalid,
    error: job.error,
    started: new Date(job.started).toISOString(),
    updated: new Date(job.updated).toISOString(),
    by: job.by,
  };
}

export interface ImportRequest {
  site: string;
  provider: Provider;
  apiKey: string;
  range: HistoryRange;
  scope: string | null;
  by: string;
}

const EMPTY_COUNTS: ImportCounts = { read: 0, imported: 0, skipped: 0, failed: 0 };

/**
 * Starts (or resumes) the import of a provider's history for a site (`docs/payments.md`, "Importing a
 * provider's history", from the app): seals the key, writes the job and invokes the imports function.
 * A job that failed or stalled with the same range and scope goes on at its list and cursor with its
 * counts; any other start reads from the first page (the import is idempotent: nothing counts twice).
 * @throws ConflictError (409) while a job of the site and provider runs
 * @throws the invoker's error when the function cannot be invoked (the job is saved as failed, without the key)
 */
export async function startHistoryImport(deps: ImportStartDeps, request: ImportRequest): Promise<ImportJob> {
  const { site, provider } = request;
  const now = deps.clock();
  const existing = await deps.jobs.get(site, provider);
  if (existing?.status === 'running' && now - existing.updated <= IMPORT_STALE_MS)
    throw new ConflictError(`An import of ${HISTORY_KEYS[provider].label} history is running; wait for it to end.`);
  const resumes =
    existing !== null &&
    existing.status !== 'done' &&
    existing.since === request.range.since &&
    existing.until === request.range.until &&
    existing.scope === request.scope;
  const job: ImportJob = {
    site,
    provider,
    status: 'running',
    since: request.range.since,
    until: request.range.until,
    scope: request.scope,
    kind: resumes ? existing.kind : 0,
    cursor: resumes ? existing.cursor : null,
    counts: resumes ? existing.counts : EMPTY_COUNTS,
    invalid: resumes ? existing.invalid : [],
    error: null,
    started: resumes ? existing.started : now,
    updated: now,
    by: request.by,
    run: deps.newId(),
    sealedKey: await deps.secrets.seal(request.apiKey, keyContext(site, provider)),
  };
  if (!(await deps.jobs.put(job, existing)))
    throw new ConflictError(`An import of ${HISTORY_KEYS[provider].label} history was just started.`);
  try {
    await deps.invoke(site, provider, job.run);
  } catch (error) {
    // Not left running: a new start (with the key again) resumes it at once instead of waiting out the stall.
    const stopped = { ...job, status: 'failed' as const, error: 'The import could not be started.', sealedKey: null };
    await deps.jobs.put({ ...stopped, updated: deps.clock() }, job);
    throw error;
  }
  return job;
}

/** How a run ended: the job finished or stopped, it needs another run (the deadline came), or another run holds it. */
export type ImportRunOutcome = 'done' | 'failed' | 'continue' | 'superseded' | 'idle';

/** What the user reads of an error that stopped a job (the provider's words are kept, clipped). */
function errorText(error: unknown, provider: Provider): string {
  const label = HISTORY_KEYS[provider].label;
  const message = error instanceof Error ? error.message : String(error);
  const status =
    (error as { status?: unknown; statusCode?: unknown }).statusCode ?? (error as { status?: unknown }).status;
  const why =
    status === 401 || status === 403
      ? `${label} refused the key (${status}): check that it is valid and can read the lists docs/payments.md names. `
      : status === 429
        ? `${label} kept answering "too many requests" after backing off. `
        : '';
  return clip(`${why}${message}`, 300);
}

/**
 * Advances a site's import job until `deadline` (ms since epoch; the imports function's timeout less a
 * minute): reads up to `IMPORT_BATCH_OBJECTS` objects a page at a time (rate limits backed off, at
 * least their `Retry-After`: `readPage`), imports their facts through the bulk import
 * (`importPayments`: idempotent, so a batch read again after a crash counts nothing twice), then saves
 * the list, cursor and counts on the job. Takes the job over as run `run` first. When every list is
 * read, or an error stops it, the sealed key is removed with the last save.
 * Returns `continue` when the deadline came first (the caller invokes the function again).
 */
export async function runHistoryImport(
  deps: ImportRunDeps,
  siteDomain: string,
  provider: Provider,
  run: string,
  deadline: number,
): Promise<ImportRunOutcome> {
  let job = await deps.jobs.get(siteDomain, provider);
  if (!job || job.status !== 'running' || job.sealedKey === null) return 'idle';
  const save = async (next: ImportJob): Promise<boolean> => {
    const ok = await deps.jobs.put(next, job!);
    if (ok) job = next;
    return ok;
  };
  if (job.run !== run && !(await save({ ...job, run, updated: deps.clock() }))) return 'superseded';
  const end = async (fields: Partial<ImportJob>): Promise<ImportRunOutcome> =>
    (await save({ ...job!, ...fields, sealedKey: null, updated: deps.clock() }))
      ? (fields.status as ImportRunOutcome)
      : 'superseded';
  try {
    const site = await deps.sites.getSite(siteDomain);
    if (!site) return await end({ status: 'failed', error: `The site ${siteDomain} no longer exists.` });
    const apiKey = await deps.secrets.open(job.sealedKey!, keyContext(siteDomain, provider));
    const source = deps.sources(provider, apiKey, job.scope ?? undefined);
    const range = { since: job.since, until: job.until };
    const batch = deps.batchObjects ?? IMPORT_BATCH_OBJECTS;
    while (job.kind < source.kinds.length) {
      if (deps.clock() >= deadline) return 'continue';
      let { kind, cursor } = job;
      const facts: ProviderFacts[] = [];
      const counts = { ...job.counts };
      const invalid = [...job.invalid];
      let objects = 0;
      // A page that fails ends the batch: what was read before it is imported and saved, then the job stops.
      let stopped: unknown = null;
      while (kind < source.kinds.length && objects < batch && deps.clock() < deadline) {
        let page;
        try {
          page = await readPage(source, source.kinds[kind]!, cursor, range, deps.pages);
        } catch (error) {
          stopped = error;
          break;
        }
        const mapped = mapPage(source, source.kinds[kind]!, page.objects);
        objects += page.objects.length;
        facts.push(...mapped.facts);
        counts.read += page.objects.length;
        counts.skipped += mapped.skipped;
        counts.failed += mapped.invalid.length;
        counts.imported += page.objects.length - mapped.skipped - mapped.invalid.length;
        invalid.push(...mapped.invalid.slice(0, MAX_INVALID_LINES - invalid.length).map((l) => clip(l, 200)));
        if (page.next === null) [kind, cursor] = [kind + 1, null];
        else cursor = page.next;
      }
      if (facts.length > 0) await importPayments(deps.payments, site, facts);
      if (!(await save({ ...job, kind, cursor, counts, invalid, updated: deps.clock() }))) return 'superseded';
      if (stopped !== null) throw stopped;
    }
    return await end({ status: 'done', error: null });
  } catch (error) {
    if (error instanceof PaymentImportError) return await end({ status: 'failed', error: clip(error.message, 300) });
    return await end({ status: 'failed', error: errorText(error, provider) });
  }
}
