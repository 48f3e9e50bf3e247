import type { Dimension } from '../rollup.js';
import type { RowDimension } from '../visit-table.js';

/** What a filter dimension reads from a visit row: one of its dimensions, its landing or exit page, or a list (pages, goals). */
export type RowField =
  | { kind: 'dimension'; name: RowDimension }
  | { kind: 'landing_page' }
  | { kind: 'exit_page' }
  | { kind: 'list'; name: 'pages' | 'goals' }
  | { kind: 'prop'; key: string };

/**
 * Filter dimensions (Plausible's names) → what they read from a visit row, and
 * the breakdown dimension of `docs/api.md` showing the same value (null: no
 * breakdown shows it). One table: the schema, the predicate, the SQL and
 * the app's row clicks all read it (this module imports no schema library, so
 * the app can take it without zod).
 */
export const FILTER_DIMENSIONS = {
  'visit:channel': { field: { kind: 'dimension', name: 'channel' }, breakdown: 'channel' },
  'visit:referrer': { field: { kind: 'dimension', name: 'referrer_host' }, breakdown: 'referrer' },
  'visit:source': { field: { kind: 'dimension', name: 'source' }, breakdown: null },
  'visit:utm_source': { field: { kind: 'dimension', name: 'utm_source' }, breakdown: 'utm_source' },
  'visit:utm_medium': { field: { kind: 'dimension', name: 'utm_medium' }, breakdown: 'utm_medium' },
  'visit:utm_campaign': { field: { kind: 'dimension', name: 'utm_campaign' }, breakdown: 'campaign' },
  'visit:utm_content': { field: { kind: 'dimension', name: 'utm_content' }, breakdown: 'utm_content' },
  'visit:utm_term': { field: { kind: 'dimension', name: 'utm_term' }, breakdown: 'keyword' },
  'visit:landing_page': { field: { kind: 'landing_page' }, breakdown: 'landing_page' },
  'visit:exit_page': { field: { kind: 'exit_page' }, breakdown: 'exit_page' },
  'visit:country': { field: { kind: 'dimension', name: 'country' }, breakdown: 'country' },
  'visit:device': { field: { kind: 'dimension', name: 'device' }, breakdown: 'device' },
  'visit:browser': { field: { kind: 'dimension', name: 'browser' }, breakdown: 'browser' },
  'visit:os': { field: { kind: 'dimension', name: 'os' }, breakdown: 'os' },
  'visit:language': { field: { kind: 'dimension', name: 'language' }, breakdown: 'language' },
  'event:page': { field: { kind: 'list', name: 'pages' }, breakdown: 'page' },
  'event:goal': { field: { kind: 'list', name: 'goals' }, breakdown: null },
} as const satisfies Record<string, { field: RowField; breakdown: Dimension | null }>;
export type FilterDimension = keyof typeof FILTER_DIMENSIONS;

/** A custom property as a filter dimension, Plausible's `event:props:<key>`. */
export type PropDimension = `event:props:${string}`;
/** The prefix of a custom property's filter dimension. */
export const PROP_DIMENSION_PREFIX = 'event:props:';
