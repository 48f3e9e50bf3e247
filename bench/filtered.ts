import { PATHS } from './traffic.js';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { sqlLiteral } from '../local/sql.js';
import type { Figure } from './report.js';
import { writeCutLayout } from './filtered-layout.js';
import { cutLoad, differences, loadDictionary, plainAnswer, type Condition, type Span } from './filtered-cut.js';

/**
 * The prototype behind the filtered-numbers decision (docs/data-model.md,
 * "Filtered reports: where the numbers come from"): a filtered dashboard
 * computed by DuckDB over a visit-level Parquet table, and the same
 * dashboard sessionized on read from the raw events, at the bench site's
 * scale (a year of 1M visits a month, 100,000 payments a month).
 *
 * The year is generated in SQL with the shares of `bench/traffic.ts`
 * (channels, pages, goals, campaigns, devices; most visitors come once), not
 * by the sessionizer: what is measured is how the table is read, which
 * depends on its rows, columns and their cardinalities, not on how they were
 * made. Visits are uniform over the days (no day-night rhythm); each visit
 * is one row, with its pages and goals as lists; a payment row carries the
 * credited visit's id and start day. Files: one per UTC day, as the archive
 * lays out events, under `bench/.cold/filtered-<visits a month>/`, kept between runs.
 * `FILTERED_VISITS_PER_MONTH` scales the site down (default 1,000,000).
 *
 * Figures: time of a dashboard load (every panel the app requests on load:
 * the overview of the range and of the period before it, the time series,
 * the first tab of each breakdown panel, goals), filtered by a combination
 * of a visit dimension and a page, at 30 days and 12 months; the bytes of
 * Parquet column chunks the queries read (what Athena bills); the Athena
 * charge per load from it; the same 30-day load sessionized on read from
 * the events; and the cells a rollup by pairs of dimensions would hold.
 * Then the same loads over the cut table (`benchCut`: dictionary ids, rows
 * clustered by channel and device, payments carrying their visit's
 * columns), each answer checked equal to plain SQL over the plain table.
 */

const VISITS_PER_MONTH = Number(process.env.FILTERED_VISITS_PER_MONTH ?? 1_000_000);
const PAYMENTS_PER_MONTH = VISITS_PER_MONTH / 10;
const DAYS = 365;
/** One directory per scale, so runs at different scales keep each other's data. */
const ROOT = fileURLToPath(new URL(`./.cold/filtered-${VISITS_PER_MONTH}/`, import.meta.url));
const END = '2026-11-26';
/** Athena: $5 per TB scanned, at least 10 MB a query (aws.amazon.com/athena/pricing). */
const ATHENA_USD_PER_BYTE = 5 / 1e12;
const ATHENA_MIN_BYTES = 10 * 1024 * 1024;

/** Rows per Parquet row group: about a day's, so that a range skips the other days of its months. */
const ROW_GROUP = Math.max(2_048, Math.round(VISITS_PER_MONTH / 30));
const PAYMENT_ROW_GROUP = Math.max(2_048, Math.round(PAYMENTS_PER_MONTH / 30));

const list = (items: readonly string[]) => `[${items.map(sqlLiteral).join(', ')}]`;
/** Picks from `items` with Zipf-like weights: the first the most often (`power` > 1 skews harder). */
const skewed = (items: readonly string[], power: number) =>
  `${list(items)}[1 + floor(pow(random(), ${power}) * ${items.length})::INT]`;
/** Picks by cumulative shares: `[value, share]` pairs. */
const shares = (pairs: ReadonlyArray<readonly [string, number]>, r: string) => {
  let sum = 0;
  const arms = pairs.map(([value, share]) => `WHEN ${r} < ${(sum += share)} THEN ${sqlLiteral(value)}`);
  return `CASE ${arms.join(' ')} ELSE ${sqlLiteral(pairs.at(-1)?.[0] ?? '')} END`;
};

const REFERRERS = [
  'google.com',
  'bing.com',
  'duckduckgo.com',
  'news.ycombinator.com',
  'reddit.com',
  'x.com',
  'linkedin.com',
  'chatgpt.com',
  'perplexity.ai',
  'github.com',
  ...Array.from({ length: 200 }, (_, i) => `blog-${i}.example`),
];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'IN', 'CA', 'BR', 'NL', 'ES', 'IT', 'PL', 'SE', 'JP', 'AU', 'MX', 'CH'];
const LANGUAGES = ['en-US', 'en-GB', 'de', 'fr', 'es', 'pt-BR', 'it', 'nl', 'pl', 'ja', 'sv'];

