import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlLiteral } from '../local/sql.js';

/**
 * A filtered dashboard load over the cut visit table (`bench/filtered-layout.ts`)
 * in one pass per table, and the same answer from the plain table by plain
 * SQL, so the bench can hold the two equal. A load is every panel the app
 * requests: the overview of the range and of the period before it, the time
 * series, the channel, country, device and page breakdowns and goals, each
 * with the revenue credited to the matching visits.
 *
 * Both return one row per (panel, key, kind) with the figures as text:
 * `visits` rows carry visitors, visits, pageviews, bounces, the sum of
 * durations (s) and the visits with a duration (page and goal rows: visitors,
 * visits and, for goals, conversions); `pay` rows carry payments, revenue
 * (USD) and distinct customers (page and goal rows: payments, revenue).
 */

/** One condition of a filter, with Plausible's `is` and `contains` (case-sensitive substring). */
export interface Condition {
  dimension: string;
  op: 'is' | 'contains';
  values: readonly string[];
}

/** A range and the period before it, days inclusive (YYYY-MM-DD, the site's local days). */
export interface Span {
  from: string;
  to: string;
  prevFrom: string;
  prevTo: string;
}

/** The credited visit may start up to the site's lookback before its payment (`lookback_days`, 30 by default). */
const LOOKBACK_DAYS = 30;
/** The dimension a visit-row list column takes its values from. */
const LIST_DIMENSION = new Map([
  ['pages', 'page'],
  ['goals', 'goal'],
]);
/** Breakdown panels of visit dimensions a load computes (besides pages and goals). */
const BREAKDOWNS = ['channel', 'country', 'device'] as const;

const list = (items: readonly string[]) => `[${items.map(sqlLiteral).join(', ')}]`;
const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const dayRange = (column: string, from: string, to: string) =>
  `${column} >= DATE ${sqlLiteral(from)} AND ${column} < DATE ${sqlLiteral(addDays(to, 1))}`;

/** The column a condition reads: `page` is the visit's list of pages, `goal` its goals. */
const columnOf = (dimension: string) => [...LIST_DIMENSION].find(([, d]) => d === dimension)?.[0] ?? dimension;

/** A filter as SQL over a plain visit row (strings). */
export function plainFilter(conditions: readonly Condition[]): string {
  return conditions
    .map(({ dimension, op, values }) => {
      const column = columnOf(dimension);
      const test = (x: string) =>
        op === 'is'
          ? `${x} IN (${values.map(sqlLiteral).join(', ')})`
          : values.map((v) => `contains(${x}, ${sqlLiteral(v)})`).join(' OR ');
      return LIST_DIMENSION.has(column) ? `len(list_filter(${column}, x -> ${test('x')})) > 0` : `(${test(column)})`;
    })
    .join(' AND ');
}

/**
 * A filter as SQL over a cut visit (or payment) row: each condition is first
 * resolved to the dictionary ids it matches (one small query per condition),
 * so the scan compares integers.
 */
export async function cutFilter(db: DuckDBConnection, conditions: readonly Condition[]): Promise<string> {
  const parts: string[] = [];
  for (const { dimension, op, values } of conditions) {
    const match =
      op === 'is'
        ? `value IN (${values.map(sqlLiteral).join(', ')})`
        : values.map((v) => `contains(value, ${sqlLiteral(v)})`).join(' OR ');
    const ids = (
      await db.runAndReadAll(`SELECT id FROM dict WHERE dim = ${sqlLiteral(dimension)} AND (${match}) ORDER BY id`)
    )
      .getRowsJS()
      .map((r) => String(r[0]));
    const column = columnOf(dimension);
    if (ids.length === 0) parts.push('false');
    else if (LIST_DIMENSION.has(column)) parts.push(listCondition(column, ids.map(Number)));
    else parts.push(`${column} IN (${ids.join(', ')})`);
  }
  return parts.join(' AND ') || 'true';
}

/**
 * A list column holds one of `ids`: one id is `list_contains`; more (a
 * `contains` over many pages) look each element up in a constant list of
 * booleans indexed by id, which measured faster than `list_has_any` or
 * `IN` per element (`docs/benchmarks.md`, "Filtered dashboards").
 */
function listCondition(column: string, ids: readonly number[]): string {
  if (ids.length === 1) return `list_contains(${column}, ${ids[0]})`;
  const bits = Array.from({ length: Math.max(...ids) + 1 }, () => 'false');
  for (const id of ids) bits[id] = 'true';
  return `coalesce(list_bool_or(list_transform(${column}, x -> [${bits.join(',')}][x + 1])), false)`;
}

