import * as z from 'zod';

/** Attribution models (`docs/payments.md` "Customers and attribution"); `last_non_direct` is the default. */
export const ATTRIBUTION_MODELS = ['last_non_direct', 'last_touch', 'first_touch'] as const;
export type AttributionModel = (typeof ATTRIBUTION_MODELS)[number];

/** Default lookback window for attribution, in days (`docs/payments.md` "Customers and attribution"). */
export const DEFAULT_LOOKBACK_DAYS = 30;
/**
 * Default per-site ingestion limit: events per second per ingest instance (one
 * Lambda execution environment, or the local server), with bursts of twice that.
 * Our choice where `docs/api.md` "Limits" leaves the value open; see `docs/api.md`.
 */
export const DEFAULT_RATE_LIMIT = 1000;

/** True when `tz` is an IANA zone name this runtime knows (e.g. `Europe/Berlin`). */
export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.length > 0;
  } catch {
    return false;
  }
}

/** A lowercase DNS name with at least one dot and no scheme, port or path (RFC 1123 labels). */
export const domainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/,
    'must be a domain name such as example.com',
  );

const ACCOUNT_ID_RULE = 'must be 1-64 letters, digits, dot, dash or underscore';
export const accountIdSchema = z
  .string({ error: ACCOUNT_ID_RULE })
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, ACCOUNT_ID_RULE);

// The rule as the message for a missing value too, so that "required" says what to give.
const TIMEZONE_RULE = 'must be an IANA timezone such as Europe/Berlin';
const timezoneSchema = z.string({ error: TIMEZONE_RULE }).refine(isValidTimezone, TIMEZONE_RULE);
const attributionSchema = z.enum(ATTRIBUTION_MODELS);
const lookbackSchema = z.number().int().min(1).max(365);
const rateLimitSchema = z.number().int().min(1).max(1_000_000);
const generationSchema = z.number().int().min(0).max(1_000_000);

/** The settings `footfall sites set` may change; absent fields stay as they are. */
export const siteSettingsSchema = z
  .object({
    timezone: timezoneSchema,
    attribution: attributionSchema,
    lookback_days: lookbackSchema,
    rate_limit: rateLimitSchema,
  })
  .partial();
export type SiteSettings = z.infer<typeof siteSettingsSchema>;

export const siteConfigSchema = z.object({
  domain: domainSchema,
  timezone: timezoneSchema,
  account: accountIdSchema,
  attribution: attributionSchema.default('last_non_direct'),
  lookback_days: lookbackSchema.default(DEFAULT_LOOKBACK_DAYS),
  rate_limit: rateLimitSchema.default(DEFAULT_RATE_LIMIT),
  /** RFC 3339 creation time. */
  created: z.string(),
  /** The live data generation (`dataNamespace`); absent = 0, the domain itself. Set only by `footfall rebuild`'s switch. */
  generation: generationSchema.optional(),
  /** The generation a running `footfall rebuild` is building; while set, every write path writes it too (`writeTargets`). */
  building: generationSchema.optional(),
  /** A generation replaced by a rebuild whose items are still to be deleted (`footfall rebuild` cleans it up). */
  retired: generationSchema.optional(),
  /** The storage layout (`DATA_LAYOUT`) the live generation's items are written in; absent = 1, the layout before versions. */
  layout: z.number().int().min(1).optional(),
});

/** A site as stored: its domain, timezone, owning account and attribution settings. */
export type SiteConfig = z.infer<typeof siteConfigSchema>;

/**
 * True when `host` is the site's domain or one of its subdomains (`docs/ingestion.md` "Silent drops").
 * Both are compared lowercase; a leading `www.` on the configured domain is not special.
 */
export function hostBelongsToSite(host: string, domain: string): boolean {
  const h = host.toLowerCase();
  return h === domain || h.endsWith(`.${domain}`);
}

/**
 * The data namespace of a site's generation: the string every key of data
 * derived for the site is built from (visits, rollups, payments, customers,
 * aliases, pending credits; `docs/data-model.md` "Generations"). Generation 0
 * is the domain itself, so data stored before generations existed is
 * generation 0 and nothing moves; generation n > 0 is `<domain>~<n>` (`~` can
 * never appear in a domain, so no site's namespace is another's).
 */
export function dataNamespace(domain: string, generation = 0): string {
  return generation === 0 ? domain : `${domain}~${generation}`;
}

/** The domain whose generation `ns` is (`dataNamespace`'s inverse: `~` never occurs in a domain). */
export function domainOfNamespace(ns: string): string {
  const cut = ns.indexOf('~');
  return cut < 0 ? ns : ns.slice(0, cut);
}

/**
 * The namespace readers and writers of `site` use: its live generation's.
 * The one place a SiteConfig becomes the `site` string the stores receive;
 * every service calls this, never `site.domain`, for derived data.
 */
export function namespaceOf(site: SiteConfig): string {
  return dataNamespace(site.domain, site.generation ?? 0);
}

/**
 * The sites to write for one change of `site`'s derived data: the live
 * generation, and while a rebuild runs (`building`) the generation it builds
 * too, so events and payments arriving during a rebuild reach both
 * (`docs/rebuild.md`). Each target has no `building`, so passing a target to a
 * service that fans out again writes it once.
 */
export function writeTargets(site: SiteConfig): SiteConfig[] {
  const { building, ...live } = site;
  if (building === undefined) return [site];
  return [live, { ...live, generation: building }];
}

/**
 * The storage layout of derived items this code reads and writes. A release
 * that changes how an existing derived item type is stored (its key, or what
 * its attributes mean) increments it: readers then answer 503 for a site
 * whose live generation is in another layout (`layoutMismatch`) instead of
 * misreading it, until `footfall rebuild` has written a generation in this
 * layout and switched to it (`docs/rebuild.md` "Migrating to a new layout").
 * New sites are created in it. Adding an item type, or a field readers
 * default when absent, needs no increment.
 *
 * Layouts: 1, everything before versions; 2, payments counted from the
 * payment list and its recomputed counters (PAYMENT_LIST, PAYMENT_TOTALS,
 * PAYMENT_CUSTOMERS, PAYMENT_DIMENSION) instead of per-payment
 * PAYMENT_ROLLUP entries, which layout 2 no longer reads; 3, the breakdown
 * dimensions `utm_source`, `utm_medium`, `utm_content` and `exit_page`
 * (rollups and payment rows of a generation written in layout 2 have none,
 * and a visit replaced across the release would take back counts never
 * added: `docs/data-model.md`, "Versions of the stored data: the policy").
 */
export const DATA_LAYOUT = 3;

/**
 * Null when `site`'s live generation is in the layout this code reads, else
 * why its reports cannot be answered (the message of a 503).
 */
export function layoutMismatch(site: SiteConfig): string | null {
  const layout = site.layout ?? 1;
  if (layout === DATA_LAYOUT) return null;
  return `${site.domain}: its data is stored in layout ${layout} and this release reads layout ${DATA_LAYOUT}; it answers again once \`footfall rebuild --site ${site.domain}\` has migrated it (docs/rebuild.md)`;
}
