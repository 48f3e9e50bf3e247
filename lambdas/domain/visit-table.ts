import { OUTBOUND_GOAL, pageviewsOf, type Visit, type VisitAttributes } from './visit.js';
import { visitCounters } from './rollup.js';
import { localDay } from './range.js';
import { propsOf } from './props.js';

/**
 * The visit table behind filtered reports (`docs/data-model.md`, "Filtered
 * reports: where the numbers come from"): one row per visit, with the
 * visit's dimensions, pages and goals, in Parquet, read by DuckDB. This
 * module turns stored visits into rows by the rollups' own definitions
 * (`visitCounters`, the site-local start day), and rows into their encoded
 * form: every text value replaced by its id in the site's dictionary, so a
 * filter is resolved against the dictionary once and the scan compares
 * integers.
 */

/**
 * The form of the rows a writer of this release writes (`PaymentsWritten.rowForm`): 2 since rows keep their
 * outbound link URLs (`VisitRow.links`), which no reader can make from a file written before (1). The writer
 * drops a site's table written in an older form and writes it again whole from the archive at its next refresh
 * (`refreshSiteTable`, `docs/data-model.md` "Old forms still read").
 */
export const TABLE_ROW_FORM = 2;

/** The visit's attributes a row keeps, in the table's column order. */
export const ROW_DIMENSIONS = [
  'channel',
  'referrer_host',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'country',
  'device',
  'browser',
  'os',
  'language',
] as const satisfies ReadonlyArray<keyof VisitAttributes>;
export type RowDimension = (typeof ROW_DIMENSIONS)[number];

/**
 * The dictionaries of a site: one per row dimension, one for pages (pages,
 * landing and exit page), one for goals, one for outbound link URLs and one
 * for custom properties (a key and value pair, as the JSON text `propPair`
 * makes).
 */
export type DictionaryName = RowDimension | 'page' | 'goal' | 'link' | 'prop';

/** One visit as a row of the table, values as text. */
export interface VisitRow {
  visit_id: string;
  visitor_id: string;
  /** Site-local day the visit started, `YYYY-MM-DD`: the day the rollups count it in. */
  day: string;
  /** First event time, ms since epoch (UTC). */
  start_ms: number;
  pageviews: number;
  /** One page view and no goal (`visitCounters`). */
  bounce: boolean;
  /** More than one event: the visit's duration is measured (`visitCounters`). */
  timed: boolean;
  /** Last event time minus first, ms; 0 when not timed. */
  duration_ms: number;
  dimensions: Record<RowDimension, string | null>;
  landing_page: string;
  /** Path of the last page view; null for a visit of goals only. */
  exit_page: string | null;
  /**
   * Path of every page view, in time order (a page viewed twice is listed twice); the table stores each page
   * once (`EncodedVisitRow`), so a row read back from it lists each once, in the order first viewed.
   */
  pages: string[];
  /** Name of every goal completed, in time order. */
  goals: string[];
  /**
   * URL of every outbound link click that has one (`Outbound Link: Click` with a link), in time order, a URL
   * clicked twice listed twice: the goals report's rows by link URL (`goalKeysOf`). Empty in rows read from a
   * file written before the table kept them (`docs/data-model.md`, "Old forms still read").
   */
  links: string[];
  /**
   * The visit's custom properties: each distinct `[key, value]` any of its
   * events had, in order of first sight, at most `MAX_VISIT_PROPS`. Absent
   * in rows written before properties were kept (none).
   */
  props?: Array<[string, string]>;
}

/**
 * Distinct property pairs a visit row keeps (ours): a page view carries at
 * most 30, and this bounds a row whatever the visit's length; pairs past it
 * (later in the visit) are not filterable.
 */
export const MAX_VISIT_PROPS = 100;

/** The dictionary value of a property pair: `["plan","pro"]`, JSON so that no key or value can be read as another's. */
export const propPair = (key: string, value: string): string => JSON.stringify([key, value]);

/**
 * The row of a stored visit.
 *
 * @param timezone the site's IANA time zone: `day` is the visit's start day there
 */
export function visitRow(visit: Visit, timezone: string): VisitRow {
  const counters = visitCounters(visit);
  const pages: string[] = [];
  const goals: string[] = [];
  const links: string[] = [];
  const props = new Map<string, [string, string]>();
  for (const e of visit.events) {
    if (e.type === 'pageview') pages.push(e.path);
    else if (e.goal !== null) {
      goals.push(e.goal);
      if (e.goal === OUTBOUND_GOAL && e.link !== null) links.push(e.link);
    }
    for (const pair of Object.entries(propsOf(e.props))) {
      if (props.size < MAX_VISIT_PROPS) props.set(propPair(...pair), pair);
    }
  }
  const dimensions = Object.fromEntries(ROW_DIMENSIONS.map((d) => [d, visit.attrs[d]])) as Record<
    RowDimension,
    string | null
  >;
  return {
    visit_id: visit.id,
    visitor_id: visit.visitor_id,
    day: localDay(visit.start, timezone),
    start_ms: visit.start,
    pageviews: pageviewsOf(visit),
    bounce: counters.bounces === 1,
    timed: counters.timed_visits === 1,
    duration_ms: counters.duration_ms,
    dimensions,
    landing_page: visit.landing_page,
    exit_page: pages.at(-1) ?? null,
    pages,
    goals,
    links,
    props: [...props.values()],
  };
}

