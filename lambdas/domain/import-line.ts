import { createHash } from 'node:crypto';
import * as z from 'zod';
import { inboundEventSchema, type InboundEvent } from './inbound.js';
import { countryFromHeaders } from './country.js';
import { languageFromAcceptLanguage } from './language.js';
import type { IngestRequest } from '../services/ingest.js';

/**
 * One line of `footfall import events <file.jsonl>`: the inbound event fields
 * (`docs/ingestion.md` "The event's fields") plus what a live request would have told us — `ts` (RFC 3339,
 * required: historic events keep their time), `ua`, `ip`, `country` (ISO
 * alpha-2; without one, `importEventLines` looks `ip` up in the country
 * database, as for a live event without a CDN header), `language` (an
 * Accept-Language value or a tag). `s` may be left out when the import names
 * a site with `--site`.
 */
export const importLineSchema = inboundEventSchema.extend({
  s: z.string().min(1).max(253).optional(),
  ts: z.iso.datetime({ offset: true }),
  ua: z.string().max(4096).optional(),
  ip: z.string().max(64).optional(),
  country: z.string().max(8).nullish(),
  language: z.string().max(256).nullish(),
});
export type ImportLine = z.infer<typeof importLineSchema>;

/** A line that could not be imported, with its 1-based line number. */
export class ImportLineError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/**
 * Parses one line into the inbound event and the request facts the same
 * enrichment uses (country and language normalised by the live rules).
 *
 * @param site the `--site` domain: fills a missing `s`; a line naming another site is an error
 * @param now the import's clock, ms since epoch: a line whose `ts` is later is an error, because reports
 *   read a month that is still open as if nothing were stamped after today (`docs/data-model.md`)
 * @throws ImportLineError for bad JSON, a failing field, another site or a time after `now`
 */
export function parseImportLine(
  text: string,
  lineNumber: number,
  site?: string,
  now?: number,
): { event: InboundEvent; request: IngestRequest } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ImportLineError(lineNumber, 'not JSON');
  }
  const parsed = importLineSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ImportLineError(lineNumber, `${issue?.path.join('.') || 'line'}: ${issue?.message ?? 'invalid'}`);
  }
  const line = parsed.data;
  const s = line.s ?? site;
  if (!s) throw new ImportLineError(lineNumber, 's: missing (give it on the line or with --site)');
  if (site && s.toLowerCase() !== site.toLowerCase())
    throw new ImportLineError(lineNumber, `s: ${s} is not the imported site ${site}`);
  const { ts, ua, ip, country, language, ...event } = line;
  if (now !== undefined && Date.parse(ts) > now)
    throw new ImportLineError(lineNumber, `ts: ${ts} is later than now (an import holds past events)`);
  return {
    event: { ...event, s },
    request: {
      now: Date.parse(ts),
      userAgent: ua ?? '',
      ip: ip ?? '',
      country: countryFromHeaders({ 'x-country-code': country ?? undefined }),
      language: languageFromAcceptLanguage(language ?? undefined),
    },
  };
}

/**
 * The event id of an imported line: a UUID (version 8, RFC 9562 §5.8: its
 * bits are ours) from SHA-256 of the site, the line's text (trimmed) and its
 * occurrence — how many identical lines came before it in the same input.
 *
 * Importing the same line again gives the same id, so the import can tell it
 * is already there and the sessionizer, which keeps each event id once, could
 * not count it twice anyway. The occurrence, not the line number, is the
 * position: a file imported again after lines were added or removed above a
 * line still gives that line its id, while two identical lines in one file
 * (two page views in the same second, in an export at second precision) stay
 * two events.
 *
 * @param site the site's domain, lowercase
 * @param occurrence 0 for the first line with this text in the input, 1 for the next, …
 */
export function importedEventId(site: string, text: string, occurrence: number): string {
  const hex = createHash('sha256').update(`${site}\n${occurrence}\n${text.trim()}`).digest('hex');
  const variant = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** True for an id `importedEventId` made (live events carry random version-4 UUIDs). */
export const isImportedEventId = (id: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id);
