import { LocalEventStream } from '../lambdas/adapters/local-stream.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { CachedSiteDirectory } from '../lambdas/adapters/cached-site-directory.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { SiteRateLimiter } from '../lambdas/domain/rate-limit.js';
import { newSalt } from '../lambdas/domain/visitor.js';
import { ImportLineError, importedEventId, parseImportLine } from '../lambdas/domain/import-line.js';
import { createHash } from 'node:crypto';
import { enrichAll } from '../lambdas/services/ingest.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import type { DropReason } from '../lambdas/domain/enrich.js';
import type { SaltStore } from '../lambdas/ports.js';
import type { CountryLookup } from '../lambdas/domain/country.js';

/** Events written to the stream per put. */
const CHUNK = 500;
/** Errors listed in the summary; the rest are only counted. */
const MAX_LISTED_ERRORS = 20;

/**
 * Salts for historic events: one random salt per day, kept in memory for this
 * import only. The live salts of past days are deleted by design, so a
 * visitor without `v` in an import is only recognised within the import.
 */
class ImportSalts implements SaltStore {
  private readonly salts = new Map<string, string>();
  async saltFor(day: string): Promise<string> {
    let salt = this.salts.get(day);
    if (!salt) this.salts.set(day, (salt = newSalt()));
    return salt;
  }
}

export interface ImportSummary {
  lines: number;
  /** Events written by this import. */
  accepted: number;
  /** Lines whose event an earlier import already wrote (same site, text and occurrence); skipped. */
  already_imported: number;
  dropped: Partial<Record<DropReason, number>>;
  invalid: number;
  errors: string[];
}

/**
 * Historic events (one JSON object per line, `parseImportLine`) through the
 * same validation and enrichment as live ones (bots dropped, no rate limit),
 * onto the local stream under `streamDir`. A bad line is counted and listed
 * with its number, never fatal.
 *
 * Idempotent: each line's event id is `importedEventId` (site, text,
 * occurrence), and a line whose id `options.known` already holds is counted
 * in `already_imported` and not written again — importing a file twice, or a
 * file that grew, adds only the new lines.
 *
 * @param lines read only as this function iterates them: pass a generator
 *   (`openLines` in `cli/lines.ts`), never a readline interface created before
 *   the call — this function awaits before its first read, and lines a readline
 *   interface emits before the first read are lost
 * @param onLine called after each line with the count so far (progress)
 * @param now the import's clock (ms since epoch): lines stamped later are invalid (`parseImportLine`)
 * @param countries the IP-to-country database: a line with `ip` and no valid
 *   `country` gets the database's country, as a live event without a CDN header does
 */
export async function importEventLines(
  dynamo: DynamoConnection,
  streamDir: string,
  lines: AsyncIterable<string> | Iterable<string>,
  options: {
    site?: string;
    now?: number;
    onLine?: (count: number) => void;
    countries?: CountryLookup;
    known?: (site: string) => Promise<ReadonlySet<string>>;
  } = {},
): Promise<ImportSummary> {
  const stream = await LocalEventStream.open(streamDir);
  const deps = {
    sites: new CachedSiteDirectory(new DynamoConfigStore(dynamo), 60_000),
    salts: new ImportSalts(),
    stream,
    limiter: new SiteRateLimiter(),
  };
  const result: ImportSummary = { lines: 0, accepted: 0, already_imported: 0, dropped: {}, invalid: 0, errors: [] };
  const knownBySite = new Map<string, Promise<ReadonlySet<string>>>();
  const knownIn = (site: string) => {
    let known = knownBySite.get(site);
    if (!known) knownBySite.set(site, (known = options.known?.(site) ?? Promise.resolve(new Set<string>())));
    return known;
  };
  // How many times each line's text came so far (keyed by a digest, so 100 MB of distinct lines stays small).
  const seen = new Map<string, number>();
  let pending: TrackedEvent[] = [];
  const flush = async () => {
    if (pending.length > 0) await stream.put(pending);
    pending = [];
  };
  try {
    for await (const text of lines) {
      result.lines++;
      if (text.trim()) {
        try {
          const { event, request } = parseImportLine(text, result.lines, options.site, options.now);
          const site = event.s.trim().toLowerCase();
          const digest = createHash('sha256').update(`${site}\n${text.trim()}`).digest('base64');
          const occurrence = seen.get(digest) ?? 0;
          seen.set(digest, occurrence + 1);
          const eventId = importedEventId(site, text, occurrence);
          if ((await knownIn(site)).has(eventId)) {
            result.already_imported++;
            options.onLine?.(result.lines);
            continue;
          }
          const country = request.country ?? options.countries?.countryOf(request.ip) ?? null;
          const outcome = await enrichAll(
            { ...deps, newEventId: () => eventId },
            [event],
            { ...request, country },
            { rateLimit: false },
          );
          pending.push(...outcome.accepted);
          result.accepted += outcome.accepted.length;
          for (const [reason, n] of Object.entries(outcome.dropped))
            result.dropped[reason as DropReason] = (result.dropped[reason as DropReason] ?? 0) + n;
        } catch (error) {
          if (!(error instanceof ImportLineError)) throw error;
          result.invalid++;
          if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push(error.message);
        }
      }
      if (pending.length >= CHUNK) await flush();
      options.onLine?.(result.lines);
    }
    await flush();
  } finally {
    await stream.close();
  }
  return result;
}
