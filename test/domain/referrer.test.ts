import { describe, expect, it } from 'vitest';
import { campaignParams, MAX_CAMPAIGN_VALUE, referrerHost } from '../../lambdas/domain/referrer.js';

describe('referrerHost', () => {
  // [referrer, pageHost, siteDomain, expected]
  it.each([
    [null, 'example.com', 'example.com', null],
    [undefined, 'example.com', 'example.com', null],
    ['', 'example.com', 'example.com', null],
    ['   ', 'example.com', 'example.com', null],
    ['not a url', 'example.com', 'example.com', null],
    ['://broken', 'example.com', 'example.com', null],
    ['www.google.com', 'example.com', 'example.com', null],
    ['about:blank', 'example.com', 'example.com', null],
    ['file:///C:/page.html', 'example.com', 'example.com', null],
    ['chrome-extension://abcdef/popup.html', 'example.com', 'example.com', null],
    ['data:text/html,hi', 'example.com', 'example.com', null],
    // Internal navigation
    ['https://example.com/pricing', 'example.com', 'example.com', null],
    ['https://EXAMPLE.com/', 'example.com', 'example.com', null],
    ['https://www.example.com/', 'www.example.com', 'example.com', null],
    ['https://www.example.com/', 'example.com', 'example.com', null],
    ['https://example.com/', 'www.example.com', 'www.example.com', null],
    ['https://app.example.com/dashboard', 'example.com', 'example.com', null],
    ['https://docs.example.com/', 'www.example.com', 'example.com', null],
    ['http://localhost:3000/', 'localhost', 'localhost', null],
    ['https://preview.vercel.app/', 'preview.vercel.app', 'example.com', null],
    ['https://example.com./', 'example.com', 'example.com', null],
    // Other sites
    ['https://www.google.com/', 'example.com', 'example.com', 'www.google.com'],
    ['https://www.Google.co.UK/search?q=x', 'example.com', 'example.com', 'www.google.co.uk'],
    ['https://news.ycombinator.com/item?id=1', 'example.com', 'example.com', 'news.ycombinator.com'],
    ['http://blog.other.org:8080/post', 'example.com', 'example.com', 'blog.other.org'],
    ['https://notexample.com/', 'example.com', 'example.com', 'notexample.com'],
    ['https://example.com.evil.net/', 'example.com', 'example.com', 'example.com.evil.net'],
    ['https://example.co/', 'example.com', 'example.com', 'example.co'],
    ['https://example.com/', 'shop.example.com', 'shop.example.com', 'example.com'],
    ['https://bücher.de/', 'example.com', 'example.com', 'xn--bcher-kva.de'],
    // Android apps
    ['android-app://com.google.android.gm', 'example.com', 'example.com', 'com.google.android.gm'],
    ['android-app://com.google.android.gm/', 'example.com', 'example.com', 'com.google.android.gm'],
    [
      'android-app://com.google.android.googlequicksearchbox/https/www.google.com',
      'example.com',
      'example.com',
      'com.google.android.googlequicksearchbox',
    ],
    ['android-app://Com.Slack/', 'example.com', 'example.com', 'com.slack'],
    ['android-app://', 'example.com', 'example.com', null],
  ] as const)('%s on %s (site %s) → %s', (referrer, pageHost, siteDomain, expected) => {
    expect(referrerHost(referrer, pageHost, siteDomain)).toBe(expected);
  });
});

describe('campaignParams', () => {
  const none = {
    utm_source: null,
    utm_medium: null,
    utm_campaign: null,
    utm_term: null,
    utm_content: null,
    clickIds: [],
  };

  it.each([
    ['https://example.com/', none],
    [
      'https://example.com/?utm_source=news&utm_medium=email&utm_campaign=launch&utm_term=analytics&utm_content=hero',
      {
        ...none,
        utm_source: 'news',
        utm_medium: 'email',
        utm_campaign: 'launch',
        utm_term: 'analytics',
        utm_content: 'hero',
      },
    ],
    ['https://example.com/?utm_source=%20%20spaced%20%20', { ...none, utm_source: 'spaced' }],
    ['https://example.com/?utm_source=&utm_medium=%20', none],
    ['https://example.com/?utm_source=a+b', { ...none, utm_source: 'a b' }],
    ['https://example.com/?UTM_Source=Newsletter', { ...none, utm_source: 'Newsletter' }],
    ['https://example.com/?utm_source=first&utm_source=second', { ...none, utm_source: 'first' }],
    ['https://example.com/?utm_source=&utm_source=second', { ...none, utm_source: 'second' }],
    // utm_source fallbacks: ref, then source, then via
    ['https://example.com/?ref=producthunt', { ...none, utm_source: 'producthunt' }],
    ['https://example.com/?source=hn', { ...none, utm_source: 'hn' }],
    ['https://example.com/?via=john', { ...none, utm_source: 'john' }],
    ['https://example.com/?via=john&source=s&ref=r', { ...none, utm_source: 'r' }],
    ['https://example.com/?via=john&source=s', { ...none, utm_source: 's' }],
    ['https://example.com/?ref=r&utm_source=u', { ...none, utm_source: 'u' }],
    ['https://example.com/?utm_source=&ref=r', { ...none, utm_source: 'r' }],
    // click ids
    ['https://example.com/?gclid=abc', { ...none, clickIds: ['gclid'] }],
    ['https://example.com/?GCLID=abc&fbclid=x&gclid=again', { ...none, clickIds: ['gclid', 'fbclid'] }],
    ['https://example.com/?msclkid=1&utm_medium=cpc', { ...none, utm_medium: 'cpc', clickIds: ['msclkid'] }],
    ['https://example.com/?gclid=', none],
    ['https://example.com/?ScCid=1&li_fat_id=2&ttclid=3', { ...none, clickIds: ['sccid', 'li_fat_id', 'ttclid'] }],
    ['https://example.com/?notaclickid=1&id=2', none],
    // hash-route query strings are not read
    ['https://example.com/#/page?utm_source=x', none],
  ] as const)('%s', (url, expected) => {
    expect(campaignParams(new URL(url))).toEqual(expected);
  });

  it('cuts each value to 256 characters', () => {
    const long = 'a'.repeat(300);
    const tags = campaignParams(new URL(`https://example.com/?utm_campaign=${long}&utm_term=${long}`));
    expect(tags.utm_campaign).toHaveLength(MAX_CAMPAIGN_VALUE);
    expect(tags.utm_term).toHaveLength(256);
  });

  it('does not split a surrogate pair when cutting', () => {
    const value = `${'a'.repeat(255)}😀tail`;
    const tags = campaignParams(new URL(`https://example.com/?utm_content=${encodeURIComponent(value)}`));
    expect(tags.utm_content).toBe('a'.repeat(255));
  });

  it('returns a fresh clickIds array', () => {
    const a = campaignParams(new URL('https://example.com/?gclid=1'));
    const b = campaignParams(new URL('https://example.com/?gclid=1'));
    expect(a.clickIds).not.toBe(b.clickIds);
  });
});
