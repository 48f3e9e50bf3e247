import { describe, expect, it } from 'vitest';
import { countryCode, countryFromHeaders, resolveCountry } from '../../lambdas/domain/country.js';
import { clientAddress } from '../../lambdas/domain/client-address.js';

describe('countryFromHeaders: the country from a CDN header', () => {
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

describe('clientAddress: the visitor address behind CloudFront or not', () => {
  it.each<[string, Record<string, string | undefined>, string]>([
    ['no header: the connection', {}, '192.0.2.10'],
    ['CloudFront IPv4 with port', { 'cloudfront-viewer-address': '198.51.100.10:46532' }, '198.51.100.10'],
    ['CloudFront IPv6 unbracketed with port', { 'cloudfront-viewer-address': '2001:db8::1:46532' }, '2001:db8::1'],
    ['bracketed IPv6 with port', { 'cloudfront-viewer-address': '[2001:db8::7]:443' }, '2001:db8::7'],
    ['no port: not the CloudFront form', { 'cloudfront-viewer-address': '198.51.100.10' }, '192.0.2.10'],
    ['garbage', { 'cloudfront-viewer-address': 'evil:1234' }, '192.0.2.10'],
    ['empty', { 'cloudfront-viewer-address': ' ' }, '192.0.2.10'],
  ])('%s', (_label, headers, expected) => {
    expect(clientAddress(headers, '192.0.2.10')).toBe(expected);
  });
});

describe('countryCode and resolveCountry', () => {
  const lookup = { countryOf: (ip: string) => (ip === '8.8.8.8' ? 'US' : null) };
  it.each<[string, string | null | undefined, string | null]>([
    ['upper-cases', 'de', 'DE'],
    ['unknown ZZ', 'ZZ', null],
    ['null', null, null],
    ['undefined', undefined, null],
  ])('countryCode: %s', (_label, value, expected) => expect(countryCode(value)).toBe(expected));
  it.each<[string, Record<string, string>, string, typeof lookup | undefined, string | null]>([
    ['header wins over the lookup', { 'cf-ipcountry': 'FR' }, '8.8.8.8', lookup, 'FR'],
    ['lookup when no header', {}, '8.8.8.8', lookup, 'US'],
    ['a header naming no country falls to the lookup', { 'cf-ipcountry': 'XX' }, '8.8.8.8', lookup, 'US'],
    ['unknown address', {}, '192.0.2.1', lookup, null],
    ['no database', {}, '8.8.8.8', undefined, null],
  ])('resolveCountry: %s', (_label, headers, ip, db, expected) =>
    expect(resolveCountry(headers, ip, db)).toBe(expected),
  );
});
