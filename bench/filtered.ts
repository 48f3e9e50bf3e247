import { readFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import {
  BENCH_LINK_URLS,
  benchSite,
  filteredBenchOptions,
  BENCH_SITE_DOMAIN,
  BENCH_SITE_TIMEZONE,
  type BenchSite,
} from './filtered-site.js';
import { PRICES, USAGE } from './cost-prices.js';
import type { Figure } from './report.js';
import { LocalFilteredVisits } from '../local/filtered-visits.js';
import { monthFilePath, paymentsFilePath } from '../local/visit-table.js';
import { sqlLiteral } from '../local/sql.js';
import { eachDay, resolveRange, type DateRange } from '../lambdas/domain/range.js';
import { EVERY_VISIT, filtersParam, type Filter } from '../lambdas/domain/reports/filters.js';
import { siteConfigSchema, type SiteConfig } from '../lambdas/domain/site.js';
import type { Interval } from '../lambdas/domain/reports/timeseries.js';
import type { VisitorCounting } from '../lambdas/ports.js';
import {
  filteredBreakdownRows,
  filteredGoalRows,
  filteredPoints,
  filteredTotals,
  propBreakdownRows,
} from '../lambdas/services/filtered-reports.js';
import { propKeyRows } from '../lambdas/domain/reports/prop-keys.js';
import { OUTBOUND_GOAL } from '../lambdas/domain/visit.js';

/**
 * `npm run bench -- --only filtered` (`docs/benchmarks.md`, "Filtered
 * dashboards at full scale"): a filtered dashboard load on the bench site (a
 * year, 1M visits a month, 100,000 payments a month: `bench/filtered-site.ts`)
 * through the product's engine, `LocalFilteredVisits` over the tables
 * `LocalVisitTable` wrote, reached through the filtered report service
 * (`lambdas/services/filtered-reports.ts`), as the app asks for it on load:
 * the overview of the range and of the period before it, the chart's series
 * (by day for 30 days, by month for 12 months, the app's intervals), the first
 * tab of each breakdown panel (channel, page, country, device) and goals, ten
 * rows each, all at once.
 *
 * Per filter and range: wall and CPU time of the load (median of
 * `FILTERED_RUNS` loads, after one that warms the engine), bytes the process
 * read (`/proc/self/io` `rchar`: DuckDB's reads of the Parquet files), and
 * the AWS estimate of a load served by a report Lambda running the same
 * engine over the same files in S3: its CPU time as GB-seconds at a vCPU's
 * memory (Lambda gives one vCPU per 1,769 MB, so GB-s do not depend on the
 * memory chosen once the work is CPU-bound), the Lambda requests, and one S3
 * range GET per column chunk of the row groups the load's span overlaps
 * (`parquet_metadata`), at `bench/cost-prices.ts`'s prices.
 *
 * `FILTERED_VISITS_PER_MONTH` scales the site down (default 1,000,000; the
 * payments stay a tenth of the visits); `FILTERED_RUNS` (default 3) and
 * `FILTERED_FILTERS` (default `A,B,always`) shorten a run.
 */

const VISITS_PER_MONTH = Number(process.env.FILTERED_VISITS_PER_MONTH ?? 1_000_000);
const RUNS = Number(process.env.FILTERED_RUNS ?? 3);
/** `FILTERED_FILTERS=A,always`: the filters whose names start so (default all). */
const CHOSEN = (process.env.FILTERED_FILTERS ?? 'A,B,always').split(',');
const END = '2026-11-26';
const RESULTS = fileURLToPath(new URL('./results/filtered.json', import.meta.url));

/** The measured filters (Plausible's `filters` JSON, as the API takes it). */
export const FILTERS: ReadonlyArray<{ name: string; json: unknown[] }> = [
  {
    name: 'A: channel is Search, device is Mobile, page is /blog',
    json: [
      ['is', 'visit:channel', ['Search']],
      ['is', 'visit:device', ['Mobile']],
      ['is', 'event:page', ['/blog']],
    ],
  },
  { name: 'B: page contains /blog', json: [['contains', 'event:page', ['/blog']]] },
  { name: 'always true: channel is not (none of them)', json: [['is_not', 'visit:channel', ['No such channel']]] },
];
/** The ranges the app names, with the interval its chart asks for them (`app/src/range.ts`). */
const RANGES: ReadonlyArray<{ name: '30d' | '12m'; interval: Interval; budgetMs: number }> = [
  { name: '30d', interval: 'day', budgetMs: 1000 },
  { name: '12m', interval: 'month', budgetMs: 3000 },
];
/** Rows each panel asks for first (`FIRST_ROWS` of the app's panels). */
const FIRST_ROWS = 10;
const PANELS = ['channel', 'page', 'country', 'device'] as const;
/** Lambda invocations of a load: the two overview periods are one request, then the series, four panels, goals. */
const REQUESTS_PER_LOAD = 7;
/** Visit columns a load reads (the filters', the panels'). */
const VISIT_COLUMNS = [
  'visit_id',
  'visitor_id',
  'day',
  'start_ts',
  'pageviews',
  'bounce',
  'timed',
  'duration_ms',
  'channel',
  'device',
  'country',
  'pages',
  'goals',
];
/** The Properties panel's requests: the keys, then the first key's values (`app/src/components/properties-panel.tsx`). */
const PROPS_REQUESTS = 2;
/** Keys the panel's picker asks for (`PICKED_KEYS`). */
const PICKED_KEYS = 100;
/** Visit and payment columns the Properties panel reads. */
const PROPS_VISIT_COLUMNS = ['visit_id', 'visitor_id', 'day', 'props'];
const PROPS_PAYMENT_COLUMNS = ['key', 'day', 'cents', 'customer', 'failed', 'credited', 'visit_day', 'props'];
/** The payments' own columns a load reads, and their credited visit's (the filters', the panels'). */
const PAYMENT_COLUMNS = [
  'ts',
  'day',
  'cents',
  'customer',
  'failed',
  'credited',
  'visit_day',
  'channel',
  'device',
  'country',
  'pages',
  'goals',
];

/** The Properties panel's figures of a filter (or none) and range: its two requests in turn. */
interface PropsFigures {
  filter: string;
  range: string;
  wallMs: number;
  cpuMs: number;
  bytesRead: number;
  /** Column chunks of the row groups the load's span overlaps: S3 range GETs in AWS. */
  chunks: number;
  awsUsd: number;
}

interface LoadFigures extends PropsFigures {
  chunkBytes: number;
  budgetMs: number;
}

/** Bytes this process has read through read(2) and pread(2) so far (`/proc/self/io`), or 0 where there is none. */
function bytesRead(): number {
  if (!existsSync('/proc/self/io')) return 0;
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('rchar:'));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

/**
 * How the loads count distinct visitors: every day of the bench site has more than 1,000 visitors, so its
 * unfiltered sets are registers and the service counts by registers (`registerPoints`);
 * `FILTERED_VISITORS=exact` counts exactly instead, as before the registers, to compare.
 */
const COUNTING: VisitorCounting = process.env.FILTERED_VISITORS === 'exact' ? 'exact' : 'registers';

/** The bench site's goals (`bench/traffic.ts`): each has more than 32 visitors a day, so its unfiltered sketches are registers. */
const BENCH_GOALS = ['Outbound Link: Click', 'Signup'];

/** Every point of a series by day or month (all counted by registers on the bench site). */
const pointsOf = (range: DateRange, interval: Interval) => [
  ...new Set(eachDay(range.from, range.to).map((d) => (interval === 'day' ? d : d.slice(0, 7)))),
];

/** One dashboard load: every panel the app requests at once, through the filtered report service. */
export async function load(
  engine: LocalFilteredVisits,
  site: SiteConfig,
  filter: Filter,
  range: DateRange,
  previous: DateRange,
  interval: Interval,
): Promise<unknown[]> {
  return Promise.all([
    filteredTotals(engine, site, filter, range, COUNTING),
    filteredTotals(engine, site, filter, previous, COUNTING),
    filteredPoints(engine, site, filter, range, interval, COUNTING === 'exact' ? [] : pointsOf(range, interval)),
    ...PANELS.map((d) => filteredBreakdownRows(engine, site, filter, range, d, FIRST_ROWS)),
    filteredGoalRows(engine, site, filter, range, null, FIRST_ROWS, {
      visitors: COUNTING,
      goals: COUNTING === 'exact' ? [] : BENCH_GOALS,
    }),
  ]);
}

/**
 * The Properties panel as the app loads it: the range's keys (`propKeys`), then the first key's values
 * (`propBreakdownRows`); without a filter, every visit, the Unattributed row's rollup Query left out (no
 * rollups here: it is the one Query a channel breakdown makes).
 * @throws Error when the bench site has no property
 */
async function propertiesPanel(engine: LocalFilteredVisits, site: SiteConfig, filter: Filter | null, range: DateRange) {
  const keys = propKeyRows(await engine.propKeys(site.domain, filter ?? EVERY_VISIT, range), PICKED_KEYS);
  const first = keys.rows[0]?.key;
  if (first === undefined) throw new Error('the bench site has no custom property');
  return propBreakdownRows(engine, site, filter, range, first, FIRST_ROWS, async () => []);
}

/** Median wall, CPU and bytes read of `RUNS` runs of `run`, after one that warms the engine. */
async function measured(run: () => Promise<unknown>) {
  await run();
  const runs: Array<{ wall: number; cpu: number; bytes: number }> = [];
  for (let i = 0; i < RUNS; i++) {
    const bytes0 = bytesRead();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run();
    const cpu = process.cpuUsage(cpu0);
    runs.push({ wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000, bytes: bytesRead() - bytes0 });
  }
  return {
    wallMs: median(runs.map((x) => x.wall)),
    cpuMs: median(runs.map((x) => x.cpu)),
    bytesRead: median(runs.map((x) => x.bytes)),
  };
}

/**
 * Column chunks (and their compressed bytes) of the row groups that may hold the load's visits and payments:
 * those of the previous period and the range (a payment carries its credited visit's columns).
 */
async function chunksOf(
  db: DuckDBConnection,
  root: string,
  range: DateRange,
  previous: DateRange,
  columns = { visits: VISIT_COLUMNS, payments: PAYMENT_COLUMNS },
) {
  const months = (from: string, to: string) => [...new Set(eachDay(from, to).map((d) => d.slice(0, 7)))];
  const list = (files: string[]) =>
    `[${files
      .filter((f) => existsSync(f))
      .map(sqlLiteral)
      .join(', ')}]`;
  const from = previous.from;
  const paymentFiles = list(months(from, range.to).map((m) => paymentsFilePath(root, BENCH_SITE_DOMAIN, m)));
  const visitFiles = list(months(from, range.to).map((m) => monthFilePath(root, BENCH_SITE_DOMAIN, m)));
  const count = async (files: string, columns: string[], dayColumn: string) => {
    const [row] = (
      await db.runAndReadAll(`
        WITH md AS (SELECT file_name, row_group_id, path_in_schema, total_compressed_size, stats_min, stats_max FROM parquet_metadata(${files})),
        rg AS (SELECT file_name, row_group_id FROM md WHERE path_in_schema = ${sqlLiteral(dayColumn)}
          AND stats_max >= ${sqlLiteral(from)} AND stats_min <= ${sqlLiteral(range.to)})
        SELECT count(*), coalesce(sum(total_compressed_size), 0) FROM md JOIN rg USING (file_name, row_group_id)
        WHERE split_part(path_in_schema, ', ', 1) IN (${columns.map(sqlLiteral).join(', ')})`)
    ).getRowsJS();
    return { chunks: Number(row?.[0] ?? 0), bytes: Number(row?.[1] ?? 0) };
  };
  const visits = await count(visitFiles, columns.visits, 'day');
  const payments = await count(paymentFiles, columns.payments, 'day');
  return { from, chunks: visits.chunks + payments.chunks, bytes: visits.bytes + payments.bytes };
}

/** AWS charge of a load, USD: Lambda GB-s of its CPU time at a vCPU's memory, its requests, and a GET per column chunk. */
function awsUsd(cpuMs: number, chunks: number, requests = REQUESTS_PER_LOAD): number {
  const gbSeconds = (cpuMs / 1000) * (USAGE.vcpuMb / 1024);
  return (
    gbSeconds * PRICES.lambdaGbSecond.arm64 +
    (requests * PRICES.lambdaRequestPerMillion) / 1e6 +
    (chunks * PRICES.s3GetPerThousand) / 1000
  );
}

/** The outbound links detail (`goal=Outbound Link: Click`, one row per URL) under a filter: one request. */
const outboundLinks = (engine: LocalFilteredVisits, site: SiteConfig, filter: Filter, range: DateRange) =>
  filteredGoalRows(engine, site, filter, range, OUTBOUND_GOAL, FIRST_ROWS, {
    visitors: COUNTING,
    goals: COUNTING === 'exact' ? [] : BENCH_GOALS,
    links: COUNTING === 'exact' ? [] : BENCH_LINK_URLS,
  });

/**
 * The stored bytes (compressed) of the visit and payments files of every month, and of their `links` column
 * (the outbound link URLs' ids): what the column adds to the table, a month at a time (`docs/cost.md`).
 */
async function tableBytes(db: DuckDBConnection, root: string) {
  const sum = async (table: 'visits' | 'payments') => {
    const files = `${root}/${table}/site=${BENCH_SITE_DOMAIN}/mo=*/data.parquet`;
    const [row] = (
      await db.runAndReadAll(
        `SELECT count(DISTINCT file_name), coalesce(sum(total_compressed_size), 0), ` +
          `coalesce(sum(total_compressed_size) FILTER (WHERE split_part(path_in_schema, ', ', 1) = 'links'), 0) ` +
          `FROM parquet_metadata(${sqlLiteral(files)})`,
      )
    ).getRowsJS();
    return { months: Number(row?.[0] ?? 0), bytes: Number(row?.[1] ?? 0), links: Number(row?.[2] ?? 0) };
  };
  return { visits: await sum('visits'), payments: await sum('payments') };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export async function benchFiltered(): Promise<Figure[]> {
  const log = (line: string) => process.stderr.write(`  filtered: ${line}\n`);
  const site: BenchSite = await benchSite(filteredBenchOptions(VISITS_PER_MONTH), log);
  const config = siteConfigSchema.parse({
    domain: BENCH_SITE_DOMAIN,
    timezone: BENCH_SITE_TIMEZONE,
    account: 'bench',
    created: `${site.firstDay}T00:00:00Z`,
  });
  const now = Date.parse(`${END}T12:00:00Z`);
  const engine = new LocalFilteredVisits(site.root);
  const meta = await (await DuckDBInstance.create(':memory:')).connect();
  const out: LoadFigures[] = [];
  const props: PropsFigures[] = [];
  const outbound: Array<{ filter: string; range: string; wallMs: number; cpuMs: number; bytesRead: number }> = [];
  const stored = await tableBytes(meta, site.root);
  const perMonth = (bytes: number, months: number) => bytes / Math.max(1, months);
  log(
    `table: visits ${(perMonth(stored.visits.bytes, stored.visits.months) / 2 ** 20).toFixed(2)} MiB a month, of which links ` +
      `${(perMonth(stored.visits.links, stored.visits.months) / 2 ** 10).toFixed(1)} KiB; payments ` +
      `${(perMonth(stored.payments.bytes, stored.payments.months) / 2 ** 20).toFixed(2)} MiB a month, of which links ` +
      `${(perMonth(stored.payments.links, stored.payments.months) / 2 ** 10).toFixed(1)} KiB`,
  );
  /** The Properties panel under `filter` (null: none, the unfiltered dashboard's) over a range. */
  const measureProps = async (name: string, filter: Filter | null, range: DateRange) => {
    const m = await measured(() => propertiesPanel(engine, config, filter, range));
    // The panel reads the range alone: its chunks are the range's (no previous period).
    const chunks = await chunksOf(meta, site.root, range, range, {
      visits: PROPS_VISIT_COLUMNS,
      payments: PROPS_PAYMENT_COLUMNS,
    });
    const figures = {
      filter: name,
      ...m,
      chunks: chunks.chunks,
      awsUsd: awsUsd(m.cpuMs, chunks.chunks, PROPS_REQUESTS),
    };
    log(
      `Properties panel, ${name}, ${range.from}..${range.to}: ${Math.round(m.wallMs)} ms wall, ${Math.round(m.cpuMs)} ms CPU, ` +
        `${(m.bytesRead / 2 ** 20).toFixed(1)} MiB read, ${chunks.chunks} chunks, $${figures.awsUsd.toFixed(5)}`,
    );
    return figures;
  };
  try {
    for (const r of RANGES) {
      const { range } = resolveRange(
        { range: r.name },
        { now, timezone: BENCH_SITE_TIMEZONE, firstDay: site.firstDay },
      );
      props.push({ ...(await measureProps('no filter', null, range)), range: r.name });
    }
    for (const f of FILTERS.filter((x) => CHOSEN.some((prefix) => x.name.startsWith(prefix)))) {
      const filter = filtersParam.parse(JSON.stringify(f.json));
      if (filter === null) throw new Error(`filter ${f.name} parses to none`);
      for (const r of RANGES) {
        const { range, previous } = resolveRange(
          { range: r.name },
          { now, timezone: BENCH_SITE_TIMEZONE, firstDay: site.firstDay },
        );
        const m = await measured(() => load(engine, config, filter, range, previous, r.interval));
        const chunks = await chunksOf(meta, site.root, range, previous);
        const cpuMs = m.cpuMs;
        const figures: LoadFigures = {
          filter: f.name,
          range: r.name,
          ...m,
          chunks: chunks.chunks,
          chunkBytes: chunks.bytes,
          awsUsd: awsUsd(cpuMs, chunks.chunks),
          budgetMs: r.budgetMs,
        };
        log(
          `${f.name}, ${r.name}: ${Math.round(figures.wallMs)} ms wall, ${Math.round(cpuMs)} ms CPU, ` +
            `${(figures.bytesRead / 2 ** 20).toFixed(1)} MiB read, ${chunks.chunks} chunks from ${chunks.from}, $${figures.awsUsd.toFixed(5)}`,
        );
        out.push(figures);
        props.push({ ...(await measureProps(f.name, filter, range)), range: r.name });
        const links = await measured(() => outboundLinks(engine, config, filter, range));
        log(
          `outbound links detail, ${f.name}, ${r.name}: ${Math.round(links.wallMs)} ms wall, ${Math.round(links.cpuMs)} ms CPU, ` +
            `${(links.bytesRead / 2 ** 20).toFixed(1)} MiB read`,
        );
        outbound.push({ filter: f.name, range: r.name, ...links });
      }
    }
  } finally {
    await engine.close();
    meta.closeSync();
  }
  mkdirSync(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify(
      {
        visitsPerMonth: VISITS_PER_MONTH,
        visits: site.visits,
        payments: site.payments,
        generationMs: Math.round(site.generationMs),
        runs: RUNS,
        loads: out,
        propertiesPanel: props,
        outboundLinks: outbound,
        tableBytes: stored,
      },
      null,
      2,
    )}\n`,
  );
  const section = 'filtered';
  return [
    { section, name: `bench site: visits a year (${VISITS_PER_MONTH} a month)`, value: site.visits, unit: 'visits' },
    { section, name: 'bench site: payments a year', value: site.payments, unit: 'payments' },
    { section, name: 'bench site: generation (writer path, all months)', value: site.generationMs / 1000, unit: 's' },
    ...(['visits', 'payments'] as const).flatMap((t): Figure[] => [
      {
        section,
        name: `${t} files a month`,
        value: perMonth(stored[t].bytes, stored[t].months) / 2 ** 20,
        unit: 'MiB',
      },
      {
        section,
        name: `${t} files a month: links column`,
        value: perMonth(stored[t].links, stored[t].months) / 2 ** 10,
        unit: 'KiB',
      },
    ]),
    ...outbound.flatMap((l): Figure[] => [
      { section, name: `outbound links detail, ${l.filter}, ${l.range}: wall`, value: l.wallMs, unit: 'ms' },
      { section, name: `outbound links detail, ${l.filter}, ${l.range}: CPU`, value: l.cpuMs, unit: 'ms' },
    ]),
    ...props.flatMap((l): Figure[] => {
      const name = `Properties panel, ${l.filter}, ${l.range}`;
      return [
        { section, name: `${name}: wall`, value: l.wallMs, unit: 'ms' },
        { section, name: `${name}: CPU`, value: l.cpuMs, unit: 'ms' },
        { section, name: `${name}: column chunks (S3 GETs)`, value: l.chunks, unit: 'chunks' },
        { section, name: `${name}: AWS estimate per 1,000 loads`, value: l.awsUsd * 1000, unit: 'USD' },
      ];
    }),
    ...out.flatMap((l): Figure[] => {
      const name = `${l.filter}, ${l.range}`;
      return [
        { section, name: `${name}: wall`, value: l.wallMs, unit: 'ms', target: `≤ ${l.budgetMs.toLocaleString('en')}` },
        { section, name: `${name}: CPU`, value: l.cpuMs, unit: 'ms' },
        { section, name: `${name}: bytes read`, value: l.bytesRead / 2 ** 20, unit: 'MiB' },
        { section, name: `${name}: column chunks (S3 GETs)`, value: l.chunks, unit: 'chunks' },
        {
          section,
          name: `${name}: AWS estimate per 1,000 loads`,
          value: l.awsUsd * 1000,
          unit: 'USD',
          target: l.range === '30d' ? '≤ 1' : undefined,
        },
      ];
    }),
  ];
}