/** The year of visits and payments, written once to Parquet, one file per day. */
async function generate(db: DuckDBConnection): Promise<void> {
  const days = `(DATE ${sqlLiteral(END)} - ${DAYS - 1})`;
  const visits = VISITS_PER_MONTH * 12 * (DAYS / 360);
  await db.run(`SELECT setseed(0.15)`);
  await db.run(`
    CREATE TEMP TABLE v AS
    SELECT i,
      -- 60% of visits are a visitor's only one; the rest come from a pool that returns.
      CASE WHEN random() < 0.6 THEN 'u' || i ELSE 'r' || floor(random() * ${Math.round(visits * 0.13)})::BIGINT END AS vk,
      ${days} + floor(random() * ${DAYS})::INT AS day,
      random() AS rc, 1 + floor(ln(1 - random()) / ln(0.55))::INT AS pageviews,
      random() AS rg
    FROM range(${Math.round(visits)}) t(i)`);
  await db.run(`
    CREATE TEMP TABLE visits0 AS
    SELECT
      md5(i::VARCHAR)[1:16] AS visit_id,
      md5(vk)[1:22] AS visitor_id,
      day,
      (day::TIMESTAMP + to_seconds(floor(random() * 86400)::BIGINT)) AS start_ts,
      ${shares(
        [
          ['Direct', 0.35],
          ['Search', 0.3],
          ['Social', 0.1],
          ['Referral', 0.1],
          ['AI', 0.04],
          ['Email', 0.04],
          ['Paid', 0.04],
          ['Communities', 0.03],
        ],
        'rc',
      )} AS channel,
      CASE WHEN rc < 0.35 THEN NULL ELSE ${skewed(REFERRERS, 3)} END AS referrer,
      CASE WHEN rc < 0.35 THEN NULL ELSE ${skewed(REFERRERS, 3)} END AS source,
      CASE WHEN random() < 0.1 THEN 'campaign-' || floor(pow(random(), 2) * 40)::INT END AS utm_campaign,
      CASE WHEN random() < 0.1 THEN ${list(['newsletter', 'google', 'twitter', 'partner'])}[1 + floor(random() * 4)::INT] END AS utm_source,
      CASE WHEN random() < 0.1 THEN ${list(['email', 'cpc', 'social'])}[1 + floor(random() * 3)::INT] END AS utm_medium,
      CASE WHEN random() < 0.02 THEN 'content-' || floor(random() * 10)::INT END AS utm_content,
      CASE WHEN random() < 0.03 THEN 'term-' || floor(pow(random(), 2) * 300)::INT END AS utm_term,
      pageviews,
      list_transform(range(pageviews), x -> ${skewed(PATHS, 3)}) AS pages,
      CASE WHEN pageviews > 1 THEN (pageviews - 1) * (20 + floor(random() * 160)::INT) ELSE 0 END AS duration_s,
      list_filter([CASE WHEN rg < 0.034 THEN 'Signup' END, CASE WHEN rg > 0.92 THEN 'Outbound Link: Click' END], x -> x IS NOT NULL) AS goals,
      ${skewed(COUNTRIES, 2.5)} AS country,
      ${shares(
        [
          ['Desktop', 0.55],
          ['Mobile', 0.42],
          ['Tablet', 0.03],
        ],
        'random()',
      )} AS device,
      ${list(['Chrome', 'Safari', 'Firefox', 'Edge', 'Samsung Internet', 'Opera'])}[1 + floor(pow(random(), 2) * 6)::INT] AS browser,
      ${list(['Windows', 'iOS', 'Android', 'Mac', 'Linux', 'ChromeOS'])}[1 + floor(pow(random(), 1.5) * 6)::INT] AS os,
      ${skewed(LANGUAGES, 2)} AS language
    FROM v`);
  await db.run(`DROP TABLE v`);
  await db.run(`
    CREATE TEMP TABLE visits AS
    SELECT *, pages[1] AS landing_page, pages[-1] AS exit_page, pageviews = 1 AND len(goals) = 0 AS bounce
    FROM visits0 ORDER BY day, start_ts`);
  await db.run(`DROP TABLE visits0`);
  // Payments: 85% credited to a visit made before them (up to 30 days), the rest unattributed.
  await db.run(`
    CREATE TEMP TABLE payments AS
    WITH p AS (
      SELECT i, floor(random() * ${Math.round(visits)})::BIGINT AS vi, random() < 0.85 AS attributed,
        floor(random() * 30 * 86400)::BIGINT AS later
      FROM range(${Math.round(PAYMENTS_PER_MONTH * 12 * (DAYS / 360))}) t(i)
    ), numbered AS (SELECT row_number() OVER () - 1 AS n, visit_id, visitor_id, start_ts, day FROM visits)
    SELECT 'pay_' || i AS payment_id, least(start_ts + to_seconds(later), DATE ${sqlLiteral(END)}::TIMESTAMP + INTERVAL 86399 SECOND) AS ts,
      (CASE WHEN random() < 0.3 THEN 19 ELSE 49 END)::DECIMAL(12, 2) AS net_usd, visitor_id AS customer,
      CASE WHEN attributed THEN visit_id END AS visit_id, CASE WHEN attributed THEN day END AS visit_day
    FROM p JOIN numbered ON n = vi ORDER BY ts`);
  mkdirSync(join(ROOT, 'visits'), { recursive: true });
  await db.run(
    `COPY (SELECT *, strftime(day, '%Y-%m') AS mo FROM visits) TO ${sqlLiteral(join(ROOT, 'visits'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP}, PARTITION_BY (mo), OVERWRITE_OR_IGNORE)`,
  );
  await db.run(
    `COPY (SELECT *, strftime(ts, '%Y-%m') AS mo FROM payments) TO ${sqlLiteral(join(ROOT, 'payments'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${PAYMENT_ROW_GROUP}, PARTITION_BY (mo), OVERWRITE_OR_IGNORE)`,
  );
  // The events of the last 60 days, one row per page view and goal, as the archive holds them.
  await db.run(`
    COPY (
      SELECT md5(visit_id || k)[1:32] AS event_id, start_ts + to_seconds(k * (duration_s // greatest(1, pageviews - 1))) AS ts,
        'pageview' AS type, NULL AS goal, visitor_id, pages[k + 1] AS path, referrer AS referrer_host, channel, source,
        utm_source, utm_medium, utm_campaign, utm_content, utm_term, country, device, browser, os, language,
        (start_ts + to_seconds(k * (duration_s // greatest(1, pageviews - 1))))::DATE AS dt
      FROM visits, range(pageviews) r(k) WHERE day > DATE ${sqlLiteral(END)} - 60
      UNION ALL
      SELECT md5(visit_id || g)[1:32], start_ts + to_seconds(duration_s), 'goal', g, visitor_id, exit_page, referrer, channel, source,
        utm_source, utm_medium, utm_campaign, utm_content, utm_term, country, device, browser, os, language, start_ts::DATE
      FROM (SELECT *, unnest(goals) AS g FROM visits WHERE day > DATE ${sqlLiteral(END)} - 60)
      ORDER BY ts
    ) TO ${sqlLiteral(join(ROOT, 'events'))} (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (dt), OVERWRITE_OR_IGNORE)`);
}

