import * as z from 'zod';
import { classifyChannel } from '../channel.js';
import { countryCode } from '../country.js';
import { dict, own } from '../dict.js';
import { isValidDay } from '../range.js';
import { NONE, goalLinkKey } from '../rollup.js';
import { OUTBOUND_GOAL } from '../visit.js';
import type { Device } from '../tracked-event.js';
import type { ImportedMetric } from './aggregate.js';

/**
 * The tables of a Plausible CSV export (Site settings → Imports & Exports → Export to CSV), one CSV file
 * each, named `<table>_<YYYYMMDD>_<YYYYMMDD>.csv` in the zip: Plausible's "CSV format guidelines"
 * (plausible.io/docs/csv-import) and its export queries (`Plausible.Exports.export_queries`,
 * plausible/analytics lib/plausible/exports.ex). Rows are daily aggregates of the Plausible site's
 * timezone; counts are totals of the day and value, `visit_duration` is a total in seconds.
 */
export const PLAUSIBLE_TABLES = [
  'imported_visitors',
  'imported_sources',
  'imported_pages',
  'imported_entry_pages',
  'imported_exit_pages',
  'imported_custom_events',
  'imported_locations',
  'imported_devices',
  'imported_browsers',
  'imported_operating_systems',
] as const;
export type PlausibleTable = (typeof PLAUSIBLE_TABLES)[number];

/** A file of the export: `imported_<name>.csv`, with or without the `_<first day>_<last day>` suffix the export writes. */
const FILE_NAME = /^(imported_[a-z_]+?)(?:_\d{8}_\d{8})?\.csv$/;

/** The table a zip entry holds (its base name, any folder dropped), or null for any other file. */
export function plausibleTableOf(entryName: string): PlausibleTable | null {
  const base = entryName.slice(entryName.lastIndexOf('/') + 1);
  const table = FILE_NAME.exec(base)?.[1];
  return table !== undefined && (PLAUSIBLE_TABLES as readonly string[]).includes(table)
    ? (table as PlausibleTable)
    : null;
}

/** Longest text value kept (a page path or URL, as the tracker's `MAX_URL`); longer values make the row invalid. */
export const MAX_IMPORTED_VALUE = 2048;

const day = z.string().refine(isValidDay, 'not a day YYYY-MM-DD');
/** ClickHouse UInt64/UInt32 counts, written as decimal digits; within JavaScript's exact integers. */
const count = z
  .string()
  .regex(/^\d{1,15}$/, 'not a count')
  .transform(Number);
/** An optional count: absent or empty is 0 (a full join of the visitors table leaves a day without sessions empty). */
const optionalCount = z
  .string()
  .optional()
  .transform((s, ctx) => {
    if (s === undefined || s === '') return 0;
    const parsed = count.safeParse(s);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: 'custom', message: 'not a count' });
    return z.NEVER;
  });
const text = z.string().max(MAX_IMPORTED_VALUE).optional().default('');
const visitMetrics = { visitors: count, visits: count, visit_duration: count, bounces: count, pageviews: count };

/** Each table's columns that the import reads (others, like the pages' scroll depth and time on page, are ignored). */
const ROW_SCHEMAS = {
  imported_visitors: z.object({
    date: day,
    visitors: optionalCount,
    pageviews: optionalCount,
    bounces: optionalCount,
    visits: optionalCount,
    visit_duration: optionalCount,
  }),
  imported_sources: z.object({
    date: day,
    source: text,
    referrer: text,
    utm_source: text,
    utm_medium: text,
    utm_campaign: text,
    utm_content: text,
    utm_term: text,
    ...visitMetrics,
  }),
  imported_pages: z.object({ date: day, hostname: text, page: text, visits: count, visitors: count, pageviews: count }),
  imported_entry_pages: z.object({
    date: day,
    entry_page: text,
    visitors: count,
    entrances: count,
    visit_duration: count,
    bounces: count,
    pageviews: count,
  }),
  imported_exit_pages: z.object({
    date: day,
    exit_page: text,
    visitors: count,
    visit_duration: count,
    exits: count,
    bounces: count,
    pageviews: count,
  }),
  imported_custom_events: z.object({
    date: day,
    name: z.string().min(1).max(MAX_IMPORTED_VALUE),
    link_url: text,
    path: text,
    visitors: count,
    events: count,
  }),
  imported_locations: z.object({ date: day, country: text, region: text, city: text, ...visitMetrics }),
  imported_devices: z.object({ date: day, device: text, ...visitMetrics }),
  imported_browsers: z.object({ date: day, browser: text, browser_version: text, ...visitMetrics }),
  imported_operating_systems: z.object({
    date: day,
    operating_system: text,
    operating_system_version: text,
    ...visitMetrics,
  }),
} as const satisfies Record<PlausibleTable, z.ZodType>;

/** One contribution of a row: `numbers` added to `key` of `metric` on the row's day (`ImportedAggregate`). */
export interface ImportedCell {
  metric: ImportedMetric;
  key: string;
  numbers: readonly number[];
}

/**
 * Plausible's device classes (by screen width, with `Laptop` between tablets and desktops) onto ours
 * (`lambdas/domain/device.ts`): a laptop is a desktop; an empty or unknown class is `Unknown`.
 */
