/**
 * Request headers that carry the viewer's country, in the order they are
 * trusted (spec §2.9: "two CDN-supplied vendor-specific names or
 * `x-country-code`"). Names are lower case: callers normalise headers first.
 */
export const COUNTRY_HEADERS: ReadonlyArray<{ header: string; source: string }> = [
  { header: 'cloudfront-viewer-country', source: 'Amazon CloudFront, added when the origin request policy forwards it' },
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
 * Viewer country as an ISO 3166-1 alpha-2 code in upper case (e.g. `DE`), or
 * null when no header in `COUNTRY_HEADERS` holds one. `headers` has lower-case
 * names. A value that is empty, not two letters or in `NOT_A_COUNTRY` counts as
 * absent and the next header is tried.
 */
export function countryFromHeaders(headers: Readonly<Record<string, string | undefined>>): string | null {
  for (const { header } of COUNTRY_HEADERS) {
    const code = headers[header]?.trim().toUpperCase();
    if (code && ALPHA_2.test(code) && !NOT_A_COUNTRY.has(code)) return code;
  }
  return null;
}
