/**
 * Request headers that carry the viewer's country, in the order they are
 * trusted (`docs/ingestion.md` "The event's fields": "two CDN-supplied vendor-specific names or
 * `x-country-code`"). Names are lower case: callers normalise headers first.
 */
export const COUNTRY_HEADERS: ReadonlyArray<{ header: string; source: string }> = [
  {
    header: 'cloudfront-viewer-country',
    source: 'Amazon CloudFront, added when the origin request policy forwards it',
  },
  { header: 'cf-ipcountry', source: 'Cloudflare, IP geolocation' },
  { header: 'x-country-code', source: 'any other proxy in front of Footfall' },
];

/**
 * Two-letter values that are not a country, so the next header is tried.
 * `XX`: Cloudflare, no country known. `T1`: Cloudflare, Tor exit node (also
 * caught by the letters-only check; listed so the reason is written down).
 * `ZZ`: the ISO 3166 user-assigned code CDNs and GeoIP databases use for
 * "unknown". `EU`, `AP`: continent-level answers of legacy MaxMind databases.
 * `XK` (Kosovo) is user-assigned too but a real place, so it is kept.
 */
export const NOT_A_COUNTRY: ReadonlySet<string> = new Set(['XX', 'T1', 'ZZ', 'EU', 'AP']);

const ALPHA_2 = /^[A-Z]{2}$/;

/**
 * `value` as an ISO 3166-1 alpha-2 code in upper case, or null when it is not
 * one: empty, not two letters, or in `NOT_A_COUNTRY`. The one rule for a
 * header, an imported line and an IP-database record alike.
 */
export function countryCode(value: string | null | undefined): string | null {
  const code = value?.trim().toUpperCase();
  return code && ALPHA_2.test(code) && !NOT_A_COUNTRY.has(code) ? code : null;
}

/**
 * Viewer country as an ISO 3166-1 alpha-2 code in upper case (e.g. `DE`), or
 * null when no header in `COUNTRY_HEADERS` holds one. `headers` has lower-case
 * names. A value that is empty, not two letters or in `NOT_A_COUNTRY` counts as
 * absent and the next header is tried.
 */
export function countryFromHeaders(headers: Readonly<Record<string, string | undefined>>): string | null {
  for (const { header } of COUNTRY_HEADERS) {
    const code = countryCode(headers[header]);
    if (code) return code;
  }
  return null;
}

/** Answers the country of an IP address from an IP-to-country database (`lambdas/adapters/country-database.ts`). */
export interface CountryLookup {
  /** ISO 3166-1 alpha-2 code of `ip` (IPv4 or IPv6 text), or null: not an address, not in the database, reserved. */
  countryOf(ip: string): string | null;
}

/**
 * The event's country (`docs/ingestion.md` "Enrichment", "Country"): a CDN's
 * country header when one holds a country (it saw the viewer, and a CDN's
 * database is the better one), else the IP database's answer for the client
 * address, else null. `lookup` is absent when no database is installed.
 */
export function resolveCountry(
  headers: Readonly<Record<string, string | undefined>>,
  ip: string,
  lookup: CountryLookup | undefined,
): string | null {
  return countryFromHeaders(headers) ?? lookup?.countryOf(ip) ?? null;
}
