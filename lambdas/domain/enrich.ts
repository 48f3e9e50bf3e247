import type { InboundEvent } from './inbound.js';
import type { TrackedEvent } from './tracked-event.js';
import { hostBelongsToSite, type SiteConfig } from './site.js';
import { normalizeGoalName } from './goal-name.js';
import { propsJson } from './props.js';
import { campaignParams, referrerHost } from './referrer.js';
import { classifyChannel } from './channel.js';
import { deviceFromWidth } from './device.js';
import { resolveVisitor } from './visitor.js';
import type { UserAgentInfo } from './user-agent.js';

/** Why an event was dropped silently (`docs/ingestion.md` "Silent drops"); each is logged in an `events dropped` line with its count. */
export const DROP_REASONS = [
  'bot',
  'unknown_type',
  'unknown_site',
  'goal_without_name',
  'invalid_url',
  'foreign_host',
  'rate_limited',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

// A Map, not an object literal: `n: "toString"` must not find Object.prototype's.
const EVENT_TYPES: ReadonlyMap<string, TrackedEvent['type']> = new Map([
  ['pageview', 'pageview'],
  ['goal', 'goal'],
]);

/** Longest host name DNS allows (RFC 1035 §2.3.4); the `hostname` column holds no more. */
const MAX_HOSTNAME = 253;

/** The page URL of `u` when it is an absolute http(s) URL, else null (`docs/ingestion.md` "Silent drops": such a page has no host of the site). */
function pageUrl(u: string): URL | null {
  const url = URL.parse(u);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? url : null;
}

/** What the request (or an imported line) tells us besides the event body. */
export interface RequestFacts {
  /** Event time, ms since epoch (UTC). */
  now: number;
  ip: string;
  userAgent: string;
  /** Parsed `userAgent` (see `parseUserAgent`); the caller caches it per UA. */
  agent: UserAgentInfo;
  country: string | null;
  language: string | null;
}

export interface EnrichInput {
  event: InboundEvent;
  /** The site named by `event.s`, or null when no such site exists. */
  site: SiteConfig | null;
  request: RequestFacts;
  /** Salt of the UTC day of `request.now` (see `saltDay`). */
  salt: string;
  eventId: string;
  /** Asked last, so dropped events do not use up the site's rate limit. */
  withinRateLimit: (site: SiteConfig) => boolean;
}

export type EnrichResult = { ok: true; event: TrackedEvent } | { ok: false; reason: DropReason };

/** `TrackedEvent.source` holds at most this many characters (a host's maximum length). */
const MAX_SOURCE_CHARS = 253;

/** Page path as reported: the URL path, plus the fragment when it is a hash route (`#/…`). */
function pagePath(url: URL): string {
  const path = url.hash.startsWith('#/') ? url.pathname + url.hash : url.pathname;
  return path.slice(0, 2048);
}

/**
 * Applies the drop rules of `docs/ingestion.md` "Silent drops" in order and, for a kept event, the
 * enrichment (`docs/ingestion.md` "Enrichment"): visitor (`docs/security.md` "What is stored about a visitor"), referrer host, UTM,
 * channel and source, device, browser, OS, country, language.
 *
 * Pure: the clock, the site, the salt and the rate limiter are inputs.
 */
export function enrichEvent(input: EnrichInput): EnrichResult {
  const { event, site, request } = input;
  if (request.agent.bot) return { ok: false, reason: 'bot' };
  const type = EVENT_TYPES.get(event.n);
  if (!type) return { ok: false, reason: 'unknown_type' };
  if (!site) return { ok: false, reason: 'unknown_site' };
  const goal = type === 'goal' ? normalizeGoalName(event.g) : null;
  if (type === 'goal' && !goal) return { ok: false, reason: 'goal_without_name' };
  const url = pageUrl(event.u);
  if (!url) return { ok: false, reason: 'invalid_url' };
  const hostname = url.hostname.toLowerCase();
  if (hostname.length > MAX_HOSTNAME || !hostBelongsToSite(hostname, site.domain))
    return { ok: false, reason: 'foreign_host' };
  if (!input.withinRateLimit(site)) return { ok: false, reason: 'rate_limited' };

  const refHost = referrerHost(event.r, hostname, site.domain);
  const campaign = campaignParams(url);
  const { channel, source } = classifyChannel({
    referrerHost: refHost,
    utmSource: campaign.utm_source,
    utmMedium: campaign.utm_medium,
    utmCampaign: campaign.utm_campaign,
    clickIds: campaign.clickIds,
  });
  const visitor = resolveVisitor({
    v: event.v,
    salt: input.salt,
    site: site.domain,
    ip: request.ip,
    userAgent: request.userAgent,
  });
  return {
    ok: true,
    event: {
      event_id: input.eventId,
      site: site.domain,
      ts: request.now,
      type,
      goal,
      visitor_id: visitor.visitor_id,
      visitor_kind: visitor.visitor_kind,
      hostname,
      path: pagePath(url),
      referrer_host: refHost,
      channel,
      // A raw utm_source (or `ref`) is the source when nobody knows it; cut to the column's limit like the UTM fields.
      source: source === null ? null : source.slice(0, MAX_SOURCE_CHARS),
      utm_source: campaign.utm_source,
      utm_medium: campaign.utm_medium,
      utm_campaign: campaign.utm_campaign,
      utm_term: campaign.utm_term,
      utm_content: campaign.utm_content,
      click_ids: campaign.clickIds.length > 0 ? campaign.clickIds.join(',').slice(0, 256) : null,
      link: type === 'goal' && event.l ? event.l.slice(0, 2048) : null,
      country: request.country,
      language: request.language,
      browser: request.agent.browser,
      browser_version: request.agent.browser_version,
      os: request.agent.os,
      os_version: request.agent.os_version,
      device: deviceFromWidth(event.w),
      screen_width: event.w ?? null,
      props: propsJson(event.p),
    },
  };
}
