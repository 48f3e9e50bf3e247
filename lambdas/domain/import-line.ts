import * as z from 'zod';
import { inboundEventSchema, type InboundEvent } from './inbound.js';
import { countryFromHeaders } from './country.js';
import { languageFromAcceptLanguage } from './language.js';
import type { IngestRequest } from '../services/ingest.js';

/**
 * One line of `footfall import events <file.jsonl>`: the inbound event fields
 * (spec §2.9) plus what a live request would have told us — `ts` (RFC 3339,
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
 * @throws ImportLineError for bad JSON, a failing field or another site
 */
export function parseImportLine(text: string, lineNumber: number, site?: string): { event: InboundEvent; request: IngestRequest } {
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
  if (site && s.toLowerCase() !== site.toLowerCase()) throw new ImportLineError(lineNumber, `s: ${s} is not the imported site ${site}`);
  const { ts, ua, ip, country, language, ...event } = line;
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