const DEVICES: Readonly<Record<string, Device>> = dict<Device>({
  Desktop: 'Desktop',
  Laptop: 'Desktop',
  Mobile: 'Mobile',
  Tablet: 'Tablet',
});
/** Plausible's browser names (Matomo Device Detector's) that ours (ua-parser-js, `lambdas/domain/user-agent.ts`) spell otherwise. */
const BROWSERS: Readonly<Record<string, string>> = dict({
  'Microsoft Edge': 'Edge',
  'Chrome Mobile': 'Chrome',
  'Chrome Mobile iOS': 'Chrome',
  'Mobile Safari': 'Safari',
  'Firefox Mobile': 'Firefox',
  'Firefox Mobile iOS': 'Firefox',
  'Samsung Browser': 'Samsung Internet',
});
/** Plausible's operating system names that ours spell otherwise. */
const SYSTEMS: Readonly<Record<string, string>> = dict({ Mac: 'macOS', 'GNU/Linux': 'Linux', 'Chrome OS': 'ChromeOS' });

const valueOr = (value: string): string => value.trim() || NONE;
const renamed = (table: Readonly<Record<string, string>>, value: string): string =>
  own(table, value.trim()) ?? valueOr(value);

/**
 * The host of Plausible's `referrer` column (a URL without its scheme: `github.com/owner/repo`), lowercased,
 * or null when empty or not a host (Plausible's Direct / None).
 */
export function referrerHostOf(referrer: string): string | null {
  const trimmed = referrer.trim();
  if (!trimmed) return null;
  try {
    const host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`).hostname;
    return host.toLowerCase().replace(/\.$/, '') || null;
  } catch {
    return null;
  }
}

type Rows = { [T in PlausibleTable]: z.output<(typeof ROW_SCHEMAS)[T]> };

/**
 * What each table's row adds (`docs/ingestion.md`, "Importing a Plausible export"): the day's visitors,
 * visits, page views, bounces and duration (s) to `visits`; a value's visits (entrances for entry pages,
 * exits for exit pages) to its dimension, as a breakdown row counts visits; a custom event's visitors
 * and events to its goal, and for `Outbound Link: Click` to its link's key as well.
 */
const CELLS: { [T in PlausibleTable]: (row: Rows[T]) => ImportedCell[] } = {
  imported_visitors: (r) => [
    { metric: 'visits', key: NONE, numbers: [r.visitors, r.visits, r.pageviews, r.bounces, r.visit_duration] },
  ],
  imported_sources: (r) => {
    const host = referrerHostOf(r.referrer);
    const n = [r.visits];
    const channel = classifyChannel({
      referrerHost: host,
      utmSource: r.utm_source || null,
      utmMedium: r.utm_medium || null,
      utmCampaign: r.utm_campaign || null,
      clickIds: [],
    }).channel;
    return [
      { metric: 'channel', key: channel, numbers: n },
      { metric: 'referrer', key: host ?? NONE, numbers: n },
      { metric: 'campaign', key: valueOr(r.utm_campaign), numbers: n },
      { metric: 'keyword', key: valueOr(r.utm_term), numbers: n },
      { metric: 'utm_source', key: valueOr(r.utm_source), numbers: n },
      { metric: 'utm_medium', key: valueOr(r.utm_medium), numbers: n },
      { metric: 'utm_content', key: valueOr(r.utm_content), numbers: n },
    ];
  },
  imported_pages: (r) => [{ metric: 'page', key: valueOr(r.page), numbers: [r.visits] }],
  imported_entry_pages: (r) => [{ metric: 'landing_page', key: valueOr(r.entry_page), numbers: [r.entrances] }],
  imported_exit_pages: (r) => [{ metric: 'exit_page', key: valueOr(r.exit_page), numbers: [r.exits] }],
  imported_custom_events: (r) => {
    const n = [r.visitors, r.events];
    const link = r.link_url.trim();
    return [
      { metric: 'goal', key: r.name, numbers: n },
      ...(r.name === OUTBOUND_GOAL && link
        ? [{ metric: 'goal' as const, key: goalLinkKey(r.name, link), numbers: n }]
        : []),
    ];
  },
  imported_locations: (r) => [{ metric: 'country', key: countryCode(r.country) ?? NONE, numbers: [r.visits] }],
  imported_devices: (r) => [{ metric: 'device', key: own(DEVICES, r.device.trim()) ?? 'Unknown', numbers: [r.visits] }],
  imported_browsers: (r) => [{ metric: 'browser', key: renamed(BROWSERS, r.browser), numbers: [r.visits] }],
  imported_operating_systems: (r) => [{ metric: 'os', key: renamed(SYSTEMS, r.operating_system), numbers: [r.visits] }],
};

/** Why a row was not kept. */
export class PlausibleRowError extends Error {}

/**
 * One CSV record of `table` (column name → cell text, a null-prototype record) validated: its day
 * and what it adds (`CELLS`).
 * @throws PlausibleRowError naming the first invalid column
 */
export function plausibleRow(
  table: PlausibleTable,
  record: Readonly<Record<string, string>>,
): { day: string; cells: ImportedCell[] } {
  const parsed = ROW_SCHEMAS[table].safeParse(record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PlausibleRowError(`${issue?.path.join('.') || 'row'}: ${issue?.message ?? 'invalid'}`);
  }
  const row = parsed.data;
  return { day: row.date, cells: (CELLS[table] as (r: typeof row) => ImportedCell[])(row) };
}
