import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlLiteral } from '../local/sql.js';

/**
 * The cut visit table of the filtered-reports prototype (docs/data-model.md,
 * "Filtered reports"), derived from the plain one that `bench/filtered.ts`
 * generates, so both hold the same visits:
 *
 * - every dimension is a small integer: its id in the site's dictionary
 *   (`dict/`: dimension, value, id; the most frequent value gets id 1), so a
 *   condition is resolved against the dictionary once and the scan compares
 *   integers; pages and goals are lists of ids;
 * - visit and visitor ids are 64-bit hashes of the strings (DuckDB's `hash`);
 * - each month's rows are sorted by channel, device, day and start, so the
 *   row groups' min/max of channel and device skip most rows for the
 *   common filters, and of day for a range;
 * - the payments table carries its credited visit's dimensions, pages and
 *   goals, so a range's revenue is a filter over its payments alone: no
 *   join with the visits of the lookback before the range.
 */

/** Scalar dimensions of a visit row and their id type (channel and device have a handful of values). */
export const DIMENSIONS: ReadonlyArray<readonly [column: string, type: string]> = [
  ['channel', 'UTINYINT'],
  ['device', 'UTINYINT'],
  ['referrer', 'UINTEGER'],
  ['source', 'UINTEGER'],
  ['utm_source', 'UINTEGER'],
  ['utm_medium', 'UINTEGER'],
  ['utm_campaign', 'UINTEGER'],
  ['utm_content', 'UINTEGER'],
  ['utm_term', 'UINTEGER'],
  ['country', 'USMALLINT'],
  ['browser', 'USMALLINT'],
  ['os', 'USMALLINT'],
  ['language', 'USMALLINT'],
];
/** Dimensions whose values come from the page dictionary. */
const PAGE_COLUMNS = ['landing_page', 'exit_page'];

/**
 * Writes `dict/`, `visits2/mo=…/` and `payments2/mo=…/` under `root` from
 * the plain `visits/` and `payments/` there.
 *
 * @param rowGroup rows per Parquet row group of `visits2` (small enough that a month's channel × device cells span several)
 */
export async function writeCutLayout(db: DuckDBConnection, root: string, rowGroup: number): Promise<void> {
  const plain = (table: string) => sqlLiteral(join(root, table, '*', '*.parquet'));
  await db.run(
    `CREATE OR REPLACE TEMP TABLE plain AS SELECT * FROM read_parquet(${plain('visits')}, hive_partitioning = false)`,
  );
  const counts = [
    ...DIMENSIONS.map(([c]) => `SELECT '${c}' AS dim, ${c} AS value, count(*) AS n FROM plain GROUP BY ALL`),
    `SELECT 'page', page, count(*) FROM (SELECT unnest(pages) AS page FROM plain) GROUP BY ALL`,
    `SELECT 'goal', goal, count(*) FROM (SELECT unnest(goals) AS goal FROM plain) GROUP BY ALL`,
  ].join(' UNION ALL ');
  await db.run(`
    CREATE OR REPLACE TEMP TABLE dict AS
    SELECT dim, value, (row_number() OVER (PARTITION BY dim ORDER BY sum(n) DESC, value))::UINTEGER AS id
    FROM (${counts}) WHERE value IS NOT NULL GROUP BY dim, value`);
  const ids = (list: string, dim: string) => `
    CREATE OR REPLACE TEMP TABLE ${list}_ids AS
    SELECT visit_id, list(d.id ORDER BY k) AS ${list}
    FROM (SELECT visit_id, unnest(${list}) AS value, generate_subscripts(${list}, 1) AS k FROM plain) u
    JOIN dict d ON d.dim = '${dim}' AND d.value = u.value GROUP BY visit_id`;
  await db.run(ids('pages', 'page'));
  await db.run(ids('goals', 'goal'));
  const joins = [
    ...DIMENSIONS.map(([c]) => `LEFT JOIN dict d_${c} ON d_${c}.dim = '${c}' AND d_${c}.value = p.${c}`),
    ...PAGE_COLUMNS.map((c) => `LEFT JOIN dict d_${c} ON d_${c}.dim = 'page' AND d_${c}.value = p.${c}`),
  ].join('\n');
  await db.run(`
    CREATE OR REPLACE TEMP TABLE visits2 AS
    SELECT hash(p.visit_id) AS visit, hash(p.visitor_id) AS visitor, p.day, p.start_ts,
      p.pageviews::USMALLINT AS pageviews, p.duration_s::UINTEGER AS duration_s, p.bounce,
      ${DIMENSIONS.map(([c, type]) => `d_${c}.id::${type} AS ${c}`).join(', ')},
      ${PAGE_COLUMNS.map((c) => `d_${c}.id AS ${c}`).join(', ')},
      pg.pages, coalesce(g.goals, []::UINTEGER[]) AS goals
    FROM plain p ${joins}
    JOIN pages_ids pg USING (visit_id) LEFT JOIN goals_ids g USING (visit_id)`);
  await db.run(`
    CREATE OR REPLACE TEMP TABLE payments2 AS
    SELECT p.ts, p.ts::DATE AS pday, p.net_usd, hash(p.customer) AS customer, v.visit, v.day AS visit_day,
      ${[...DIMENSIONS.map(([c]) => c), ...PAGE_COLUMNS, 'pages', 'goals'].map((c) => `v.${c}`).join(', ')}
    FROM read_parquet(${plain('payments')}, hive_partitioning = false) p
    LEFT JOIN visits2 v ON v.visit = hash(p.visit_id)`);
  for (const table of ['dict', 'visits2', 'payments2']) mkdirSync(join(root, table), { recursive: true });
  await db.run(`COPY dict TO ${sqlLiteral(join(root, 'dict', 'dict.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
  // One COPY per month, so that each file keeps its sort (a partitioned COPY does not promise order within a file).
  const months = (await db.runAndReadAll(`SELECT DISTINCT strftime(day, '%Y-%m') FROM plain ORDER BY 1`))
    .getRowsJS()
    .map((r) => String(r[0]));
  for (const mo of months) {
    const dir = (table: string) => join(root, table, `mo=${mo}`);
    mkdirSync(dir('visits2'), { recursive: true });
    mkdirSync(dir('payments2'), { recursive: true });
    await db.run(
      `COPY (SELECT * FROM visits2 WHERE strftime(day, '%Y-%m') = '${mo}' ORDER BY channel, device, day, start_ts)
       TO ${sqlLiteral(join(dir('visits2'), 'data_0.parquet'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${rowGroup})`,
    );
    await db.run(
      `COPY (SELECT * FROM payments2 WHERE strftime(pday, '%Y-%m') = '${mo}' ORDER BY channel, device, ts)
       TO ${sqlLiteral(join(dir('payments2'), 'data_0.parquet'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${rowGroup})`,
    );
  }
  for (const table of ['plain', 'pages_ids', 'goals_ids', 'visits2', 'payments2']) await db.run(`DROP TABLE ${table}`);
}
