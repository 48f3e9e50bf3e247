import { DIMENSIONS } from '../lambdas/domain/rollup.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { CapacityMeter, totalOf } from '../lambdas/adapters/dynamo/capacity-meter.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoReportStore } from '../lambdas/adapters/dynamo/report-store.js';
import {
  breakdown,
  goals,
  listPayments,
  overview,
  realtime,
  retention,
  timeseries,
  visitorTimeline,
  type ReportDeps,
} from '../lambdas/services/reports.js';
import { DynamoRealtimeStore } from '../lambdas/adapters/dynamo/realtime-store.js';
import { minuteOf, type RealtimeSlice } from '../lambdas/domain/realtime.js';
import { compareAnswers, openDuckBaseline, type DuckAnswer } from './duckdb-baseline.js';
import { BENCH_SITE as SITE, BENCH_TIMEZONE as TZ, benchRate } from './bench-site.js';
import { openBenchTable } from './bench-table.js';
import { EVENTS_PER_VISIT } from './traffic.js';
import { percentile, type Figure } from './report.js';

/**
 * What a partition key's items are, for the bytes-received split of each report: its first
 * segment (`R`, `PD`, `PT`, `PU`, …), and for rollups and payment dimensions (`R#<site>#<metric>`,
 * `PD#<site>#<dimension>`) the metric or dimension too (`PD page`); the site is left out.
 */
export function partitionKind(pk: string): string {
  const parts = pk.split('#');
  return (parts[0] === 'R' || parts[0] === 'PD') && parts.length >= 3
    ? `${parts[0]} ${parts.at(-1)}`
    : (parts[0] ?? '');
}

/** The partition key a DynamoDB request reads, marshalled (`{ S: … }`) or not; '' when it reads several (BatchGetItem). */
function partitionOf(input: Record<string, unknown>): string {
  const value = (v: unknown) =>
    v && typeof v === 'object' && 'S' in v ? String((v as { S: unknown }).S) : typeof v === 'string' ? v : '';
  const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
  if (values?.[':pk'] !== undefined) return value(values[':pk']);
  const key = input.Key as Record<string, unknown> | undefined;
  return key ? value(key.pk) : '';
}

/**
 * Adds each response's body bytes (`Content-Length`, as `CapacityMeter` counts them) to
 * `into[partitionKind(pk)]`, or to `into[operation]` for a request of several partitions.
 */
function attachBytesByPartition(conn: DynamoConnection, into: () => Map<string, number>): void {
  conn.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const headers = (result.response as { headers?: Record<string, string> } | undefined)?.headers ?? {};
      const bytes =
        Number(Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-length')?.[1] ?? 0) || 0;
      const pk = partitionOf(args.input as Record<string, unknown>);
      const label = pk ? partitionKind(pk) : String(context.commandName ?? 'Unknown').replace(/Command$/, '');
      const split = into();
      split.set(label, (split.get(label) ?? 0) + bytes);
      return result;
    },
    { step: 'deserialize', name: 'benchBytesByPartition', priority: 'low', override: true },
  );
}

/**
 * How far Footfall's distinct visitors may be from DuckDB's exact count: 3 standard errors of the
 * HyperLogLog (3 × 0.81%, `lambdas/domain/visitor-sketch.ts`, docs/data-model.md).
 */
const VISITOR_TOLERANCE = 0.0243;
/** The report budget (`docs/benchmarks.md` "Budgets"), per report: DynamoDB requests and MB received. */
const BUDGET = { requests: 25, mb: 4 };
/** A report reading more than this is run once, not five times (retention over whole partitions at 1M payments reads a GB). */
const RUN_ONCE_ABOVE_MB = 50;

/**
 * Whether a report (or `duckdb`, the baseline) is measured: `FOOTFALL_BENCH_REPORTS`, a
 * comma-separated list of name prefixes (`retention,payments`), selects some; unset, all.
 */
