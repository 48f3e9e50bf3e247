import * as z from 'zod';
import { storedPropsSchema } from './props.js';

/**
 * The enriched event: what `POST /api/event` (and `footfall import events`) writes
 * to the event stream, what the sessionizer reads and what the raw archive stores
 * one row per event. This schema is the single definition of those columns; the
 * Glue table, the local Parquet writer and `docs/sql.md` are derived from
 * `TRACKED_EVENT_COLUMNS`.
 */
export const DEVICES = ['Desktop', 'Mobile', 'Tablet', 'Unknown'] as const;
export type Device = (typeof DEVICES)[number];

const str = (max: number) => z.string().max(max);
const nullableStr = (max: number) => str(max).nullable();

export const trackedEventSchema = z.object({
  /** Unique id of the event (a random UUID v4). */
  event_id: str(64),
  /** Site domain as configured (`s`). */
  site: str(253),
  /** Event time, milliseconds since the Unix epoch, UTC. */
  ts: z.number().int().nonnegative(),
  /** `pageview` or `goal`. */
  type: z.enum(['pageview', 'goal']),
  /** Goal name (trimmed, at most 64 UTF-8 bytes); null for page views. */
  goal: nullableStr(64),
  /** Visitor id: the tracker's `v`, or the daily hash when `v` was missing or invalid. */
  visitor_id: str(64),
  /** `id` when `visitor_id` came from `v`, `hash` when it is the daily hash. */
  visitor_kind: z.enum(['id', 'hash']),
  /** Host of the page URL, lowercased. */
  hostname: str(253),
  /** Path of the page URL (no query string); hash routes (`#/…`) are kept. */
  path: str(2048),
  /** Referrer host when the referrer is another site; null otherwise. */
  referrer_host: nullableStr(253),
  /** Channel from the channel rules (`lambdas/domain/channel.ts`). */
  channel: str(32),
  /** Source name (e.g. `Google`, `Hacker News`), or the referrer host; null for Direct. */
  source: nullableStr(253),
  utm_source: nullableStr(256),
  utm_medium: nullableStr(256),
  utm_campaign: nullableStr(256),
  utm_term: nullableStr(256),
  utm_content: nullableStr(256),
  /** Names of the click-id parameters on the page URL (e.g. `gclid`), comma-separated; kept so a rebuild can re-run the channel rules. */
  click_ids: nullableStr(256),
  /** Outbound link URL (`l`) of an `Outbound Link: Click` goal. */
  link: nullableStr(2048),
  /** ISO 3166-1 alpha-2 country code, or null when unknown. */
  country: nullableStr(2),
  /** Primary browser language from `Accept-Language` (e.g. `en`, `pt-BR`). */
  language: nullableStr(35),
  browser: nullableStr(64),
  browser_version: nullableStr(32),
  os: nullableStr(64),
  os_version: nullableStr(32),
  device: z.enum(DEVICES),
  /** Screen width in CSS pixels (`w`). */
  screen_width: z.number().int().nullable(),
  /**
   * Custom properties (`p`) as JSON text of an object of text values, null for
   * none (`lambdas/domain/props.ts`). Text rather than a map column: Athena and
   * DuckDB read it alike (`json_extract_scalar` / `json_extract_string`), and
   * it reads back exactly from either engine's results. Absent in events
   * written before properties existed: null.
   */
  props: storedPropsSchema,
});

export type TrackedEvent = z.infer<typeof trackedEventSchema>;

/** Column types of the archive, in the Glue/Athena vocabulary. */
export type ColumnType = 'string' | 'bigint' | 'int' | 'timestamp';

/**
 * Archive columns in order, with their Glue type. `ts` is stored as a Parquet
 * timestamp (ms, UTC); the partition columns `site` and `dt` come from the path.
 */
export const TRACKED_EVENT_COLUMNS: ReadonlyArray<{ name: keyof TrackedEvent; type: ColumnType }> = [
  { name: 'event_id', type: 'string' },
  { name: 'ts', type: 'timestamp' },
  { name: 'type', type: 'string' },
  { name: 'goal', type: 'string' },
  { name: 'visitor_id', type: 'string' },
  { name: 'visitor_kind', type: 'string' },
  { name: 'hostname', type: 'string' },
  { name: 'path', type: 'string' },
  { name: 'referrer_host', type: 'string' },
  { name: 'channel', type: 'string' },
  { name: 'source', type: 'string' },
  { name: 'utm_source', type: 'string' },
  { name: 'utm_medium', type: 'string' },
  { name: 'utm_campaign', type: 'string' },
  { name: 'utm_term', type: 'string' },
  { name: 'utm_content', type: 'string' },
  { name: 'click_ids', type: 'string' },
  { name: 'link', type: 'string' },
  { name: 'country', type: 'string' },
  { name: 'language', type: 'string' },
  { name: 'browser', type: 'string' },
  { name: 'browser_version', type: 'string' },
  { name: 'os', type: 'string' },
  { name: 'os_version', type: 'string' },
  { name: 'device', type: 'string' },
  { name: 'screen_width', type: 'int' },
  // Appended: Parquet files written before it are read by column name, the column as null.
  { name: 'props', type: 'string' },
];