/** Loads the site's dictionary once (a Lambda keeps it warm between loads). */
export async function loadDictionary(db: DuckDBConnection, root: string): Promise<void> {
  await db.run(
    `CREATE OR REPLACE TEMP TABLE dict AS SELECT * FROM read_parquet(${sqlLiteral(join(root, 'dict', 'dict.parquet'))})`,
  );
}

/** An answer: `panel|key|kind` → the figures, comma-separated. */
export type Answer = Map<string, string>;

async function collect(db: DuckDBConnection, sql: string, into: Answer): Promise<void> {
  for (const [panel, key, kind, figures] of (await db.runAndReadAll(sql)).getRowsJS())
    into.set(`${String(panel)}|${key === null ? '(none)' : String(key)}|${String(kind)}`, String(figures));
}

const VISIT_FIGURES = `concat_ws(',', count(DISTINCT visitor), count(*), sum(pageviews), count(*) FILTER (WHERE bounce),
  coalesce(sum(duration_s), 0), count(*) FILTER (WHERE duration_s > 0))`;
const PAY_FIGURES = `concat_ws(',', count(*), sum(net_usd), count(DISTINCT customer))`;
const goalFigures = (visitor: string) =>
  `concat_ws(',', count(DISTINCT ${visitor}), count(*), sum(len(list_filter(goals, x -> x = goal))))`;

/**
 * The overview, time series and channel, country and device panels over the
 * matching rows `table`: one GROUP BY each (measured faster than one
 * `GROUPING SETS` pass with its distinct counts: `docs/benchmarks.md`).
 */
function breakdowns(table: string, where: string, day: string, figures: string, kind: string): string {
  const label = (dim: string) => `(SELECT value FROM dict WHERE dim = '${dim}' AND dict.id = ${dim})`;
  return [
    `SELECT 'overview', '', '${kind}', ${figures} FROM ${table} WHERE ${where}`,
    `SELECT 'day', ${day}::VARCHAR, '${kind}', ${figures} FROM ${table} WHERE ${where} GROUP BY ${day}`,
    ...BREAKDOWNS.map(
      (d) => `SELECT '${d}', ${label(d)}, '${kind}', ${figures} FROM ${table} WHERE ${where} GROUP BY ${d}`,
    ),
  ].join(' UNION ALL ');
}

/**
 * One filtered dashboard load over the cut table: the matching visits of the
 * range and the period before it read once (only the columns the panels
 * use), each panel one GROUP BY over them, and the revenue from
 * the payments of the range alone (they carry their visit's dimensions).
 *
 * @param files the `visits2` and `payments2` Parquet files of the months the span touches
 */
export async function cutLoad(
  db: DuckDBConnection,
  files: { visits: string[]; payments: string[] },
  span: Span,
  conditions: readonly Condition[],
): Promise<Answer> {
  const filter = await cutFilter(db, conditions);
  const answer: Answer = new Map();
  await db.run(`
    CREATE OR REPLACE TEMP TABLE m AS
    SELECT visitor, day, pageviews, duration_s, bounce, channel, country, device, pages, goals
    FROM read_parquet(${list(files.visits)}, hive_partitioning = false)
    WHERE ${dayRange('day', span.prevFrom, span.to)} AND ${filter}`);
  const label = (panel: string, id: string) => `(SELECT value FROM dict WHERE dim = ${panel} AND dict.id = ${id})`;
  const current = `${dayRange('day', span.from, span.to)}`;
  await collect(
    db,
    `
    ${breakdowns('m', current, 'day', VISIT_FIGURES, 'visits')}
    UNION ALL SELECT 'previous', '', 'visits', ${VISIT_FIGURES} FROM m WHERE ${dayRange('day', span.prevFrom, span.prevTo)}
    UNION ALL SELECT 'page', ${label("'page'", 'page')}, 'visits', concat_ws(',', count(DISTINCT visitor), count(*))
      FROM (SELECT visitor, unnest(list_distinct(pages)) AS page FROM m WHERE ${current}) GROUP BY page
    UNION ALL SELECT 'goal', ${label("'goal'", 'goal')}, 'visits', ${goalFigures('visitor')}
      FROM (SELECT visitor, goals, unnest(list_distinct(goals)) AS goal FROM m WHERE ${current}) GROUP BY goal`,
    answer,
  );
  await db.run(`
    CREATE OR REPLACE TEMP TABLE mp AS
    SELECT pday, net_usd, customer, channel, country, device, pages, goals
    FROM read_parquet(${list(files.payments)}, hive_partitioning = false)
    WHERE ${dayRange('pday', span.prevFrom, span.to)} AND ${filter}`);
  const currentPay = dayRange('pday', span.from, span.to);
  await collect(
    db,
    `
    ${breakdowns('mp', currentPay, 'pday', PAY_FIGURES, 'pay')}
    UNION ALL SELECT 'previous', '', 'pay', ${PAY_FIGURES} FROM mp WHERE ${dayRange('pday', span.prevFrom, span.prevTo)}
    UNION ALL SELECT 'page', ${label("'page'", 'page')}, 'pay', concat_ws(',', count(*), sum(net_usd))
      FROM (SELECT net_usd, unnest(list_distinct(pages)) AS page FROM mp WHERE ${currentPay}) GROUP BY page
    UNION ALL SELECT 'goal', ${label("'goal'", 'goal')}, 'pay', concat_ws(',', count(*), sum(net_usd))
      FROM (SELECT net_usd, unnest(list_distinct(goals)) AS goal FROM mp WHERE ${currentPay}) GROUP BY goal`,
    answer,
  );
  return answer;
}

