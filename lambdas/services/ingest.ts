import { randomUUID } from 'node:crypto';
import type { InboundEvent } from '../domain/inbound.js';
import { enrichEvent, type DropReason, type RequestFacts } from '../domain/enrich.js';
import type { TrackedEvent } from '../domain/tracked-event.js';
import type { SiteConfig } from '../domain/site.js';
import type { SiteRateLimiter } from '../domain/rate-limit.js';
import { parseUserAgent } from '../domain/user-agent.js';
import { saltDay } from '../domain/visitor.js';
import type { EventStream, SaltStore, SiteDirectory } from '../ports.js';

export interface IngestDeps {
  sites: SiteDirectory;
  salts: SaltStore;
  stream: EventStream;
  limiter: SiteRateLimiter;
  newEventId?: () => string;
}

/** What one request (or one import chunk) came to. */
export interface IngestOutcome {
  accepted: TrackedEvent[];
  dropped: Partial<Record<DropReason, number>>;
}

export type IngestRequest = Omit<RequestFacts, 'agent'>;

// randomUUID draws from a cached entropy pool; randomBytes(16) per event was a fifth of ingest time.
const randomEventId = (): string => randomUUID();

/** The directory key of `s`: trimmed, lowercased; '' (a repaired non-string) names no site. */
const siteKey = (s: string): string => s.trim().toLowerCase();

/**
 * The ingestion use case: applies the drop and enrichment rules to each event
 * and writes the kept ones to the stream in one call.
 *
 * @param events parsed inbound events (`parseEventBody`), at most 50 per request
 * @param request facts of the request: time (ms), IP, User-Agent, country, language
 * @param options.rateLimit false for historic imports (`docs/ingestion.md` "Silent drops" applies to live traffic)
 * @throws UnavailableError when a site lookup, the salt or the stream write fails (→ 503)
 */
export async function ingestEvents(
  deps: IngestDeps,
  events: readonly InboundEvent[],
  request: IngestRequest,
  options: { rateLimit: boolean } = { rateLimit: true },
): Promise<IngestOutcome> {
  const outcome = await enrichAll(deps, events, request, options);
  if (outcome.accepted.length > 0) await deps.stream.put(outcome.accepted);
  return outcome;
}

/** `ingestEvents` without the stream write, for callers that batch writes across requests (import). */
export async function enrichAll(
  deps: IngestDeps,
  events: readonly InboundEvent[],
  request: IngestRequest,
  options: { rateLimit: boolean },
): Promise<IngestOutcome> {
  const agent = parseUserAgent(request.userAgent);
  if (agent.bot) return { accepted: [], dropped: { bot: events.length } };
  const facts: RequestFacts = { ...request, agent };
  const domains = [...new Set(events.map((e) => siteKey(e.s)))];
  const sites = new Map<string, SiteConfig | null>(
    await Promise.all(domains.map(async (d) => [d, await deps.sites.getSite(d)] as const)),
  );
  const salt = await deps.salts.saltFor(saltDay(request.now));
  const newEventId = deps.newEventId ?? randomEventId;
  const withinRateLimit = options.rateLimit
    ? (site: SiteConfig) => deps.limiter.take(site.domain, site.rate_limit, request.now)
    : () => true;

  const outcome: IngestOutcome = { accepted: [], dropped: {} };
  for (const event of events) {
    const result = enrichEvent({
      event,
      site: sites.get(siteKey(event.s)) ?? null,
      request: facts,
      salt,
      eventId: newEventId(),
      withinRateLimit,
    });
    if (result.ok) outcome.accepted.push(result.event);
    else outcome.dropped[result.reason] = (outcome.dropped[result.reason] ?? 0) + 1;
  }
  return outcome;
}
