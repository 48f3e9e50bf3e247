import { DuckDBInstance } from '@duckdb/node-api';
import { benchSiteRoot, filteredBenchOptions, BENCH_SITE_DOMAIN } from './filtered-site.js';
import { monthFilePath } from '../local/visit-table.js';
import { visitorGroups } from '../local/visitor-key.js';
import { sqlLiteral } from '../local/sql.js';
import { existsSync } from 'node:fs';

/**
 * Scratch measurement (`docs/benchmarks.md`, "Distinct visitors by the unfiltered sketch's registers"): one
 * year of the cached filtered bench site (`FILTERED_VISITS_PER_MONTH`, default a tenth), every visit, the
 * distinct-visitor queries alone: exact over `hash(visitor_id)` (before), exact over the stored key, and the
 * registers (`visitorGroups`), for the totals and the series by day and month; median of 4 rounds after one.
 *
 *   FILTERED_VISITS_PER_MONTH=100000 node bin/run-ts.js bench/scratch-hll-totals.ts
 */

const root = benchSiteRoot(filteredBenchOptions(Number(process.env.FILTERED_VISITS_PER_MONTH ?? 100000)));
const months = [...Array(13).keys()].map((i) => new Date(Date.UTC(2025, 10 + i, 1)).toISOString().slice(0, 7));
const files = months.map((m) => monthFilePath(root, BENCH_SITE_DOMAIN, m)).filter(existsSync);
const db = await (await DuckDBInstance.create(':memory:')).connect();
const v = `(SELECT * FROM read_parquet([${files.map(sqlLiteral).join(', ')}]) WHERE day BETWEEN '2025-11-27'::DATE AND '2026-11-26'::DATE)`;
const sums = ['count(*) AS sessions', 'sum(pageviews) AS pageviews', 'count(*) FILTER (WHERE bounce) AS bounces'];
const variants: Record<string, string> = {
  'exact, hash(visitor_id) (before)': `SELECT count(DISTINCT hash(visitor_id)), count(*), sum(pageviews), count(*) FILTER (WHERE bounce) FROM ${v}`,
  'exact, stored key': `SELECT count(DISTINCT visitor_key), count(*), sum(pageviews), count(*) FILTER (WHERE bounce) FROM ${v}`,
  'registers, stored key': visitorGroups(`FROM ${v}`, [], 'false', sums),
  'registers + distinct filter false': visitorGroups(`FROM ${v}`, [], '1 = 0', sums),
  'series by day, exact stored key': `SELECT day, count(DISTINCT visitor_key), count(*), sum(pageviews) FROM ${v} GROUP BY day`,
  'series by day, registers': visitorGroups(`SELECT *, day::VARCHAR AS period FROM ${v}`, ['period'], 'false', [
    'count(*) AS visits',
    'sum(pageviews) AS pageviews',
  ]),
  'series by day, registers by DATE': visitorGroups(`SELECT *, day AS period FROM ${v}`, ['period'], 'false', [
    'count(*) AS visits',
    'sum(pageviews) AS pageviews',
  ]),
  'series by month, exact (before)': `SELECT date_trunc('month', day), count(DISTINCT hash(visitor_id)), count(*), sum(pageviews) FROM ${v} GROUP BY 1`,
  'series by month, registers by DATE': visitorGroups(
    `SELECT *, date_trunc('month', day) AS period FROM ${v}`,
    ['period'],
    'false',
    ['count(*) AS visits', 'sum(pageviews) AS pageviews'],
  ),
  'series by day, exact (before)': `SELECT day::VARCHAR, count(DISTINCT hash(visitor_id)), count(*), sum(pageviews) FROM ${v} GROUP BY 1`,
};
const results = new Map<string, Array<[number, number]>>();
for (let round = 0; round < 5; round++) {
  for (const [name, sql] of Object.entries(variants)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await db.runAndReadAll(sql);
    const c = process.cpuUsage(c0);
    const t = performance.now() - t0;
    if (round > 0) results.set(name, [...(results.get(name) ?? []), [t, (c.user + c.system) / 1000]]);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, rs] of results)
  console.log(
    `${name}: ${Math.round(med(rs.map((r) => r[0])))} ms wall, ${Math.round(med(rs.map((r) => r[1])))} ms CPU`,
  );
