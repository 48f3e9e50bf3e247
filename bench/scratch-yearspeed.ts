import { loadavg } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { LocalFilteredVisits } from '../local/filtered-visits.js';
import { resolveRange } from '../lambdas/domain/range.js';
import { filtersParam } from '../lambdas/domain/reports/filters.js';
import { siteConfigSchema } from '../lambdas/domain/site.js';
import { FILTERS, load } from './filtered.js';
import { BENCH_SITE_DOMAIN, BENCH_SITE_TIMEZONE, benchSiteRoot, filteredBenchOptions } from './filtered-site.js';

/**
 * Scratch profile (`docs/benchmarks.md`, "An unselective year"): one dashboard load of the filtered bench
 * (`bench/filtered.ts`'s `load`) on the cached bench site, its statements recorded, then each statement
 * replayed alone in the order the load ran it (the shared and load tables made again before the queries that
 * read them), with its wall and CPU time (the process's, DuckDB's threads included) and its rows:
 *
 *   YS_FILTER=B YS_RANGE=12m node bin/run-ts.js bench/scratch-yearspeed.ts
 *
 * `YS_FILTER` the start of a bench filter's name (A, B, always), `YS_RANGE` 30d or 12m,
 * `FILTERED_VISITS_PER_MONTH` the site's scale (1,000,000) or `YS_ROOT` its directory. The statements are
 * written to `/tmp/footfall-yearspeed/sql-<filter>-<range>.txt` for EXPLAIN ANALYZE by hand.
 */
const VISITS = Number(process.env.FILTERED_VISITS_PER_MONTH ?? 1_000_000);
const ROOT = process.env.YS_ROOT ?? benchSiteRoot(filteredBenchOptions(VISITS));
const NOW = Date.parse('2026-11-26T12:00:00Z');
const FILTER = process.env.YS_FILTER ?? 'B';
const RANGE = (process.env.YS_RANGE ?? '12m') as '30d' | '12m';
const OUT = '/tmp/footfall-yearspeed';

const chosen = FILTERS.find((x) => x.name.startsWith(FILTER));
if (!chosen) throw new Error(`no bench filter starts with ${FILTER}`);
const filter = filtersParam.parse(JSON.stringify(chosen.json));
if (filter === null) throw new Error(`filter ${chosen.name} parses to none`);
const config = siteConfigSchema.parse({
  domain: BENCH_SITE_DOMAIN,
  timezone: BENCH_SITE_TIMEZONE,
  account: 'bench',
  created: '2025-11-27T00:00:00Z',
});
const { range, previous } = resolveRange(
  { range: RANGE },
  { now: NOW, timezone: BENCH_SITE_TIMEZONE, firstDay: '2025-11-27' },
);
const engine = new LocalFilteredVisits(ROOT);
const db = await (engine as unknown as { tables: { connect(): Promise<DuckDBConnection> } }).tables.connect();
const statements: string[] = [];
// Every statement goes through `run` (`runAndReadAll` too).
const run = db.run.bind(db);
db.run = (sql, ...rest) => {
  statements.push(sql);
  return run(sql, ...rest);
};
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const t0 = performance.now();
const c0 = cpu();
await load(engine, config, filter, range, previous, RANGE === '30d' ? 'day' : 'month');
process.stdout.write(
  `${chosen.name}, ${RANGE}: load ${Math.round(performance.now() - t0)} ms wall, ${Math.round(cpu() - c0)} ms CPU, ` +
    `load average ${loadavg()[0]?.toFixed(1)}\n`,
);
db.run = run;
mkdirSync(OUT, { recursive: true });
writeFileSync(`${OUT}/sql-${FILTER}-${RANGE}.txt`, statements.join('\n\n----\n\n'));
// Reading footers and dropping tables is not the load's work.
const skipped = /^(DROP|SELECT count\(\*\) FROM parquet_(schema|kv_metadata))/;
for (const sql of statements.filter((s) => !skipped.test(s))) {
  const t = performance.now();
  const c = cpu();
  const reader = await db.runAndReadAll(sql);
  const label = sql
    .replace(/read_parquet\(\[[^\]]*\][^)]*\)/g, 'FILES')
    .replace(/\s+/g, ' ')
    .slice(0, 160);
  process.stdout.write(
    `${String(Math.round(performance.now() - t)).padStart(6)} ms wall ${String(Math.round(cpu() - c)).padStart(6)} ms CPU ` +
      `${String(reader.currentRowCount).padStart(4)} rows  ${label}\n`,
  );
}
await engine.close();