/**
 * The same answer by plain SQL over the plain table (strings, one query per
 * panel, payments joined to their visits with the lookback), as a report
 * would compute it without any of the cuts: the reference the cut load is
 * held equal to.
 */
export async function plainAnswer(
  db: DuckDBConnection,
  files: { visits: string[]; payments: string[] },
  span: Span,
  conditions: readonly Condition[],
): Promise<Answer> {
  const filter = plainFilter(conditions);
  const answer: Answer = new Map();
  await db.run(`
    CREATE OR REPLACE TEMP TABLE pm AS
    SELECT *, visitor_id AS visitor FROM read_parquet(${list(files.visits)}, hive_partitioning = false)
    WHERE ${dayRange('day', addDays(span.prevFrom, -LOOKBACK_DAYS), span.to)} AND ${filter}`);
  await db.run(`
    CREATE OR REPLACE TEMP TABLE pp AS
    SELECT p.ts::DATE AS pday, p.net_usd, p.customer, v.* EXCLUDE (visit_id)
    FROM read_parquet(${list(files.payments)}, hive_partitioning = false) p JOIN pm v USING (visit_id)`);
  const spans = [
    ['overview', span.from, span.to],
    ['previous', span.prevFrom, span.prevTo],
  ] as const;
  for (const [panel, from, to] of spans) {
    await collect(
      db,
      `SELECT '${panel}', '', 'visits', ${VISIT_FIGURES} FROM pm WHERE ${dayRange('day', from, to)}`,
      answer,
    );
    await collect(
      db,
      `SELECT '${panel}', '', 'pay', ${PAY_FIGURES} FROM pp WHERE ${dayRange('pday', from, to)}`,
      answer,
    );
  }
  const current = dayRange('day', span.from, span.to);
  const currentPay = dayRange('pday', span.from, span.to);
  for (const column of ['day', 'channel', 'country', 'device']) {
    await collect(
      db,
      `SELECT '${column}', ${column}::VARCHAR, 'visits', ${VISIT_FIGURES} FROM pm WHERE ${current} GROUP BY ALL`,
      answer,
    );
    const key = column === 'day' ? 'pday' : column;
    await collect(
      db,
      `SELECT '${column}', ${key}::VARCHAR, 'pay', ${PAY_FIGURES} FROM pp WHERE ${currentPay} GROUP BY ALL`,
      answer,
    );
  }
  await collect(
    db,
    `SELECT 'page', page, 'visits', concat_ws(',', count(DISTINCT visitor), count(*))
     FROM (SELECT visitor, unnest(list_distinct(pages)) AS page FROM pm WHERE ${current}) GROUP BY page`,
    answer,
  );
  await collect(
    db,
    `SELECT 'page', page, 'pay', concat_ws(',', count(*), sum(net_usd))
     FROM (SELECT net_usd, unnest(list_distinct(pages)) AS page FROM pp WHERE ${currentPay}) GROUP BY page`,
    answer,
  );
  await collect(
    db,
    `SELECT 'goal', goal, 'visits', ${goalFigures('visitor')}
     FROM (SELECT visitor, goals, unnest(list_distinct(goals)) AS goal FROM pm WHERE ${current}) GROUP BY goal`,
    answer,
  );
  await collect(
    db,
    `SELECT 'goal', goal, 'pay', concat_ws(',', count(*), sum(net_usd))
     FROM (SELECT net_usd, unnest(list_distinct(goals)) AS goal FROM pp WHERE ${currentPay}) GROUP BY goal`,
    answer,
  );
  return answer;
}

/** The keys on which two answers differ (at most `limit`), empty when they are equal. */
export function differences(a: Answer, b: Answer, limit = 5): string[] {
  const out: string[] = [];
  for (const key of new Set([...a.keys(), ...b.keys()]))
    if (a.get(key) !== b.get(key) && out.length < limit) out.push(`${key}: ${a.get(key)} ≠ ${b.get(key)}`);
  return out;
}