/** A filter the way the API will take it, as SQL over a visit row: Search on mobile, and a blog page viewed. */
const FILTER = `channel = 'Search' AND device = 'Mobile' AND list_has_any(pages, ['/blog'])`;
const FILTER_CONTAINS = `channel = 'Search' AND device = 'Mobile' AND len(list_filter(pages, x -> x LIKE '/blog%')) > 0`;

interface Panel {
  sql: string;
  /** Visit columns it reads besides the filter's and `visit_id` (for the bytes a columnar engine fetches). */
  columns: string[];
  /** Reads the period before the range (the overview's comparison). */
  previous?: boolean;
}

/**
 * The SQL of each panel a dashboard load requests, over `visits` and
 * `payments` views of the range (and `prev_*` of the period before it).
 * Revenue is that of the range's payments credited to a matching visit.
 */
function panels(filter: string): Record<string, Panel> {
  const matching = `(SELECT * FROM visits WHERE day >= (SELECT min(ts)::DATE FROM payments) AND ${filter})`;
  const credited = (payments: string, visits: string) =>
    `(SELECT p.*, m.* EXCLUDE (visit_id) FROM ${payments} p JOIN ${visits} m USING (visit_id) WHERE ${filter})`;
  const totals = (visits: string, payments: string) => `
    SELECT count(DISTINCT visitor_id) AS visitors, count(*) AS sessions, sum(pageviews) AS pageviews,
      avg(bounce::INT) AS bounce_rate, avg(duration_s) FILTER (WHERE duration_s > 0) AS visit_duration,
      (SELECT count(*) FROM ${credited(payments, visits)}) AS payments,
      (SELECT sum(net_usd) FROM ${credited(payments, visits)}) AS revenue,
      (SELECT count(DISTINCT customer) FROM ${credited(payments, visits)}) AS customers
    FROM (SELECT * FROM ${visits} WHERE day >= (SELECT min(ts)::DATE FROM ${payments}) AND ${filter})`;
  const breakdown = (column: string): Panel => ({
    sql: `
      WITH r AS (SELECT ${column} AS key, count(*) AS payments, sum(net_usd) AS revenue FROM ${credited('payments', 'visits')} GROUP BY ALL),
      v AS (SELECT ${column} AS key, count(DISTINCT visitor_id) AS visitors FROM ${matching} GROUP BY ALL)
      SELECT key, visitors, revenue FROM v FULL JOIN r USING (key) ORDER BY revenue DESC NULLS LAST, visitors DESC LIMIT 100`,
    columns: ['day', 'visitor_id', column],
  });
  return {
    overview: {
      sql: totals('visits', 'payments'),
      columns: ['day', 'visitor_id', 'pageviews', 'bounce', 'duration_s'],
    },
    'overview, previous period': {
      sql: totals('prev_visits', 'prev_payments'),
      columns: ['day', 'visitor_id', 'pageviews', 'bounce', 'duration_s'],
      previous: true,
    },
    timeseries: {
      sql: `
        SELECT day, count(DISTINCT visitor_id) AS visitors, count(*) AS sessions, sum(pageviews)::DOUBLE AS n FROM ${matching} GROUP BY day
        UNION ALL SELECT ts::DATE, 0, count(*), sum(net_usd)::DOUBLE FROM ${credited('payments', 'visits')} GROUP BY ALL`,
      columns: ['day', 'visitor_id', 'pageviews'],
    },
    channel: breakdown('channel'),
    page: {
      sql: `
        WITH pv AS (SELECT visitor_id, unnest(list_distinct(pages)) AS page FROM ${matching}),
        r AS (SELECT page, sum(net_usd) AS revenue FROM (SELECT unnest(list_distinct(pages)) AS page, net_usd FROM ${credited('payments', 'visits')}) GROUP BY page),
        v AS (SELECT page, count(DISTINCT visitor_id) AS visitors FROM pv GROUP BY page)
        SELECT page, visitors, revenue FROM v FULL JOIN r USING (page) ORDER BY revenue DESC NULLS LAST, visitors DESC LIMIT 100`,
      columns: ['day', 'visitor_id'],
    },
    country: breakdown('country'),
    device: breakdown('device'),
    goals: {
      sql: `
        WITH g AS (SELECT visit_id, visitor_id, unnest(goals) AS goal FROM ${matching}),
        r AS (SELECT goal, count(*) AS payments, sum(net_usd) AS revenue FROM (SELECT unnest(goals) AS goal, net_usd FROM ${credited('payments', 'visits')}) GROUP BY goal)
        SELECT goal, count(DISTINCT visitor_id), count(DISTINCT visit_id), count(*), any_value(revenue)
        FROM g LEFT JOIN r USING (goal) GROUP BY goal`,
      columns: ['day', 'visitor_id', 'goals'],
    },
  };
}

