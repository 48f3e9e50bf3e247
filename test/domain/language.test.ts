import { describe, expect, it } from 'vitest';
import { languageFromAcceptLanguage, MAX_LANGUAGE_LENGTH } from '../../lambdas/domain/language.js';

describe('languageFromAcceptLanguage (RFC 9110 §12.5.4)', () => {
  it.each<[string, string | undefined, string | null]>([
    ['one language', 'en', 'en'],
    ['region upper-cased', 'en-us,en;q=0.9', 'en-US'],
    ['language lower-cased', 'PT-br', 'pt-BR'],
    ['script title-cased', 'zh-hant-tw', 'zh-Hant-TW'],
    ['numeric region', 'es-419,es;q=0.9', 'es-419'],
    ['higher q wins over order', 'fr;q=0.4, de;q=0.8', 'de'],
    ['no q means q=1', 'da, en-GB;q=0.8, en;q=0.7', 'da'],
    ['a tie keeps the first', 'nl;q=0.5, fr;q=0.5', 'nl'],
    ['a tie at the default q keeps the first', 'it, fr', 'it'],
    ['q=0 is "not acceptable"', 'en;q=0, de;q=0.1', 'de'],
    ['only q=0', 'en;q=0', null],
    ['q with three decimals', 'en;q=0.501, fr;q=0.5', 'en'],
    ['spaces around ; and q', 'en ; q=0.2 ,  sv ;  q=0.3', 'sv'],
    ['upper-case Q', 'en;Q=0.2, fi;Q=0.9', 'fi'],
    ['the wildcard names no language', '*', null],
    ['the wildcard is skipped', '*, en;q=0.5', 'en'],
    ['q above 1 is malformed, skipped', 'en;q=2, de;q=0.5', 'de'],
    ['q with four decimals is malformed', 'en;q=0.1234', null],
    ['q not a number is malformed', 'en;q=high', null],
    ['an empty element is skipped', ',,en', 'en'],
    ['a one-letter first subtag is not a language', 'x-klingon, de;q=0.1', 'de'],
    ['a subtag over 8 characters is malformed', 'en-abcdefghi', null],
    ['underscores are malformed', 'en_US', null],
    ['garbage', 'garbage!!', null],
    ['empty', '', null],
    ['missing', undefined, null],
    [
      'cut at a subtag boundary to 35 characters (RFC 5646 §4.4.2)',
      'en-Latn-GB-boont-r-extended-sequence-x-private',
      'en-Latn-GB-boont-r-extended',
    ],
    [
      'a singleton left dangling by the cut goes too',
      'de-CH-1901-abcdefgh-abcdefg-x-abcdefgh',
      'de-CH-1901-abcdefgh-abcdefg',
    ],
    ['subtags after a singleton stay lower case', 'en-US-x-TWAIN', 'en-US-x-twain'],
  ])('%s: %j', (_label, header, expected) => {
    expect(languageFromAcceptLanguage(header)).toBe(expected);
  });

  it('never returns more than 35 characters', () => {
    const long = ['en', ...Array.from({ length: 20 }, () => 'abcdefgh')].join('-');
    expect(languageFromAcceptLanguage(long)?.length).toBeLessThanOrEqual(MAX_LANGUAGE_LENGTH);
  });
});
