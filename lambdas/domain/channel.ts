import {
  CLICK_IDS,
  GOOGLE_TLD_RULE,
  HOST_LISTS,
  HOSTS_WITHOUT_SUBDOMAINS,
  IGNORED_HOST_PREFIXES,
  PAID_MEDIUM_PREFIXES,
  PAID_MEDIUM_SUBSTRINGS,
  PAID_MEDIUMS,
  SHOPPING_CAMPAIGN,
  UTM_MEDIUM_CHANNELS,
  UTM_MEDIUM_PREFIX_CHANNELS,
  UTM_MEDIUM_SUBSTRING_CHANNELS,
  UTM_SOURCE_CHANNELS,
  type ClickIdRule,
} from './channel-rules.js';
import { own } from './dict.js';

/**
 * The channels a visit can be credited to (`docs/ingestion.md` "Channels"; `docs/api.md` "Breakdowns"
 * `channel` dimension). Beyond the required eight:
 * - Video: GA4 has an organic video channel with its own site list.
 * - Newsletter: newsletter platforms (Substack, beehiiv, …) and
 *   `utm_medium=newsletter`; a feature or sponsorship is its own way of getting
 *   traffic, apart from webmail clicks and marketing email.
 * - Affiliate: GA4's affiliates channel (`utm_medium=affiliate`, network click ids).
 * - Shopping: GA4's organic shopping (marketplaces, shopping campaigns).
 * GA4's Display, Paid Search/Social/Video/Shopping and Cross-network are all Paid
 * here; its SMS, Audio and push channels have no equivalent and fall to the
 * source/referrer rules.
 */
export const CHANNELS = [
  'Direct',
  'Search',
  'AI',
  'Social',
  'Communities',
  'Video',
  'Email',
  'Newsletter',
  'Paid',
  'Affiliate',
  'Shopping',
  'Referral',
] as const;
export type Channel = (typeof CHANNELS)[number];

export interface ChannelInput {
  /** Referrer host from `referrerHost()`: lowercased, another site, or null. */
  referrerHost: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  /** Names of click-id query params present on the page URL, lowercased. */
  clickIds: readonly string[];
}

export interface ChannelResult {
  channel: Channel;
  /** Display name (`Google`, `Hacker News`), else the raw host or utm_source; null for Direct. */
  source: string | null;
}

interface HostMatch {
  readonly channel: Channel;
  readonly name: string;
  /** False for hosts whose subdomains are other products. */
  readonly subdomains: boolean;
}

// Lookup tables built once at module load: one Map probe per label per event.
const NO_SUBDOMAINS = new Set(HOSTS_WITHOUT_SUBDOMAINS);
const HOST_INDEX = new Map<string, HostMatch>();
const SOURCE_INDEX = new Map<string, HostMatch>();
for (const list of HOST_LISTS) {
  for (const entry of list.entries) {
    for (const host of [...entry.hosts, ...(entry.apps ?? [])]) {
      // First listing wins; the table test guarantees there are no clashes.
      if (!HOST_INDEX.has(host))
        HOST_INDEX.set(host, { channel: list.channel, name: entry.name, subdomains: !NO_SUBDOMAINS.has(host) });
    }
    const match: HostMatch = { channel: list.channel, name: entry.name, subdomains: true };
    const lower = entry.name.toLowerCase();
    // Names of one or two letters (X, VK, Pi) are too ambiguous as utm_source unless listed as an alias.
    const names = lower.length > 2 ? [lower, lower.replace(/ /g, '')] : [];
    for (const alias of [...names, ...(entry.aliases ?? [])]) {
      if (!SOURCE_INDEX.has(alias)) SOURCE_INDEX.set(alias, match);
    }
  }
}
const IGNORED_PREFIXES = new Set(IGNORED_HOST_PREFIXES);
const GOOGLE_EXTRA_TLDS = new Set<string>(GOOGLE_TLD_RULE.extraTlds);
const GOOGLE_SECOND_LEVELS = new Set<string>(GOOGLE_TLD_RULE.secondLevels);
const PAID_EXACT = new Set(PAID_MEDIUMS);
const CLICK_ID_INDEX = new Map<string, ClickIdRule>(CLICK_IDS.map((rule) => [rule.param, rule]));

