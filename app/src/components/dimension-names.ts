import { countryName, languageName } from '../format.js';

/** The breakdowns' dimensions by name: the panels' tabs and column headings, their no-value rows, a key's name. */

/** The breakdown dimensions (`docs/api.md` "Breakdowns") with the names the panels show. */
export const DIMENSION_LABELS = {
  channel: 'Channels',
  referrer: 'Referrers',
  campaign: 'Campaigns',
  keyword: 'Keywords',
  page: 'Pages',
  landing_page: 'Landing pages',
  country: 'Countries',
  language: 'Languages',
  device: 'Devices',
  browser: 'Browsers',
  os: 'OS',
  utm_source: 'UTM sources',
  utm_medium: 'UTM mediums',
  utm_content: 'UTM contents',
  exit_page: 'Exit pages',
} as const;

export type Dimension = keyof typeof DIMENSION_LABELS;

/** The column heading of a dimension's labels (and a filter chip's name of it). */
export const KEY_HEADING: Record<Dimension, string> = {
  channel: 'Channel',
  referrer: 'Referrer',
  campaign: 'Campaign',
  keyword: 'Keyword',
  page: 'Page',
  landing_page: 'Landing page',
  country: 'Country',
  language: 'Language',
  device: 'Device',
  browser: 'Browser',
  os: 'OS',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_content: 'UTM content',
  exit_page: 'Exit page',
};

/** What a row with no value of the dimension is called (its `key` is null; a filter's value `""`). */
export const NONE_LABEL: Partial<Record<Dimension, string>> = {
  referrer: 'Direct / none',
  campaign: '(no campaign)',
  keyword: '(no keyword)',
  utm_source: '(no source)',
  utm_medium: '(no medium)',
  utm_content: '(no content)',
  exit_page: '(no page view)',
};

/** A country or language by name (`countryName`, `languageName`), or null for a dimension whose keys are shown as they are. */
export function keyName(dimension: Dimension, key: string): string | null {
  return dimension === 'country' ? countryName(key) : dimension === 'language' ? languageName(key) : null;
}