/** The visit columns the example filters read. */
const FILTER_COLUMNS = ['channel', 'device', 'pages'];
const PAYMENT_COLUMNS = ['visit_id', 'ts', 'net_usd', 'customer'];

/** Parquet files of a table that may hold days [from, to] (inclusive, YYYY-MM-DD): its `mo=` months or `dt=` days. */
function filesOf(table: string, from: string, to: string): string[] {
  const dir = join(ROOT, table);
  const overlaps = (part: string) =>
    part.startsWith('mo=')
      ? part.slice(3) >= from.slice(0, 7) && part.slice(3) <= to.slice(0, 7)
      : part.slice(3) >= from && part.slice(3) <= to;
  return readdirSync(dir)
    .filter((part) => /^(mo|dt)=/.test(part) && overlaps(part))
    .flatMap((part) => readdirSync(join(dir, part)).map((f) => join(dir, part, f)));
}

/**
 * Compressed bytes of the named columns' chunks in the row groups whose
 * `key` column's statistics overlap [from, to]: what a columnar scan that
 * prunes row groups (DuckDB, Athena) reads, and what Athena bills.
 */
async function columnBytes(
  db: DuckDBConnection,
  files: string[],
  columns: string[],
  key: string,
  from: string,
  to: string,
): Promise<number> {
  if (files.length === 0) return 0;
  const reader = await db.runAndReadAll(`
    WITH md AS (
      SELECT file_name, row_group_id, split_part(path_in_schema, ', ', 1) AS col, total_compressed_size, stats_min_value, stats_max_value
      FROM parquet_metadata(${list(files)})),
    rg AS (SELECT file_name, row_group_id FROM md
      WHERE col = ${sqlLiteral(key)} AND stats_max_value >= ${sqlLiteral(from)} AND stats_min_value <= ${sqlLiteral(`${to} 23:59:59`)})
    SELECT sum(total_compressed_size), count(*) FROM md JOIN rg USING (file_name, row_group_id)
    WHERE col IN (${columns.map(sqlLiteral).join(', ')})`);
  const [bytes, chunks] = reader.getRowsJS()[0] ?? [];
  columnChunks += Number(chunks ?? 0);
  return Number(bytes ?? 0);
}
/** Column chunks counted by `columnBytes` since the last reset: at most one S3 range GET each. */
let columnChunks = 0;