/** Drops a leading `www.` (the form reported as `source` for unknown hosts). */
function withoutWww(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}

/** Drops front-end prefixes (IGNORED_HOST_PREFIXES) while at least two labels remain. */
function stripFrontEndPrefixes(host: string): string {
  let h = host;
  for (;;) {
    const dot = h.indexOf('.');
    if (dot < 0 || h.indexOf('.', dot + 1) < 0 || !IGNORED_PREFIXES.has(h.slice(0, dot))) return h;
    h = h.slice(dot + 1);
  }
}

/** `google.de`, `news.google.co.uk` → `google.com`, `news.google.com` (GOOGLE_TLD_RULE). */
function foldGoogleTld(host: string): string {
  if (!host.includes(`${GOOGLE_TLD_RULE.label}.`)) return host; // skip the split for the other 99%
  const labels = host.split('.');
  const n = labels.length;
  const last = labels[n - 1] ?? '';
  let at = -1;
  if (n >= 2 && labels[n - 2] === GOOGLE_TLD_RULE.label && (last.length === 2 || GOOGLE_EXTRA_TLDS.has(last)))
    at = n - 2;
  else if (
    n >= 3 &&
    labels[n - 3] === GOOGLE_TLD_RULE.label &&
    GOOGLE_SECOND_LEVELS.has(labels[n - 2] ?? '') &&
    last.length === 2
  )
    at = n - 3;
  if (at < 0) return host;
  const prefix = labels.slice(0, at).join('.');
  return prefix ? `${prefix}.${GOOGLE_TLD_RULE.canonical}` : GOOGLE_TLD_RULE.canonical;
}

/**
 * Finds the table entry for a referrer host (or Android app id): lowercased,
 * front-end prefixes dropped, Google country domains folded, then the host and
 * each parent domain in turn (`old.reddit.com` → `reddit.com`). A parent in
 * HOSTS_WITHOUT_SUBDOMAINS does not match its subdomains.
 */
export function matchHost(host: string): { channel: Channel; name: string } | undefined {
  const lower = host.toLowerCase();
  let key = foldGoogleTld(stripFrontEndPrefixes(lower.endsWith('.') ? lower.slice(0, -1) : lower));
  let exact = true;
  for (;;) {
    const hit = HOST_INDEX.get(key);
    if (hit && (exact || hit.subdomains)) return hit;
    const dot = key.indexOf('.');
    if (dot < 0) return undefined;
    key = key.slice(dot + 1);
    exact = false;
  }
}

/** A `utm_source` value as a known service: by name or alias (`hn`, `Google`), else as a host (`chatgpt.com`). */
function matchSource(source: string): { channel: Channel; name: string } | undefined {
  return SOURCE_INDEX.get(source) ?? (source.includes('.') ? matchHost(source) : undefined);
}

function isPaidMedium(medium: string): boolean {
  return (
    PAID_EXACT.has(medium) ||
    PAID_MEDIUM_PREFIXES.some((prefix) => medium.startsWith(prefix)) ||
    PAID_MEDIUM_SUBSTRINGS.some((part) => medium.includes(part))
  );
}

function mediumChannel(medium: string): Channel | undefined {
  return (
    own(UTM_MEDIUM_CHANNELS, medium) ??
    UTM_MEDIUM_PREFIX_CHANNELS.find(([prefix]) => medium.startsWith(prefix))?.[1] ??
    UTM_MEDIUM_SUBSTRING_CHANNELS.find(([part]) => medium.includes(part))?.[1]
  );
}

function norm(value: string | null): string | null {
  const v = value?.trim().toLowerCase();
  return v ? v : null;
}

