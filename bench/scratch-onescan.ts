import { loadavg } from 'node:os';
import type { DuckDBConnection } from '@duckdb/node-api';
import { FilteredRelations, type SharingOptions } from '../local/filtered-relations.js';
import { LocalFilteredVisits } from '../local/filtered-visits.js';
import { resolveRange } from '../lambdas/domain/range.js';
import { filtersParam } from '../lambdas/domain/reports/filters.js';
import { siteConfigSchema } from '../lambdas/domain/site.js';
import { FILTERS as BENCH_FILTERS, load } from './filtered.js';
import { BENCH_SITE_DOMAIN, BENCH_SITE_TIMEZONE, benchSiteRoot } from './filtered-site.js';

/**
 * Scratch measurement (`docs/benchmarks.md`, "One evaluation per load") on the bench site. `ONESCAN_MODE=memory`:
 * the memory of a load's shared tables (`SharedScans`) per filter and period: rows, DuckDB's in-memory table
 * bytes (`duckdb_memory()`), what spilled to its temporary directory, bytes per row, the time to make them, and
 * the process's resident memory. `ONESCAN_MODE=compare` (default): a dashboard load (as `bench/filtered.ts`
 * asks it) by an engine that shares and one that does not, alternated in one process, `ONESCAN_RUNS` times
 * each (3) after a warm-up, median wall and CPU. `ONESCAN_VISITS` the site's visits a month (100000) or
 * `ONESCAN_ROOT` its directory, `ONESCAN_MEMORY` DuckDB's memory limit in MiB (1024), `ONESCAN_RANGES`
 * (30d,12m), `ONESCAN_EVERY=1` to share every filter (not only those testing a list), `ONESCAN_FILTERS` (the start of their names: A,B,always; C and D dimensions only), `ONESCAN_ALONE=0` to run the sharing engine only.
 */
const VISITS = Number(process.env.ONESCAN_VISITS ?? 100_000);
const ROOT = benchSiteRoot({
  visitsPerMonth: VISITS,
  paymentsPerMonth: VISITS / 10,
  end: '2026-11-26',
  days: 365,
  seed: 33,
});
const ROOT_OVERRIDE = process.env.ONESCAN_ROOT;
const SHARING: SharingOptions = {
  memoryBytes: Number(process.env.ONESCAN_MEMORY ?? 1024) * 2 ** 20,
  spillBytes: 8 * 2 ** 30,
  everyFilter: process.env.ONESCAN_EVERY === '1',
};
const RANGES = (process.env.ONESCAN_RANGES ?? '30d,12m').split(',') as Array<'30d' | '12m'>;
const RUNS = Number(process.env.ONESCAN_RUNS ?? 3);
const CHOSEN = (process.env.ONESCAN_FILTERS ?? 'A,B,always').split(',');
const NOW = Date.parse('2026-11-26T12:00:00Z');
/** The bench's filters (A, B, always true), then two on dimensions only: C selective (A without its page), D not. */
const FILTERS: ReadonlyArray<{ name: string; json: unknown[] }> = [
  ...BENCH_FILTERS,
  {
    name: 'C: channel is Search, device is Mobile',
    json: [
      ['is', 'visit:channel', ['Search']],
      ['is', 'visit:device', ['Mobile']],
    ],
  },
  { name: 'D: country is not US', json: [['is_not', 'visit:country', ['US']]] },
];

async function memory(db: DuckDBConnection) {
  const rows = (
    await db.runAndReadAll(
      `SELECT sum(memory_usage_bytes) AS mem, sum(temporary_storage_bytes) AS tmp FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'`,
    )
  ).getRowObjectsJS();
  return { mem: Number(rows[0]?.mem ?? 0), tmp: Number(rows[0]?.tmp ?? 0) };
}

const CONFIG = siteConfigSchema.parse({
  domain: BENCH_SITE_DOMAIN,
  timezone: BENCH_SITE_TIMEZONE,
  account: 'bench',
  created: '2025-11-01T00:00:00Z',
});