const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

interface Load {
  ms: number;
  /** CPU time of the process (DuckDB's threads included) over the load, ms: on a shared machine, what the load costs. */
  cpuMs: number;
  /** Column bytes each panel's query reads, as Athena would scan them. */
  bytes: number[];
  /** Column chunks those queries read: at most one S3 range GET each. */
  chunks: number;
}

/** One dashboard load over `days` days ending END with `filter`: every panel, timed. */
async function load(db: DuckDBConnection, days: number, filter: string): Promise<Load> {
  const from = addDays(END, -(days - 1));
  const prevFrom = addDays(from, -days);
  const prevTo = addDays(from, -1);
  // The revenue of a range's payments needs their credited visits, up to the lookback (30 days) before the range.
  const spans = { visits: [addDays(from, -30), END], prev_visits: [addDays(prevFrom, -30), prevTo] } as const;
  const source = (table: string, a: string, b: string) => {
    const files = filesOf(table, a, b);
    const key = table === 'visits' ? 'day' : 'ts';
    return files.length
      ? `SELECT * FROM read_parquet(${list(files)}, hive_partitioning = false) WHERE ${key} >= DATE ${sqlLiteral(a)} AND ${key} < DATE ${sqlLiteral(addDays(b, 1))}`
      : `SELECT * FROM ${table}_empty`;
  };
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  // Locally the matching visits are read once (one scan of the range's files), then every panel reads them.
  await db.run(
    `CREATE OR REPLACE TEMP TABLE visits AS SELECT * FROM (${source('visits', ...spans.visits)}) WHERE ${filter}`,
  );
  await db.run(`CREATE OR REPLACE TEMP TABLE payments AS ${source('payments', from, END)}`);
  await db.run(
    `CREATE OR REPLACE TEMP TABLE prev_visits AS SELECT * FROM (${source('visits', ...spans.prev_visits)}) WHERE ${filter}`,
  );
  await db.run(`CREATE OR REPLACE TEMP TABLE prev_payments AS ${source('payments', prevFrom, prevTo)}`);
  const queries = Object.values(panels(filter));
  const each: number[] = [];
  for (const panel of queries) {
    const t = performance.now();
    await db.runAndReadAll(panel.sql);
    each.push(Math.round(performance.now() - t));
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  if (process.env.FILTERED_DEBUG) process.stderr.write(`${days} days: ${each.join(' ')} ms\n`);
  const bytes: number[] = [];
  columnChunks = 0;
  for (const panel of queries) {
    const [a, b] = panel.previous ? spans.prev_visits : spans.visits;
    const [c, d] = panel.previous ? [prevFrom, prevTo] : [from, END];
    bytes.push(
      (await columnBytes(db, filesOf('visits', a, b), ['visit_id', ...FILTER_COLUMNS, ...panel.columns], 'day', a, b)) +
        (await columnBytes(db, filesOf('payments', c, d), PAYMENT_COLUMNS, 'ts', c, d)),
    );
  }
  return { ms, cpuMs, bytes, chunks: columnChunks };
}

/** The 30-day load sessionized on read from the events (option b's work): visits rebuilt with the 30-minute gap. */
async function loadFromEvents(db: DuckDBConnection): Promise<{ ms: number; bytes: number }> {
  const files = filesOf('events', addDays(END, -59), END);
  const t0 = performance.now();
  await db.runAndReadAll(`
    WITH e AS (SELECT * FROM read_parquet(${list(files)})),
    s AS (SELECT *, coalesce(ts - lag(ts) OVER (PARTITION BY visitor_id ORDER BY ts) >= INTERVAL 30 MINUTE, true)::INT AS starts FROM e),
    n AS (SELECT *, sum(starts) OVER (PARTITION BY visitor_id ORDER BY ts) AS visit FROM s),
    v AS (SELECT visitor_id, visit, min(ts) AS start_ts, arg_min(channel, ts) AS channel, arg_min(device, ts) AS device,
            list(path ORDER BY ts) FILTER (WHERE type = 'pageview') AS pages, count(*) FILTER (WHERE type = 'pageview') AS pageviews
          FROM n GROUP BY visitor_id, visit)
    SELECT count(DISTINCT visitor_id), count(*), sum(pageviews) FROM v
    WHERE start_ts >= DATE ${sqlLiteral(addDays(END, -29))} AND channel = 'Search' AND device = 'Mobile' AND list_has_any(pages, ['/blog'])`);
  const ms = performance.now() - t0;
  const bytes = await columnBytes(
    db,
    files,
    ['visitor_id', 'ts', 'channel', 'device', 'path', 'type'],
    'ts',
    addDays(END, -59),
    END,
  );
  return { ms, bytes };
}

/** Cells a rollup by pairs of dimensions would hold for 30 days: one per (day, dimension A value, dimension B value). */
async function pairCells(db: DuckDBConnection): Promise<number> {
  const dims = [
    'channel',
    'referrer',
    'utm_campaign',
    'utm_term',
    'landing_page',
    'exit_page',
    'country',
    'device',
    'browser',
    'os',
    'language',
  ];
  await db.run(
    `CREATE OR REPLACE VIEW month AS SELECT * FROM read_parquet(${list(filesOf('visits', addDays(END, -29), END))}, hive_partitioning = false) WHERE day > DATE ${sqlLiteral(END)} - 30`,
  );
  let cells = 0;
  for (let i = 0; i < dims.length; i++)
    for (let j = i + 1; j < dims.length; j++) {
      const reader = await db.runAndReadAll(
        `SELECT count(*) FROM (SELECT DISTINCT day, ${dims[i]}, ${dims[j]} FROM month)`,
      );
      cells += Number(reader.getRowsJS()[0]?.[0] ?? 0);
    }
  // Each visit's pages against every other dimension.
  for (const d of dims) {
    const reader = await db.runAndReadAll(`SELECT count(*) FROM (SELECT DISTINCT day, ${d}, unnest(pages) FROM month)`);
    cells += Number(reader.getRowsJS()[0]?.[0] ?? 0);
  }
  return cells;
}

/** The filters measured on the cut table: a visit dimension with a page, and a page condition alone (no row group skips). */
const CUT_FILTERS: ReadonlyArray<readonly [string, Condition[]]> = [
  [
    'channel is Search AND device is Mobile AND page is /blog',
    [
      { dimension: 'channel', op: 'is', values: ['Search'] },
      { dimension: 'device', op: 'is', values: ['Mobile'] },
      { dimension: 'page', op: 'is', values: ['/blog'] },
    ],
  ],
  ['page contains /blog', [{ dimension: 'page', op: 'contains', values: ['/blog'] }]],
];
/** Rows per row group of the cut table: a month's channel × device cells span several, so their min/max skip. */
const CUT_ROW_GROUP = Math.max(2_048, Math.round(VISITS_PER_MONTH / 50));
/** Visit columns a cut load reads besides those of its filter. */
const CUT_VISIT_COLUMNS = [
  'visitor',
  'day',
  'pageviews',
  'duration_s',
  'bounce',
  'channel',
  'country',
  'device',
  'pages',
  'goals',
];
const CUT_PAYMENT_COLUMNS = ['pday', 'net_usd', 'customer', 'channel', 'country', 'device', 'pages', 'goals'];

/**
 * Compressed bytes and chunks of `columns` in the row groups whose min/max
 * overlap every `[column, low, high]` (integers, or dates as YYYY-MM-DD):
 * what DuckDB's and Athena's row-group pruning leave to read.
 */
async function prunedBytes(
  db: DuckDBConnection,
  files: string[],
  columns: string[],
  ranges: ReadonlyArray<readonly [string, string, string]>,
): Promise<{ bytes: number; chunks: number }> {
  const overlaps = ranges.map(
    ([column, low, high]) =>
      `bool_or(col = ${sqlLiteral(column)} AND stats_max_value >= ${sqlLiteral(low)} AND stats_min_value <= ${sqlLiteral(high)}) ` +
      `= bool_or(col = ${sqlLiteral(column)})`,
  );
  // Integer statistics compare as numbers: pad both sides to the same width.
  const pad = (x: string) => `CASE WHEN x LIKE '____-__-__' THEN x ELSE lpad(x, 20, '0') END`.replaceAll('x', x);
  const reader = await db.runAndReadAll(`
    WITH md AS (
      SELECT file_name, row_group_id, split_part(path_in_schema, ', ', 1) AS col, total_compressed_size,
        ${pad('stats_min_value')} AS stats_min_value, ${pad('stats_max_value')} AS stats_max_value
      FROM parquet_metadata(${list(files)})),
    rg AS (SELECT file_name, row_group_id FROM md GROUP BY ALL HAVING ${overlaps.join(' AND ') || 'true'})
    SELECT coalesce(sum(total_compressed_size), 0), count(*) FROM md JOIN rg USING (file_name, row_group_id)
    WHERE col IN (${columns.map(sqlLiteral).join(', ')})`);
  const [bytes, chunks] = reader.getRowsJS()[0] ?? [];
  return { bytes: Number(bytes ?? 0), chunks: Number(chunks ?? 0) };
}

/** The `[column, low id, high id]` ranges of a filter's scalar `is` conditions, for `prunedBytes`. */
async function idRanges(
  db: DuckDBConnection,
  conditions: readonly Condition[],
): Promise<Array<[string, string, string]>> {
  const ranges: Array<[string, string, string]> = [];
  for (const { dimension, op, values } of conditions) {
    if (op !== 'is' || dimension === 'page' || dimension === 'goal') continue;
    const reader = await db.runAndReadAll(
      `SELECT min(id), max(id) FROM dict WHERE dim = ${sqlLiteral(dimension)} AND value IN (${values.map(sqlLiteral).join(', ')})`,
    );
    const [low, high] = reader.getRowsJS()[0] ?? [];
    ranges.push([dimension, String(low).padStart(20, '0'), String(high).padStart(20, '0')]);
  }
  return ranges;
}

/**
 * The cut table's loads at 30 days and 12 months for each of `CUT_FILTERS`:
 * CPU and wall time (median of 3), the bytes and chunks the pruned row
 * groups hold; each answer first checked equal to the plain SQL's over the
 * plain table (the bench fails on a difference).
 */
async function benchCut(db: DuckDBConnection): Promise<Figure[]> {
  const marker = join(ROOT, `.cut-${CUT_ROW_GROUP}`);
  if (!existsSync(marker)) {
    const t0 = performance.now();
    await writeCutLayout(db, ROOT, CUT_ROW_GROUP);
    process.stderr.write(`filtered: wrote the cut table in ${Math.round((performance.now() - t0) / 1000)} s\n`);
    mkdirSync(marker);
  }
  await loadDictionary(db, ROOT);
  const section = 'filtered';
  const figures: Figure[] = [
    {
      section,
      name: 'cut visit table, a year, Parquet',
      value: dirBytes(join(ROOT, 'visits2')) / 2 ** 20,
      unit: 'MiB',
    },
    {
      section,
      name: 'cut payment table, a year, Parquet',
      value: dirBytes(join(ROOT, 'payments2')) / 2 ** 20,
      unit: 'MiB',
    },
  ];
  for (const [days, label, budget] of [
    [30, '30 days', '≤ 1,000 ms'],
    [365, '12 months', '≤ 3,000 ms'],
  ] as const) {
    const from = addDays(END, -(days - 1));
    const span: Span = { from, to: END, prevFrom: addDays(from, -days), prevTo: addDays(from, -1) };
    const files = {
      visits: filesOf('visits2', span.prevFrom, END),
      payments: filesOf('payments2', span.prevFrom, END),
    };
    for (const [name, conditions] of CUT_FILTERS) {
      const reference = await plainAnswer(
        db,
        {
          visits: filesOf('visits', addDays(span.prevFrom, -30), END),
          payments: filesOf('payments', span.prevFrom, END),
        },
        span,
        conditions,
      );
      const runs: Array<{ ms: number; cpuMs: number }> = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const cpu0 = process.cpuUsage();
        const answer = await cutLoad(db, files, span, conditions);
        const cpu = process.cpuUsage(cpu0);
        runs.push({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 });
        const diff = differences(answer, reference);
        if (diff.length > 0)
          throw new Error(`cut load differs from plain SQL (${label}, ${name}):\n${diff.join('\n')}`);
      }
      const median = (key: 'ms' | 'cpuMs') => runs.map((r) => r[key]).sort((a, b) => a - b)[1]!;
      const ranges = await idRanges(db, conditions);
      const day: [string, string, string] = ['day', span.prevFrom, END];
      const pday: [string, string, string] = ['pday', span.prevFrom, END];
      const visits = await prunedBytes(db, files.visits, CUT_VISIT_COLUMNS, [day, ...ranges]);
      const payments = await prunedBytes(db, files.payments, CUT_PAYMENT_COLUMNS, [pday, ...ranges]);
      const what = `cut, ${label}, ${name}`;
      figures.push(
        { section, name: `${what}, CPU time (median of 3)`, value: median('cpuMs'), unit: 'ms', target: budget },
        { section, name: `${what}, wall (median of 3)`, value: median('ms'), unit: 'ms' },
        { section, name: `${what}, column bytes read`, value: (visits.bytes + payments.bytes) / 2 ** 20, unit: 'MiB' },
        { section, name: `${what}, column chunks read`, value: visits.chunks + payments.chunks, unit: 'chunks' },
        { section, name: `${what}, answer rows (equal to plain SQL)`, value: reference.size, unit: 'rows' },
      );
    }
  }
  return figures;
}