export function selected(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const only = (env.FOOTFALL_BENCH_REPORTS ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return only.length === 0 || only.some((prefix) => name.startsWith(prefix));
}

/** A scale point of the report benchmark: events and payments over the 365 days. */
export interface BenchScale {
  label: string;
  events: number;
  payments: number;
}

/**
 * The scale point from the environment (`docs/benchmarks.md`):
 * `FOOTFALL_BENCH_SITE=issue15` is the report budget's site, 1M visits and
 * 100,000 payments a month over the year (28.4M events, 1.2M payments);
 * otherwise `FOOTFALL_BENCH_EVENTS` (default 3.4M, about 1.45M visits) and
 * `FOOTFALL_BENCH_PAYMENTS`, one of 20000 (default), 100000 and 1000000.
 * @throws Error for any other payments value or an unknown site
 */
export function benchScale(env: NodeJS.ProcessEnv = process.env): BenchScale {
  if (env.FOOTFALL_BENCH_SITE !== undefined && env.FOOTFALL_BENCH_SITE !== '') {
    if (env.FOOTFALL_BENCH_SITE !== 'issue15')
      throw new Error(`FOOTFALL_BENCH_SITE must be issue15; got '${env.FOOTFALL_BENCH_SITE}'`);
    return {
      label: '1M visits and 100,000 payments a month',
      events: Math.round(((1_000_000 * EVENTS_PER_VISIT) / 30) * 365),
      payments: 1_200_000,
    };
  }
  const events = Number(env.FOOTFALL_BENCH_EVENTS ?? 3_400_000);
  if (!Number.isInteger(events) || events < 1000)
    throw new Error(`FOOTFALL_BENCH_EVENTS must be an integer of at least 1000; got '${env.FOOTFALL_BENCH_EVENTS}'`);
  const raw = env.FOOTFALL_BENCH_PAYMENTS ?? '20000';
  const payments = Number(raw);
  if (![20_000, 100_000, 1_000_000].includes(payments))
    throw new Error(`FOOTFALL_BENCH_PAYMENTS must be 20000, 100000 or 1000000; got '${raw}'`);
  return {
    label: `${(events / 1e6).toFixed(1)}M events, ${payments.toLocaleString('en-US')} payments a year`,
    events,
    payments,
  };
}

/**
 * The report benchmark (`docs/benchmarks.md` "Budgets"): the bench site (`bench/bench-site.ts`: the 365 days
 * ending now, sessionized by the real sessionizer, payments through the real payment service) at
 * the scale point `benchScale()`, every report measured at the SDK client against the budget of
 * 25 requests and 4 MB, and the DuckDB baseline over the same events' Parquet.
 */
export async function benchReports(scale: BenchScale = benchScale()): Promise<Figure[]> {
  const meter = new CapacityMeter();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // The raw events go to Parquet only for the DuckDB baseline (its share of the load's time is large).
  const table = await openBenchTable(
    { events: scale.events, payments: scale.payments, days: 365, archive: selected('duckdb') },
    meter,
    log,
    process.env.FOOTFALL_BENCH_CACHE || undefined,
  );
  const { conn, site: loaded } = table;
  // Bytes received per kind of partition, of the report being measured (`measure` resets it).
  let byPartition = new Map<string, number>();
  attachBytesByPartition(conn, () => byPartition);
  const config = new DynamoConfigStore(conn);
  const { now, watched } = loaded;
  log(`bench site ${table.reused ? 'reused' : 'loaded'}: ${JSON.stringify(loaded)}`);

  const figures: Figure[] = [
    { section: 'reports', name: `bench site (${scale.label}): visits`, value: loaded.visits, unit: 'visits' },
    { section: 'reports', name: 'bench site: page views', value: loaded.pageviews, unit: 'page views' },
    { section: 'reports', name: 'bench site: payments', value: loaded.payments, unit: 'payments' },
    { section: 'reports', name: 'bench site: customers', value: loaded.customers, unit: 'customers' },
    {
      section: 'reports',
      name: 'bench site load: sessionize (real sessionizer, in-memory stores, Parquet archive)',
      value: loaded.ms.sessionize / 1000,
      unit: 's',
    },
    {
      section: 'reports',
      name: 'bench site load: payments (real payment service, in memory)',
      value: loaded.ms.payments / 1000,
      unit: 's',
    },
    {
      section: 'reports',
      name: 'bench site load: payment items written (bulk)',
      value: loaded.ms.write / 1000,
      unit: 's',
    },
    {
      section: 'reports',
      name: 'bench site load: largest loader heap after a chunk of payments was written',
      value: Math.round(loaded.peakHeapBytes / 1e6),
      unit: 'MB',
    },
    // The load times above are those of the run that loaded the table when it came from FOOTFALL_BENCH_CACHE.
    {
      section: 'reports',
      name: 'bench site table reused from FOOTFALL_BENCH_CACHE (1) or loaded by this run (0)',
      value: table.reused ? 1 : 0,
      unit: '',
    },
  ];
  const fx = async () => benchRate;
  const over: string[] = [];
  const finish = async () => {
    await table.close();
    return figures;
  };
  // Each report five times (once when it reads more than RUN_ONCE_ABOVE_MB): the median time;
  // requests, response bytes and RRU counted at the SDK client (CapacityMeter).
  const measure = async <T>(
    name: string,
    run: (deps: ReportDeps) => Promise<T>,
    targets = true,
  ): Promise<T | undefined> => {
    if (!selected(name)) return undefined;
    const times: number[] = [];
    let cost = totalOf({});
    let answer: T | undefined;
    let split = new Map<string, number>();
    for (let i = 0; i < 5 && (i === 0 || cost.bytesReceived / 1e6 <= RUN_ONCE_ABOVE_MB); i++) {
      const store = new DynamoReportStore(conn);
      byPartition = new Map();
      const t0 = process.hrtime.bigint();
      const measured = await meter.measure(() => run({ sites: config, store, rates: fx, clock: () => now }));
      cost = measured.total;
      answer = measured.result;
      split = byPartition;
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const ms = percentile(times, 50);
    figures.push(
      { section: 'reports', name: `${name}: ms`, value: ms, unit: 'ms' },
      {
        section: 'reports',
        name: `${name}: DynamoDB requests`,
        value: cost.requests,
        unit: 'requests',
        target: targets ? '≤ 25' : undefined,
      },
      {
        section: 'reports',
        name: `${name}: bytes received`,
        value: cost.bytesReceived / 1e6,
        unit: 'MB',
        target: targets ? '≤ 4' : undefined,
        detail: Object.fromEntries(
          [...split].sort(([, a], [, b]) => b - a).map(([kind, bytes]) => [kind, bytes / 1e6]),
        ),
      },
      { section: 'reports', name: `${name}: RRU`, value: cost.rcu, unit: 'RRU' },
    );
    if (targets && (cost.requests > BUDGET.requests || cost.bytesReceived / 1e6 > BUDGET.mb))
      over.push(`${name} (${cost.requests} requests, ${(cost.bytesReceived / 1e6).toFixed(2)} MB)`);
    const parts = [...split]
      .sort(([, a], [, b]) => b - a)
      .map(([kind, bytes]) => `${kind} ${(bytes / 1e6).toFixed(3)}`);
    log(
      `${name}: ${ms.toFixed(1)} ms, ${cost.requests} requests, ${(cost.bytesReceived / 1e6).toFixed(3)} MB (${parts.join(', ')}), ${cost.rcu} RRU`,
    );
    return answer as T;
  };
  // Every report the dashboard, the API and MCP answer, at 7d, 30d and 12m.
  for (const range of ['7d', '30d', '12m'] as const) {
    await measure(`overview ${range}`, (deps) => overview(deps, 'bench', SITE, { range }));
    for (const dimension of DIMENSIONS)
      await measure(`breakdown ${dimension} ${range}`, (deps) =>
        breakdown(deps, 'bench', SITE, dimension, { range }, 100),
      );
    // By day, as the dashboard charts every range.
    await measure(`timeseries ${range} by day`, (deps) => timeseries(deps, 'bench', SITE, { range }, 'day'));
    const first = await measure(`payments ${range}, page 1`, (deps) =>
      listPayments(deps, 'bench', SITE, { range }, 'all', 20, 0),
    );
    await measure(`payments ${range}, page 2`, (deps) => listPayments(deps, 'bench', SITE, { range }, 'all', 20, 20));
    // A deep page: the middle of the range's list.
    const deep = first ? Math.floor(first.total / 2 / 20) * 20 : 0;
    if (first)
      await measure(`payments ${range}, page ${deep / 20 + 1} of ${Math.ceil(first.total / 20)}`, (deps) =>
        listPayments(deps, 'bench', SITE, { range }, 'all', 20, deep),
      );
    await measure(`retention ${range}`, (deps) => retention(deps, 'bench', SITE, { range }));
    await measure(`goals ${range}`, (deps) => goals(deps, 'bench', SITE, { range }, null, 100));
    await measure(`goals outbound links ${range}`, (deps) =>
      goals(deps, 'bench', SITE, { range }, 'Outbound Link: Click', 100),
    );
  }
  // Realtime: 6 minutes of 5-second batches, 20 current visitors each, as the sessionizer writes them
  // (an upper bound: the stack's 60 s batching window writes 6-12 items in 6 minutes).
  await loadRealtime(conn, now);
  await measure('realtime (72 batch items)', (deps) => realtime(deps, 'bench', SITE, 10));
  await measure('timeseries 12m by month', (deps) => timeseries(deps, 'bench', SITE, { range: '12m' }, 'month'));
  await measure('timeseries today by hour', (deps) => timeseries(deps, 'bench', SITE, { range: 'today' }, 'hour'));
  await measure('timeseries 7d by hour', (deps) => timeseries(deps, 'bench', SITE, { range: '7d' }, 'hour'));
  await measure('visitor timeline', (deps) => visitorTimeline(deps, 'bench', SITE, watched ?? ''));
  figures.push({
    section: 'reports',
    name: 'reports over the budget (25 requests, 4 MB)',
    value: over.length,
    unit: 'reports',
    target: '0',
  });
  if (over.length > 0) log(`over the budget: ${over.join('; ')}`);

  // 5. The same numbers from the raw Parquet with DuckDB, as an analyst writes it (`bench/duckdb-baseline.ts`):
  //    one connection, best of five against Footfall's best of five, answers compared number by number.
  if (!selected('duckdb')) return finish();
  const duck = await openDuckBaseline(table.archiveDir as string, SITE, TZ);
  try {
    for (const range of ['30d', '12m'] as const) {
      const deps: ReportDeps = { sites: config, store: new DynamoReportStore(conn), rates: fx, clock: () => now };
      let footfallBest = Infinity;
      let duckBest = Infinity;
      let ours: DuckAnswer | null = null;
      let theirs: DuckAnswer | null = null;
      for (let i = 0; i < 5; i++) {
        const t0 = process.hrtime.bigint();
        const [o, c] = await Promise.all([
          overview(deps, 'bench', SITE, { range }),
          breakdown(deps, 'bench', SITE, 'channel', { range }, 100),
        ]);
        footfallBest = Math.min(footfallBest, Number(process.hrtime.bigint() - t0) / 1e6);
        ours = {
          visitors: o.current.visitors,
          sessions: o.current.sessions,
          channels: Object.fromEntries(c.rows.filter((r) => !r.unattributed).map((r) => [r.label, r.visitors])),
        };
        const run = await duck.run(o.range.from, o.range.to);
        duckBest = Math.min(duckBest, run.ms);
        theirs = run.answer;
      }
      const differences = compareAnswers(ours as DuckAnswer, theirs as DuckAnswer, VISITOR_TOLERANCE);
      if (differences.length > 0)
        throw new Error(`Footfall and DuckDB disagree on ${range}:\n${differences.join('\n')}`);
      figures.push(
        {
          section: 'reports',
          name: `${range}: visitors, sessions, visits by channel (Footfall = DuckDB)`,
          value: (theirs as DuckAnswer).sessions,
          unit: 'sessions',
        },
        {
          section: 'reports',
          name: `Footfall overview + channel breakdown ${range}, best of 5: ms`,
          value: footfallBest,
          unit: 'ms',
        },
        {
          section: 'reports',
          name: `DuckDB over the Parquet archive, partition-pruned, ${range}, best of 5: ms`,
          value: duckBest,
          unit: 'ms',
        },
        { section: 'reports', name: `speed-up over DuckDB, ${range}`, value: duckBest / footfallBest, unit: '×' },
      );
    }
  } finally {
    duck.close();
  }
  return finish();
}

/**
 * Realtime items of the bench site: one per 5-second batch over the 6 minutes
 * before `now`, each with 20 visitors on 3 pages (what the sessionizer writes
 * at ~4 events a second; `docs/api.md` "Realtime").
 */
async function loadRealtime(conn: DynamoConnection, now: number): Promise<void> {
  const store = new DynamoRealtimeStore(conn);
  for (let batch = 0; batch < 72; batch++) {
    const ts = now - 360_000 + batch * 5_000;
    const visitors: RealtimeSlice['visitors'] = {};
    for (let i = 0; i < 20; i++)
      visitors[`rt-visitor-${(batch * 7 + i) % 300}`] = [
        ts,
        i % 4 === 0 ? 'www.google.com' : null,
        ['/', `/blog/post-${i % 3}`],
      ];
    await store.write([{ site: SITE, minute: minuteOf(ts), visitors }], {
      shard: 'shardId-0',
      sequence: String(batch),
    });
  }
}