/** The chosen filters (`ONESCAN_FILTERS`, by the start of their names) and ranges, each with the period before. */
function* cases() {
  for (const f of FILTERS.filter((x) => CHOSEN.some((prefix) => x.name.startsWith(prefix)))) {
    const filter = filtersParam.parse(JSON.stringify(f.json));
    if (filter === null) throw new Error(`filter ${f.name} parses to none`);
    for (const name of RANGES) {
      const { range, previous } = resolveRange(
        { range: name },
        { now: NOW, timezone: BENCH_SITE_TIMEZONE, firstDay: '2025-11-01' },
      );
      yield { label: `${f.name.split(':')[0]} ${name}`, name, filter, range, previous };
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function compare(root: string) {
  const engines = { shared: new LocalFilteredVisits(root, SHARING), alone: new LocalFilteredVisits(root, null) };
  let peak = 0;
  for (const { label, name, filter, range, previous } of cases()) {
    const interval = name === '30d' ? 'day' : 'month';
    const figures = {
      shared: { wall: [] as number[], cpu: [] as number[] },
      alone: { wall: [] as number[], cpu: [] as number[] },
    };
    const answers = new Map<string, string>();
    for (let run = 0; run <= RUNS; run++) {
      // Alternated, the first of a pair switching each run: the machine's load falls on both alike.
      const pair = run % 2 === 0 ? (['shared', 'alone'] as const) : (['alone', 'shared'] as const);
      const order = process.env.ONESCAN_ALONE === '0' ? (['shared'] as const) : pair;
      for (const which of order) {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const answer = await load(engines[which], CONFIG, filter, range, previous, interval);
        const cpu = process.cpuUsage(cpu0);
        peak = Math.max(peak, process.memoryUsage().rss);
        answers.set(which, JSON.stringify(answer));
        if (run === 0) continue;
        figures[which].wall.push(performance.now() - t0);
        figures[which].cpu.push((cpu.user + cpu.system) / 1000);
      }
    }
    if (answers.has('alone') && answers.get('shared') !== answers.get('alone'))
      throw new Error(`${label}: the answers differ`);
    const m = (which: 'shared' | 'alone') =>
      `${Math.round(median(figures[which].wall))} / ${Math.round(median(figures[which].cpu))} ms`;
    process.stdout.write(
      `${label}: shared ${m('shared')}, alone ${m('alone')} (wall / CPU, median of ${RUNS}), ` +
        `CPU ratio ${(median(figures.alone.cpu) / median(figures.shared.cpu)).toFixed(2)}, peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB, load ${loadavg()[0]?.toFixed(1)}\n`,
    );
  }
  await engines.shared.close();
  await engines.alone.close();
}

async function memoryOfTables(root: string) {
  const relations = new FilteredRelations(root, SHARING);
  const db = await relations.connect();
  const mib = (n: number) => (n / 2 ** 20).toFixed(1);
  for (const { label, filter, range, previous } of cases()) {
    let rows = 0;
    const t0 = performance.now();
    const before = await memory(db);
    for (const [i, span] of [range, previous].entries()) {
      const { shared } = await relations.relations(BENCH_SITE_DOMAIN, filter, span);
      if (!shared?.source) throw new Error(`${label}: not shared (it tests no list column)`);
      await db.run(`CREATE TEMP TABLE m_v${i} AS ${shared.source.visits}`);
      await db.run(`CREATE TEMP TABLE m_p${i} AS ${shared.source.payments}`);
      rows += Number((await db.runAndReadAll(`SELECT count(*) FROM m_v${i}`)).getRowsJS()[0]?.[0]);
    }
    const ms = performance.now() - t0;
    const after = await memory(db);
    const bytes = after.mem + after.tmp - before.mem - before.tmp;
    process.stdout.write(
      `${label}: ${rows} matching visits (range and previous), tables ${mib(after.mem)} MiB in memory + ` +
        `${mib(after.tmp)} MiB spilled = ${(bytes / rows).toFixed(1)} B a visit (payments included), made in ${Math.round(ms)} ms, ` +
        `RSS ${mib(process.memoryUsage().rss)} MiB, load ${loadavg()[0]?.toFixed(1)}\n`,
    );
    await db.run(`DROP TABLE m_v0; DROP TABLE m_p0; DROP TABLE m_v1; DROP TABLE m_p1`);
  }
  await relations.close();
}

const root = ROOT_OVERRIDE ?? ROOT;
await (process.env.ONESCAN_MODE === 'memory' ? memoryOfTables(root) : compare(root));
