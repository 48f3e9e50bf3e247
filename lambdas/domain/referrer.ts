import { CLICK_IDS } from './channel-rules.js';

/** Schemes whose referrers name another place; `android-app:` carries the app id as its host. */
const REFERRER_SCHEMES = new Set(['http:', 'https:', 'android-app:']);

function withoutWww(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}

function withoutTrailingDot(host: string): string {
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/**
 * The referrer host to keep for an event, or null (`docs/ingestion.md` "The event's fields" `r`: "only its host
 * is kept, and only when it is another site").
 *
 * - `referrer`: the tracker's `r`, a full URL or null.
 * - `pageHost`: host of the page URL (`u`).
 * - `siteDomain`: the site's configured domain (`s`).
 *
 * Returns the referrer URL's host, lowercased (`www.` kept; the channel rules
 * ignore it), or null when the referrer is missing, unparseable, not http(s) or
 * `android-app:`, or internal navigation: equal to the page host, or equal to /
 * a subdomain of the site domain (a leading `www.` on either side is ignored, so
 * a site configured as `www.example.com` also treats `example.com` as itself).
 * `android-app://com.google.android.gm/…` gives the app id `com.google.android.gm`.
 */
export function referrerHost(referrer: string | null | undefined, pageHost: string, siteDomain: string): string | null {
  const text = referrer?.trim();
  if (!text) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (!REFERRER_SCHEMES.has(url.protocol)) return null;
  // Non-special schemes (android-app:) keep the host's case; http(s) are already lowercased.
  const host = withoutTrailingDot(url.hostname.toLowerCase());
  // No DNS name is longer (RFC 1035 §2.3.4); the referrer_host column holds no more.
  if (!host || host.length > 253) return null;
  if (url.protocol === 'android-app:') return host;

  const page = withoutTrailingDot(pageHost.trim().toLowerCase());
  if (host === page || url.host.toLowerCase() === page) return null;
  const site = withoutWww(withoutTrailingDot(siteDomain.trim().toLowerCase()));
  const bare = withoutWww(host);
  if (site && (bare === site || bare.endsWith(`.${site}`))) return null;
  return host;
}

/** Campaign tags and click ids of a page URL, as stored on the event (`docs/ingestion.md` "The event's fields"; TrackedEvent `utm_*`). */
export interface CampaignParams {
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  /** Lowercased names of the click-id params present (with a value), in URL order, each once. */
  clickIds: string[];
}

/** The longest tag value kept (TrackedEvent `utm_*` columns are at most 256 characters). */
export const MAX_CAMPAIGN_VALUE = 256;

const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
/**
 * Stand-ins for utm_source when it is absent, in order: `ref` (Product Hunt,
 * Plausible's convention), `source`, `via` (Rewardful-style referral links).
 */
const SOURCE_FALLBACKS = ['ref', 'source', 'via'] as const;
const WANTED = new Set<string>([...UTM_KEYS, ...SOURCE_FALLBACKS]);
const CLICK_ID_PARAMS = new Set(CLICK_IDS.map((rule) => rule.param));

/** Trimmed, empty → null, cut to MAX_CAMPAIGN_VALUE UTF-16 units without splitting a surrogate pair. */
function clean(value: string): string | null {
  const v = value.trim();
  if (!v) return null;
  if (v.length <= MAX_CAMPAIGN_VALUE) return v;
  const code = v.charCodeAt(MAX_CAMPAIGN_VALUE - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? MAX_CAMPAIGN_VALUE - 1 : MAX_CAMPAIGN_VALUE;
  return v.slice(0, end);
}

/**
 * Reads the campaign tags and click ids from a page URL's query string.
 *
 * Returns `{ utm_source, utm_medium, utm_campaign, utm_term, utm_content, clickIds }`.
 * Parameter names match case-insensitively (`UTM_Source`, `GCLID`); for a repeated
 * parameter the first non-empty value wins. Values are trimmed, empty becomes
 * null, and each is cut to 256 characters. `utm_source` falls back to `ref`, then
 * `source`, then `via`. `clickIds` lists the click-id params known to the channel
 * rules (`CLICK_IDS`) that carry a value — an empty `gclid=` is a broken link
 * template, not an ad click. Query strings inside a hash route are not read.
 */
export function campaignParams(pageUrl: URL): CampaignParams {
  const values = new Map<string, string>();
  const clickIds: string[] = [];
  for (const [name, raw] of pageUrl.searchParams) {
    const key = name.toLowerCase();
    if (CLICK_ID_PARAMS.has(key)) {
      if (raw.trim() && !clickIds.includes(key)) clickIds.push(key);
    } else if (WANTED.has(key) && !values.has(key)) {
      const value = clean(raw);
      if (value !== null) values.set(key, value);
    }
  }
  const get = (key: string): string | null => values.get(key) ?? null;
  let source = get('utm_source');
  for (const key of SOURCE_FALLBACKS) source ??= get(key);
  return {
    utm_source: source,
    utm_medium: get('utm_medium'),
    utm_campaign: get('utm_campaign'),
    utm_term: get('utm_term'),
    utm_content: get('utm_content'),
    clickIds,
  };
}
