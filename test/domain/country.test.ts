import { describe, expect, it } from 'vitest';
import { countryFromHeaders } from '../../lambdas/domain/country.js';

describe('countryFromHeaders (spec §2.9)', () => {
  it.each<[string, Record<string, string | undefined>, string | null]>([
    ['CloudFront', { 'cloudfront-viewer-country': 'DE' }, 'DE'],
    ['Cloudflare', { 'cf-ipcountry': 'FR' }, 'FR'],
    ['generic proxy header', { 'x-country-code': 'JP' }, 'JP'],
    ['lower case is upper-cased', { 'cf-ipcountry': 'br' }, 'BR'],
    ['surrounding spaces are trimmed', { 'x-country-code': ' nz ' }, 'NZ'],
    ['CloudFront wins over Cloudflare', { 'cloudfront-viewer-country': 'US', 'cf-ipcountry': 'CA' }, 'US'],
    ['Cloudflare wins over x-country-code', { 'cf-ipcountry': 'CA', 'x-country-code': 'MX' }, 'CA'],
    ['Cloudflare XX (unknown) falls through', { 'cf-ipcountry': 'XX', 'x-country-code': 'MX' }, 'MX'],
    ['Cloudflare T1 (Tor) falls through', { 'cf-ipcountry': 'T1', 'x-country-code': 'SE' }, 'SE'],
    ['empty falls through', { 'cloudfront-viewer-country': '', 'cf-ipcountry': 'IT' }, 'IT'],
    ['ZZ (unknown) falls through', { 'cloudfront-viewer-country': 'ZZ', 'x-country-code': 'ES' }, 'ES'],
    ['legacy continent code EU falls through', { 'x-country-code': 'EU' }, null],
    ['three letters are not alpha-2', { 'cloudfront-viewer-country': 'DEU', 'cf-ipcountry': 'AT' }, 'AT'],
    ['one letter', { 'cf-ipcountry': 'D' }, null],
    ['digits', { 'x-country-code': '49' }, null],
    ['Kosovo (XK) is a place, kept', { 'cf-ipcountry': 'XK' }, 'XK'],
    ['only XX', { 'cf-ipcountry': 'XX' }, null],
    ['only T1', { 'cf-ipcountry': 'T1' }, null],
    ['no country header', { 'user-agent': 'x' }, null],
    ['no headers', {}, null],
    ['undefined value', { 'cf-ipcountry': undefined }, null],
  ])('%s', (_label, headers, expected) => {
    expect(countryFromHeaders(headers)).toBe(expected);
  });
});