/**
 * A site's dictionaries: per dictionary, value → id. Ids start at 1, are
 * given in order of first sight and never change or get reused, so rows
 * written earlier keep their meaning and a month's file is rewritten alone.
 */
export type Dictionary = Map<DictionaryName, Map<string, number>>;

/** A dictionary entry, as the dictionary's table stores it. */
export interface DictionaryEntry {
  dictionary: DictionaryName;
  value: string;
  id: number;
}

/** A row with its text replaced by dictionary ids (null stays null). */
export interface EncodedVisitRow extends Omit<
  VisitRow,
  'dimensions' | 'landing_page' | 'exit_page' | 'pages' | 'goals' | 'links' | 'props'
> {
  dimensions: Record<RowDimension, number | null>;
  landing_page: number;
  exit_page: number | null;
  /**
   * Ids of the visit's pages, each once, in the order first viewed: every figure that reads a visit's pages
   * tests membership (page views are `pageviews`), so the table stores no repeat (`docs/data-model.md`,
   * "Filtered reports").
   */
  pages: number[];
  goals: number[];
  /** Ids of the visit's outbound link URLs (`link` dictionary), one per click, as `VisitRow.links`. */
  links: number[];
  /** Ids of the visit's property pairs (`prop` dictionary). */
  props: number[];
}

/** The dictionary of stored entries. */
export function dictionaryOf(entries: Iterable<DictionaryEntry>): Dictionary {
  const dictionary: Dictionary = new Map();
  for (const { dictionary: name, value, id } of entries) {
    const ids = dictionary.get(name) ?? new Map<string, number>();
    ids.set(value, id);
    dictionary.set(name, ids);
  }
  return dictionary;
}

/**
 * Encodes rows against a site's dictionary, giving each unseen value the
 * next id of its dictionary (`dictionary` is updated in place).
 *
 * @returns the encoded rows, in `sortKey` order, and the entries added (to store with them)
 */
export function encodeRows(
  rows: readonly VisitRow[],
  dictionary: Dictionary,
): { rows: EncodedVisitRow[]; added: DictionaryEntry[] } {
  const added: DictionaryEntry[] = [];
  const idOf = (name: DictionaryName, value: string): number => {
    const ids = dictionary.get(name) ?? new Map<string, number>();
    dictionary.set(name, ids);
    let id = ids.get(value);
    if (id === undefined) {
      id = ids.size + 1;
      ids.set(value, id);
      added.push({ dictionary: name, value, id });
    }
    return id;
  };
  const encoded = rows.map((row): EncodedVisitRow => {
    const dimensions = Object.fromEntries(
      ROW_DIMENSIONS.map((d) => {
        const value = row.dimensions[d];
        return [d, value === null ? null : idOf(d, value)];
      }),
    ) as Record<RowDimension, number | null>;
    return {
      ...row,
      dimensions,
      landing_page: idOf('page', row.landing_page),
      exit_page: row.exit_page === null ? null : idOf('page', row.exit_page),
      pages: [...new Set(row.pages)].map((p) => idOf('page', p)),
      goals: row.goals.map((g) => idOf('goal', g)),
      links: row.links.map((l) => idOf('link', l)),
      props: (row.props ?? []).map(([k, v]) => idOf('prop', propPair(k, v))),
    };
  });
  return { rows: encoded.sort(sortKey), added };
}

/**
 * The table's row order within a month: by channel, device, day and start.
 * The common filters (a channel, a device) then select a few contiguous row
 * groups, which a reader skips to by their min/max statistics, and a range of
 * days within them likewise (measured: `docs/benchmarks.md`, "Filtered dashboards").
 */
export function sortKey(a: EncodedVisitRow, b: EncodedVisitRow): number {
  const order = (x: number | null) => x ?? 0;
  return (
    order(a.dimensions.channel) - order(b.dimensions.channel) ||
    order(a.dimensions.device) - order(b.dimensions.device) ||
    (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) ||
    a.start_ms - b.start_ms ||
    (a.visit_id < b.visit_id ? -1 : a.visit_id > b.visit_id ? 1 : 0)
  );
}

/** The month (`YYYY-MM`) whose file holds a row: that of its site-local day. */
export const monthOf = (row: Pick<VisitRow, 'day'>): string => row.day.slice(0, 7);

/**
 * A payment as the payments table beside the visit table keeps it
 * (`docs/data-model.md`, "Filtered reports"): its contribution's figures and
 * the id of the visit it is credited to, whose row says which filters it
 * matches.
 */
export interface PaymentTableRow {
  /** `provider:id` (`paymentKey`). */
  key: string;
  /** Payment time, ms since epoch (UTC). */
  ts: number;
  /** Site-local day of `ts`, `YYYY-MM-DD`: the month file that holds it. */
  day: string;
  /** Net of refunds, USD cents. */
  cents: number;
  /** Distinct-payer key (`customerHash`). */
  customer: string;
  failed: boolean;
  /** Refunded, partly or fully: the payments list's `refunded` class (`classesOf`). */
  refunded: boolean;
  /** The credited visit (`Touch.session_id`), null when Unattributed. */
  visit_id: string | null;
  /**
   * Site-local start day of the credited visit (`Touch.ts`), null when Unattributed: a renewal keeps the
   * first purchase's credit, so its visit may be older than the site's lookback, and the engine reads the
   * visit months back to the earliest credited visit of the range's payments.
   */
  visit_day: string | null;
}