const dirBytes = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (sum, e) => sum + (e.isDirectory() ? dirBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size),
    0,
  );

/** `npm run bench -- --only filtered`. */
export async function benchFiltered(): Promise<Figure[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  await db.run(`SET TimeZone = 'UTC'`);
  const marker = join(ROOT, `.complete-${VISITS_PER_MONTH}`);
  if (!existsSync(marker)) {
    rmSync(ROOT, { recursive: true, force: true });
    mkdirSync(ROOT, { recursive: true });
    const t0 = performance.now();
    await generate(db);
    process.stderr.write(`filtered: generated the year in ${Math.round((performance.now() - t0) / 1000)} s\n`);
    mkdirSync(marker);
  }
  for (const table of ['visits', 'payments'])
    await db.run(
      `CREATE TABLE ${table}_empty AS SELECT * FROM read_parquet(${list(filesOf(table, END, END))}, hive_partitioning = false) LIMIT 0`,
    );
  // FILTERED_ONLY_CUT=1 measures the cut table alone (the plain loads take minutes on the shared machine).
  const figures = process.env.FILTERED_ONLY_CUT ? [] : await benchPlain(db);
  figures.push(...(await benchCut(db)));
  db.closeSync();
  instance.closeSync();
  return figures;
}

/** The plain table's loads (`load`), the events read on the fly, and the pair rollup's cells: the designs compared first. */
async function benchPlain(db: DuckDBConnection): Promise<Figure[]> {
  const section = 'filtered';
  const figures: Figure[] = [
    { section, name: 'visit table, a year, Parquet', value: dirBytes(join(ROOT, 'visits')) / 2 ** 20, unit: 'MiB' },
  ];
  await load(db, 30, FILTER); // warm the file cache, as a second load would find it
  for (const [days, label, budget] of [
    [30, '30 days', '≤ 1,000 ms'],
    [365, '12 months', '≤ 3,000 ms'],
  ] as const) {
    const runs = [await load(db, days, FILTER), await load(db, days, FILTER), await load(db, days, FILTER_CONTAINS)];
    const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
    const cpuMs = runs.map((r) => r.cpuMs).sort((a, b) => a - b);
    const { bytes, chunks } = runs[0]!;
    const queries = bytes.length;
    const billed = bytes.reduce((sum, b) => sum + Math.max(b, ATHENA_MIN_BYTES), 0);
    figures.push(
      {
        section,
        name: `filtered dashboard, ${label}, DuckDB local (median of 3)`,
        value: ms[1]!,
        unit: 'ms',
        target: budget,
      },
      {
        section,
        name: `filtered dashboard, ${label}, DuckDB local, CPU time (median of 3)`,
        value: cpuMs[1]!,
        unit: 'ms',
      },
      {
        section,
        name: `filtered dashboard, ${label}, column bytes read (${queries} queries)`,
        value: bytes.reduce((a, b) => a + b, 0) / 2 ** 20,
        unit: 'MiB',
      },
      {
        section,
        name: `filtered dashboard, ${label}, Athena charge (${queries} queries, 10 MB minimum each)`,
        value: billed * ATHENA_USD_PER_BYTE * 1000,
        unit: 'USD per 1,000 loads',
        target: days === 30 ? '≤ 1' : undefined,
      },
      { section, name: `filtered dashboard, ${label}, Parquet column chunks read`, value: chunks, unit: 'chunks' },
    );
  }
  const events = await loadFromEvents(db);
  figures.push(
    {
      section,
      name: 'sessionized on read from events, 30 days (visitors/sessions/pageviews only)',
      value: events.ms,
      unit: 'ms',
    },
    {
      section,
      name: 'sessionized on read from events, 30 days, column bytes read',
      value: events.bytes / 2 ** 20,
      unit: 'MiB',
    },
    { section, name: 'rollup by pairs of dimensions, 30 days, cells', value: await pairCells(db), unit: 'cells' },
  );
  return figures;
}
