import { existsSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { LocalFilteredVisits } from '../local/filtered-visits.js';
import { FilteredRelations } from '../local/filtered-relations.js';
import { dictRelation } from '../local/filter-resolutions.js';
import { distinctIds } from '../local/filter-sql.js';
import { monthFilePath, paymentsFilePath } from '../local/visit-table.js';
import { sqlLiteral } from '../local/sql.js';
import { eachDay, resolveRange, type DateRange } from '../lambdas/domain/range.js';
import { filtersParam, type Filter } from '../lambdas/domain/reports/filters.js';
import { addVisitors, countVisitors, emptySketch } from '../lambdas/domain/visitor-sketch.js';
import { siteConfigSchema } from '../lambdas/domain/site.js';
import {
  filteredBreakdownRows,
  filteredGoalRows,
  filteredPoints,
  filteredTotals,
} from '../lambdas/services/filtered-reports.js';
import { benchSiteRoot } from './filtered-site.js';

/**
 * Scratch measurement (`docs/benchmarks.md`, "Filtered dashboards at full scale", "One pass"): one filtered
 * dashboard load over the cached full-scale bench site, answered by the product's engine (`baseline`) and by
 * prototypes that evaluate the filter once per load (`onepass`), count distinct visitors by HyperLogLog
 * registers in SQL (`hll`), and answer the per-visit panels by one GROUPING SETS scan (`sets`).
 * `ONEPASS_ROOT` the site's directory; `ONEPASS_RUNS` (3), `ONEPASS_VARIANTS`, `ONEPASS_FILTERS`, `ONEPASS_RANGES`.
 */

/** The full-scale bench site `npm run bench -- --only filtered` writes (`bench/filtered.ts`'s options), unless `ONEPASS_ROOT` names another. */
const ROOT =
  process.env.ONEPASS_ROOT ??
  benchSiteRoot({ visitsPerMonth: 1_000_000, paymentsPerMonth: 100_000, end: '2026-11-26', days: 365, seed: 33 });
const SITE = 'bench.example';
const RUNS = Number(process.env.ONEPASS_RUNS ?? 3);
const END = '2026-11-26';
const P = 14;
/** The visitor's 64-bit key: DuckDB's `hash` (default), or the first 64 bits of SHA-1 as the unfiltered sketch takes them. */
const KEYS: Record<string, string> = {
  hash: 'hash(visitor_id)',
  sha1: `('0x' || left(sha1(visitor_id), 16))::UBIGINT`,
  md5: 'md5_number_upper(visitor_id)',
  stored: 'visitor_key',
};
/** `ONEPASS_PAGESET=1`: the table's `pages` already holds each visit's distinct pages (`scratch-onepass-derive.ts`). */
const PAGE_IDS = process.env.ONEPASS_PAGESET === '1' ? 'pages' : distinctIds('pages');
const KEY = KEYS[process.env.ONEPASS_KEY ?? 'hash'] ?? 'hash(visitor_id)';
const M = 1 << P;
const FILTERS = [
  { name: 'B', json: [['contains', 'event:page', ['/blog']]] },
  { name: 'always', json: [['is_not', 'visit:channel', ['No such channel']]] },
];
const pick = (env: string | undefined, all: string[]) => (env ? env.split(',') : all);
const VARIANTS = pick(process.env.ONEPASS_VARIANTS, ['baseline', 'onepass', 'hll', 'sets']);
const CHOSEN_FILTERS = pick(process.env.ONEPASS_FILTERS, ['B', 'always']);
const RANGE_NAMES = pick(process.env.ONEPASS_RANGES, ['30d', '12m']) as Array<'30d' | '12m'>;

const files = (path: (m: string) => string, from: string, to: string) =>
  [...new Set(eachDay(from, to).map((d) => d.slice(0, 7)))].map(path).filter((f) => existsSync(f));
const read = (fs: string[]) => `read_parquet([${fs.map(sqlLiteral).join(', ')}], union_by_name = true)`;
const dayLit = (d: string) => `${sqlLiteral(d)}::DATE`;

/** The HyperLogLog estimate of `visitor-sketch.ts` (`countVisitors`) from a group's non-zero registers. */
function estimate(nonzero: number, sum: number): number {
  const zeros = M - nonzero;
  const total = sum + zeros;
  const alpha = 0.7213 / (1 + 1.079 / M);
  const raw = (alpha * M * M) / total;
  if (raw <= 2.5 * M && zeros > 0) return Math.round(M * Math.log(M / zeros));
  return Math.round(raw);
}

/** Register and rank of a 64-bit key: the top `P` bits the register, the rank the first 1 in the other bits. */
const REG = `(visitor_key >> ${64 - P})::INTEGER`;
const LOW = `(visitor_key & ((1::UBIGINT << ${64 - P}) - 1))`;
const RANK = `CASE WHEN ${LOW} = 0 THEN ${64 - P + 1} ELSE ${64 - P} - floor(log2(${LOW}::DOUBLE))::INTEGER END`;

/** `SELECT g, count(*) nonzero, sum(2^-rank)` over groups `g` of a relation: HLL registers per group. */
const hllSql = (from: string, group: string) =>
  `SELECT g, count(*) AS nonzero, sum(pow(2, -r)) AS s FROM (SELECT ${group} AS g, ${REG} AS reg, max(${RANK}) AS r ` +
  `FROM ${from} GROUP BY 1, 2) GROUP BY 1`;

interface Ctx {
  db: DuckDBConnection;
  filter: Filter;
  range: DateRange;
  previous: DateRange;
  interval: 'day' | 'month';
}

async function rows(db: DuckDBConnection, sql: string) {
  return (await db.runAndReadAll(sql)).getRowObjectsJS();
}

/** The temp tables `m` (matching visits of previous.from..range.to, needed columns) and `mp` (matching credited payments). */
async function materialize(c: Ctx, where: string, explain = false) {
  const from = c.previous.from;
  const to = c.range.to;
  const visits = files((m) => monthFilePath(ROOT, SITE, m), from, to);
  const payments = files((m) => paymentsFilePath(ROOT, SITE, m), from, to);
  const dict = `WITH dict AS (${dictRelation(ROOT, SITE)})`;
  const ex = explain ? 'EXPLAIN ANALYZE ' : '';
  const plan = await c.db.runAndReadAll(
    `${ex}CREATE OR REPLACE TEMP TABLE m AS ${dict} SELECT day, ${KEY} AS visitor_key, pageviews, bounce, timed, ` +
      `duration_ms, channel, device, country, pages, goals FROM ${read(visits)} ` +
      `WHERE day BETWEEN ${dayLit(from)} AND ${dayLit(to)} AND ${where}`,
  );
  if (explain) process.stdout.write(`${String(plan.getRowObjectsJS()[0]?.explain_value)}\n`);
  await c.db.run(
    `CREATE OR REPLACE TEMP TABLE mp AS ${dict} SELECT day AS paid_day, cents, customer, ` +
      `visit_day BETWEEN ${dayLit(c.range.from)} AND ${dayLit(c.range.to)} AS matched, channel, device, country, pages, goals ` +
      `FROM ${read(payments)} WHERE day BETWEEN ${dayLit(from)} AND ${dayLit(to)} AND NOT failed AND coalesce(credited, false) AND ${where}`,
  );
}

const inRange = (r: DateRange, col = 'day') => `${col} BETWEEN ${dayLit(r.from)} AND ${dayLit(r.to)}`;

/** Every figure of the load over `m`/`mp`, one query per panel as the engine asks them; visitors exact or by registers. */
async function panels(c: Ctx, hll: boolean) {
  const dict = `WITH dict AS (${dictRelation(ROOT, SITE)})`;
  const out: unknown[] = [];
  const visitors = async (from: string, group: string) =>
    hll
      ? (await rows(c.db, hllSql(from, group))).map((r) => [r.g, estimate(Number(r.nonzero), Number(r.s))])
      : rows(c.db, `SELECT ${group} AS g, count(DISTINCT visitor_key) AS n FROM ${from} GROUP BY 1`);
  const period = (d: string) => (c.interval === 'day' ? `${d}` : `strftime(${d}, '%Y-%m')`);
  for (const r of [c.range, c.previous]) {
    out.push(
      await rows(
        c.db,
        `SELECT count(*), sum(pageviews), count(*) FILTER (WHERE bounce), count(*) FILTER (WHERE timed), sum(duration_ms) FROM m WHERE ${inRange(r)}`,
      ),
    );
    out.push(await visitors(`m WHERE ${inRange(r)}`, '1'));
    out.push(
      await rows(
        c.db,
        `SELECT count(*), sum(cents), count(DISTINCT customer), count(*) FILTER (WHERE matched), count(DISTINCT customer) FILTER (WHERE matched) FROM mp WHERE ${inRange(r, 'paid_day')}`,
      ),
    );
  }
  const cur = `m WHERE ${inRange(c.range)}`;
  const curP = `mp WHERE ${inRange(c.range, 'paid_day')}`;
  out.push(await rows(c.db, `SELECT ${period('day')}, count(*), sum(pageviews) FROM ${cur} GROUP BY 1`));
  out.push(await visitors(cur, period('day')));
  out.push(await rows(c.db, `SELECT ${period('paid_day')}, count(*), sum(cents) FROM ${curP} GROUP BY 1`));
  for (const col of ['channel', 'country', 'device', `unnest(${PAGE_IDS})`]) {
    out.push(await rows(c.db, `SELECT id, count(*) FROM (SELECT ${col} AS id FROM ${cur}) GROUP BY 1`));
    out.push(
      await rows(
        c.db,
        `SELECT id, count(*), sum(cents), count(DISTINCT customer) FROM (SELECT ${col} AS id, * FROM ${curP}) GROUP BY 1`,
      ),
    );
  }
  out.push(
    await rows(
      c.db,
      `${dict} SELECT id, count(*) AS completions FROM (SELECT unnest(goals) AS id FROM ${cur} AND len(goals) > 0) GROUP BY 1`,
    ),
  );
  out.push(
    await rows(
      c.db,
      `SELECT id, count(*) FROM (SELECT unnest(${distinctIds('goals')}) AS id FROM ${cur} AND len(goals) > 0) GROUP BY 1`,
    ),
  );
  out.push(
    await visitors(`(SELECT visitor_key, unnest(${distinctIds('goals')}) AS id FROM ${cur} AND len(goals) > 0)`, 'id'),
  );
  out.push(
    await rows(
      c.db,
      `SELECT id, count(*), sum(cents), count(DISTINCT customer) FROM (SELECT unnest(${distinctIds('goals')}) AS id, * FROM ${curP} AND len(goals) > 0) GROUP BY 1`,
    ),
  );
  return out;
}

/** The per-visit panels of the range by one GROUPING SETS scan (visits, sums, and HLL registers per group). */
async function setsPanels(c: Ctx) {
  const out: unknown[] = [];
  const period = c.interval === 'day' ? 'day::VARCHAR' : `strftime(day, '%Y-%m')`;
  // One scan of m: counters per (range/previous), per period, per channel/country/device; registers per range and period.
  const scan =
    `SELECT cur, per, channel, country, device, GROUPING(per, channel, country, device) AS gid, count(*) AS visits, ` +
    `sum(pageviews) AS pageviews, count(*) FILTER (WHERE bounce) AS bounces, count(*) FILTER (WHERE timed) AS timed, ` +
    `sum(duration_ms) AS duration FROM (SELECT *, ${inRange(c.range)} AS cur, ${period} AS per FROM m) ` +
    `GROUP BY GROUPING SETS ((cur), (cur, per), (cur, channel), (cur, country), (cur, device))`;
  out.push(await rows(c.db, scan));
  const regs =
    `SELECT cur, per, count(*) AS nonzero, sum(pow(2, -r)) AS s FROM (SELECT cur, per, reg, max(r) AS r FROM ` +
    `(SELECT ${inRange(c.range)} AS cur, ${period} AS per, ${REG} AS reg, ${RANK} AS r FROM m) ` +
    `GROUP BY GROUPING SETS ((cur, reg), (cur, per, reg))) GROUP BY cur, per`;
  out.push((await rows(c.db, regs)).map((r) => [r.cur, r.per, estimate(Number(r.nonzero), Number(r.s))]));
  const cur = `m WHERE ${inRange(c.range)}`;
  out.push(await rows(c.db, `SELECT id, count(*) FROM (SELECT unnest(${PAGE_IDS}) AS id FROM ${cur}) GROUP BY 1`));
  out.push(
    await rows(
      c.db,
      `SELECT id, count(*) AS completions FROM (SELECT unnest(goals) AS id FROM ${cur} AND len(goals) > 0) GROUP BY 1`,
    ),
  );
  out.push(
    (
      await rows(
        c.db,
        hllSql(`(SELECT visitor_key, unnest(${distinctIds('goals')}) AS id FROM ${cur} AND len(goals) > 0)`, 'id'),
      )
    ).length,
  );
  out.push(
    await rows(
      c.db,
      `SELECT id, count(*) FROM (SELECT unnest(${distinctIds('goals')}) AS id FROM ${cur} AND len(goals) > 0) GROUP BY 1`,
    ),
  );
  // The payments: one scan by GROUPING SETS too (range and previous; per period; per dimension).
  out.push(
    await rows(
      c.db,
      `SELECT cur, per, channel, country, device, count(*), sum(cents), count(DISTINCT customer) FROM ` +
        `(SELECT *, ${inRange(c.range, 'paid_day')} AS cur, ${c.interval === 'day' ? 'paid_day::VARCHAR' : `strftime(paid_day, '%Y-%m')`} AS per FROM mp) ` +
        `GROUP BY GROUPING SETS ((cur), (cur, per), (cur, channel), (cur, country), (cur, device))`,
    ),
  );
  out.push(
    await rows(
      c.db,
      `SELECT id, count(*), sum(cents) FROM (SELECT unnest(${distinctIds('pages')}) AS id, cents FROM mp WHERE ${inRange(c.range, 'paid_day')}) GROUP BY 1`,
    ),
  );
  out.push(
    await rows(
      c.db,
      `SELECT id, count(*), sum(cents) FROM (SELECT unnest(${distinctIds('goals')}) AS id, cents FROM mp WHERE ${inRange(c.range, 'paid_day')} AND len(goals) > 0) GROUP BY 1`,
    ),
  );
  return out;
}

async function measured(run: () => Promise<unknown>, runs = RUNS) {
  await run();
  const xs: Array<{ wall: number; cpu: number; rss: number }> = [];
  for (let i = 0; i < runs; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run();
    const cpu = process.cpuUsage(cpu0);
    xs.push({ wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000, rss: process.memoryUsage().rss });
  }
  const med = (k: 'wall' | 'cpu' | 'rss') =>
    [...xs.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return { wall: med('wall'), cpu: med('cpu'), rss: med('rss'), all: xs.map((x) => Math.round(x.wall)) };
}

async function main() {
  const now = Date.parse(`${END}T12:00:00Z`);
  const config = siteConfigSchema.parse({
    domain: SITE,
    timezone: 'UTC',
    account: 'bench',
    created: '2025-11-01T00:00:00Z',
  });
  const engine = new LocalFilteredVisits(ROOT);
  const relations = new FilteredRelations(ROOT, null);
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  const log = (s: string) => process.stdout.write(`${s}\n`);
  const load1 = async () => (await import('node:os')).loadavg()[0]?.toFixed(1);
  for (const f of FILTERS.filter((x) => CHOSEN_FILTERS.includes(x.name))) {
    const filter = filtersParam.parse(JSON.stringify(f.json));
    if (filter === null) throw new Error('no filter');
    for (const rn of RANGE_NAMES) {
      const { range, previous } = resolveRange({ range: rn }, { now, timezone: 'UTC', firstDay: '2025-11-01' });
      const interval = rn === '30d' ? 'day' : 'month';
      const c: Ctx = { db, filter, range, previous, interval };
      const { where } = await relations.relations(SITE, filter, range);
      for (const v of VARIANTS) {
        let run: () => Promise<unknown>;
        if (v === 'baseline')
          run = () =>
            Promise.all([
              filteredTotals(engine, config, filter, range, 'exact'),
              filteredTotals(engine, config, filter, previous, 'exact'),
              filteredPoints(engine, config, filter, range, interval, []),
              ...(['channel', 'page', 'country', 'device'] as const).map((d) =>
                filteredBreakdownRows(engine, config, filter, range, d, 10),
              ),
              filteredGoalRows(engine, config, filter, range, null, 10, { visitors: 'exact', goals: [] }),
            ]);
        else if (v === 'sketch') {
          // The product's sketch over the range's distinct visitor ids, against the SQL registers of the SHA-1 key.
          const ids = await rows(
            db,
            `SELECT DISTINCT visitor_id FROM ${read(files((m) => monthFilePath(ROOT, SITE, m), range.from, range.to))} WHERE ${inRange(range)}`,
          );
          const sketch = addVisitors(
            emptySketch(),
            ids.map((r) => String(r.visitor_id)),
          );
          await materialize(c, where);
          const [r] = await rows(db, hllSql(`m WHERE ${inRange(range)}`, '1'));
          log(
            `${f.name}\t${rn}\tsketch\tproduct ${countVisitors(sketch)}\tsql ${estimate(Number(r?.nonzero), Number(r?.s))}\texact ${ids.length}`,
          );
          continue;
        } else if (v === 'explain') {
          await materialize(c, where, true);
          continue;
        } else if (v === 'accuracy') {
          await materialize(c, where);
          for (const g of ['1', `strftime(day, '%Y-%m')`]) {
            const exact = await rows(
              db,
              `SELECT ${g} AS g, count(DISTINCT visitor_key) AS n FROM m WHERE ${inRange(range)} GROUP BY 1 ORDER BY 1`,
            );
            const est = new Map(
              (await rows(db, hllSql(`m WHERE ${inRange(range)}`, g))).map((r) => [
                String(r.g),
                estimate(Number(r.nonzero), Number(r.s)),
              ]),
            );
            for (const e of exact) {
              const n = Number(e.n);
              const h = est.get(String(e.g)) ?? 0;
              log(
                `${f.name}\t${rn}\taccuracy\t${String(e.g)}\texact ${n}\thll ${h}\terror ${((100 * (h - n)) / n).toFixed(2)}%`,
              );
            }
          }
          continue;
        } else if (v === 'materialize') run = () => materialize(c, where);
        else if (v === 'onepass') run = async () => (await materialize(c, where), panels(c, false));
        else if (v === 'hll') run = async () => (await materialize(c, where), panels(c, true));
        else if (v === 'sets') run = async () => (await materialize(c, where), setsPanels(c));
        else if (v === 'panels-exact') run = () => panels(c, false);
        else if (v === 'panels-hll') run = () => panels(c, true);
        else if (v === 'panels-sets') run = () => setsPanels(c);
        else throw new Error(`unknown variant ${v}`);
        const runs = v === 'baseline' && rn === '12m' ? Math.min(RUNS, 1) : RUNS;
        const l0 = await load1();
        const m = await measured(run, runs);
        const mem = await rows(db, `SELECT sum(memory_usage_bytes) AS b FROM duckdb_memory()`);
        const size = await rows(
          db,
          `SELECT (SELECT count(*) FROM m)::INTEGER AS visits, (SELECT count(*) FROM mp)::INTEGER AS payments`,
        ).catch(() => [{}]);
        log(
          `${f.name}\t${rn}\t${v}\twall ${Math.round(m.wall)} ms\tcpu ${Math.round(m.cpu)} ms\trss ${(m.rss / 2 ** 20).toFixed(0)} MiB\t` +
            `duckdb ${(Number(mem[0]?.b ?? 0) / 2 ** 20).toFixed(0)} MiB\trows ${JSON.stringify(size[0])}\truns ${m.all.join('/')}\tload ${l0}..${await load1()}`,
        );
      }
    }
  }
  await engine.close();
}

await main();
