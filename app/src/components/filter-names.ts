import { FILTER_DIMENSIONS, type FilterDimension } from '../../../lambdas/domain/reports/filter-dimensions.js';
import { OPERATOR_TEXT, propKey, type ChipDimension, type FilterChip } from '../filters.js';
import { KEY_HEADING, NONE_LABEL, keyName, type Dimension } from './dimension-names.js';

/**
 * How filters are named on screen (`docs/app.md` "Filters"): a dimension's
 * name, a value's, a chip's sentence, and the groups the filter dialog lists
 * the dimensions in.
 */

/** Names of the filter dimensions no breakdown panel shows (the others take their panel's column heading). */
const OTHER_NAMES: Partial<Record<FilterDimension, string>> = { 'visit:source': 'Source', 'event:goal': 'Goal' };

/**
 * The filter dialog's dimensions in Plausible's groups, in its order; every filter dimension is in one group
 * (`test/app/filters.test.ts`). Custom properties follow them, by key.
 */
export const FILTER_GROUPS: ReadonlyArray<{ name: string; dimensions: readonly FilterDimension[] }> = [
  { name: 'Visit source', dimensions: ['visit:channel', 'visit:source', 'visit:referrer'] },
  {
    name: 'UTM',
    dimensions: ['visit:utm_source', 'visit:utm_medium', 'visit:utm_campaign', 'visit:utm_content', 'visit:utm_term'],
  },
  { name: 'Pages', dimensions: ['event:page', 'visit:landing_page', 'visit:exit_page'] },
  { name: 'Location', dimensions: ['visit:country', 'visit:language'] },
  { name: 'Device', dimensions: ['visit:device', 'visit:browser', 'visit:os'] },
  { name: 'Goals', dimensions: ['event:goal'] },
];

/** The breakdown dimension showing a filter dimension's values, or null (a source, a goal, a property). */
export function breakdownOf(dimension: ChipDimension): Dimension | null {
  return propKey(dimension) === null
    ? (FILTER_DIMENSIONS[dimension as FilterDimension].breakdown as Dimension | null)
    : null;
}

/** A filter dimension's name: "Channel", "Page", "Goal", "Property plan". */
export function dimensionName(dimension: ChipDimension): string {
  const key = propKey(dimension);
  if (key !== null) return `Property ${key}`;
  const breakdown = breakdownOf(dimension);
  return breakdown ? KEY_HEADING[breakdown] : (OTHER_NAMES[dimension as FilterDimension] ?? dimension);
}

/** A value as the panels show it: a country or language by name, "Direct / none" for no referrer. */
export function valueName(dimension: ChipDimension, value: string): string {
  const breakdown = breakdownOf(dimension);
  if (value === '') return (breakdown && NONE_LABEL[breakdown]) ?? '(none)';
  const named = breakdown ? keyName(breakdown, value) : null;
  return named !== null && named !== value ? `${named} (${value})` : value;
}

/** A chip's values in words: "Search", "United States (US) or France (FR)". */
export function valuesName(chip: FilterChip): string {
  return chip.values.map((v) => valueName(chip.dimension, v)).join(' or ');
}

/** A chip as a sentence: "Page contains /blog". */
export function chipSentence(chip: FilterChip): string {
  return `${dimensionName(chip.dimension)} ${OPERATOR_TEXT[chip.op].words} ${valuesName(chip)}`;
}