/**
 * Classifies one visit's entry into a channel and a source.
 *
 * Input: `{ referrerHost, utmSource, utmMedium, utmCampaign, clickIds }` (see
 * ChannelInput); output `{ channel, source }`. Rules, first match wins
 * (`docs/ingestion.md` "Channels"; GA4 default channel group where it fits):
 * 1. Paid: a paid click id (gclid, msclkid, …; fbclid only with a paid medium)
 *    or a paid utm_medium (GA4 `.*cp.*|ppc|retargeting|paid.*` and its Display mediums).
 * 2. A checkout the buyer returns from (Stripe, PayPal, …) → Direct: it ends the
 *    visit that sent them, and must not take the credit for the payment.
 * 3. A known utm_medium (email, newsletter, social, affiliate, referral, organic,
 *    *video*, …): tags are deliberate, so they beat the referrer (GA4 does the same).
 * 4. An affiliate or email click id (irclickid, awc, mc_cid, …).
 * 5. The referrer host's channel from the host lists.
 * 6. A utm_source that names a known service (`google`, `hn`, `chatgpt.com`) or a
 *    channel (GA4: `email`).
 * 7. Any other referrer → Referral.
 * 8. GA4 organic shopping: utm_campaign matching its shop/shopping pattern.
 * 9. A utm_source or utm_medium nobody knows, with no referrer: GA4 calls this
 *    Unassigned; we say Referral, because someone tagged a link to the site and it
 *    was followed from somewhere — it was not typed in.
 * 10. Otherwise Direct (a utm_campaign alone names a campaign, not a place).
 *
 * Source: the display name of the matched referrer host, else of the matched
 * utm_source, else the click id's network (Paid and click-id rules only), else
 * the raw utm_source, else the referrer host without `www.`; null for Direct.
 */
export function classifyChannel(input: ChannelInput): ChannelResult {
  const medium = norm(input.utmMedium);
  const rawSource = input.utmSource?.trim() || null;
  const sourceKey = norm(rawSource);
  const host = input.referrerHost ? input.referrerHost.toLowerCase() : null;
  const hostHit = host ? matchHost(host) : undefined;
  const sourceHit = sourceKey ? matchSource(sourceKey) : undefined;

  const sourceName = (clickSource?: string): string | null =>
    hostHit?.name ?? sourceHit?.name ?? clickSource ?? rawSource ?? (host ? withoutWww(host) : null);

  // 1. Paid.
  const paidMedium = medium !== null && isPaidMedium(medium);
  let paidClick: ClickIdRule | undefined;
  let otherClick: ClickIdRule | undefined;
  for (const id of input.clickIds) {
    const rule = CLICK_ID_INDEX.get(id);
    if (!rule) continue;
    if (rule.channel === 'Paid') {
      if (!paidClick && (!rule.onlyWithPaidMedium || paidMedium)) paidClick = rule;
    } else if (!otherClick) otherClick = rule;
  }
  if (paidMedium || paidClick) return { channel: 'Paid', source: sourceName(paidClick?.source) };

  // 2. Returning from a checkout.
  if (hostHit?.channel === 'Direct') return { channel: 'Direct', source: null };

  // 3. A known utm_medium.
  const byMedium = medium ? mediumChannel(medium) : undefined;
  if (byMedium) return { channel: byMedium, source: sourceName(otherClick?.source) };

  // 4. Affiliate / email click ids.
  if (otherClick) return { channel: otherClick.channel, source: sourceName(otherClick.source) };

  // 5. Known referrer host.
  if (hostHit) return { channel: hostHit.channel, source: hostHit.name };

  // 6. Known utm_source (a checkout's name, e.g. a success URL tagged `utm_source=stripe`, is Direct).
  if (sourceHit)
    return sourceHit.channel === 'Direct'
      ? { channel: 'Direct', source: null }
      : { channel: sourceHit.channel, source: sourceHit.name };
  const bySource = sourceKey ? own(UTM_SOURCE_CHANNELS, sourceKey) : undefined;
  if (bySource) return { channel: bySource, source: rawSource };

  // 7. Unknown referrer.
  if (host) return { channel: 'Referral', source: sourceName() };

  // 8. GA4 organic shopping by campaign name.
  const campaign = norm(input.utmCampaign);
  if (campaign && SHOPPING_CAMPAIGN.test(campaign)) return { channel: 'Shopping', source: rawSource };

  // 9. Tagged but unknown.
  if (rawSource || medium) return { channel: 'Referral', source: rawSource };

  // 10. Nothing to go on.
  return { channel: 'Direct', source: null };
}
