import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { FUNCTIONS } from '../lib/functions.js';
import { CONFIG_DEFAULTS, type FootfallConfig } from '../lib/config.js';
import { FIREHOSE_BUFFER_INTERVAL } from '../lib/archive.js';
import { CUSTOM_METRICS } from '../lambdas/observability/telemetry.js';
import type { Figure } from './report.js';

/**
 * The cost model of `docs/cost.md`: AWS list prices in us-east-1 (USD, no free tier) applied to
 * the figures `npm run bench -- --only sessionize` measured (WRU, RRU and stored bytes per event at
 * the default stack's batches) and to the model's assumptions below. Every price and assumption is
 * sourced in `docs/cost.md`; this file only does the arithmetic, so the table there is reproducible:
 *
 *     node bin/run-ts.js bench/cost-model.ts bench/results/<run>.json
 */

const GB = 2 ** 30;
const MONTH_HOURS = 730;

/** List prices, USD (`docs/cost.md`, "Prices used"). */
export const PRICES = {
  apiPerMillion: 1.0,
  lambdaRequestPerMillion: 0.2,
  lambdaGbSecond: 0.0000133334,
  kinesisShardHour: 0.015,
  kinesisPutUnitPerMillion: 0.014,
  kinesisOnDemandStreamHour: 0.04,
  kinesisOnDemandInPerGb: 0.08,
  kinesisOnDemandOutPerGb: 0.04,
  firehoseIngestPerGb: 0.029,
  firehoseConversionPerGb: 0.018,
  firehosePartitioningPerGb: 0.02,
  firehoseObjectsPerThousand: 0.005,
  firehoseJqHour: 0.07,
  s3GbMonth: 0.023,
  s3PutPerThousand: 0.005,
  wruPerMillion: 0.625,
  rruPerMillion: 0.125,
  dynamoGbMonth: 0.25,
  /** Standard-IA table class: storage per GB-month, and its request prices as a multiple of Standard's. */
  dynamoIaGbMonth: 0.1,
  dynamoIaRequestFactor: 1.25,
  pitrGbMonth: 0.2,
  logsIngestPerGb: 0.5,
  logsStoredGbMonth: 0.03,
  metricMonth: 0.3,
  alarmMetricMonth: 0.1,
  tracePerMillion: 5.0,
  kmsKeyMonth: 1.0,
} as const;

/** The model's assumptions (`docs/cost.md`, "Assumptions"). */
export const ASSUMPTIONS = {
  /**
   * Requests through API Gateway, which no longer carries the hot path (events and script loads
   * go to the function URLs, billed as Lambda invocations only): the dashboard, a month of five
   * people opening it 50 times a day at about 20 requests a load (150,000), plus payment
   * webhooks, about 4 provider deliveries per payment at one payment per ~200 events.
   */
  apiRequestsPerMonth: 150_000,
  apiRequestsPerEvent: 4 / 200,
  /** Share of events that also fetch `/v.js` (cached a day by the browser). */
  scriptLoadsPerEvent: 0.1,
  /** Firehose bills every record in 5 KB increments (ingestion and format conversion). */
  firehoseRecordKb: 5,
  enrichedEventKb: 0.7,
  parquetBytesPerEvent: 150,
  eventFunction: { seconds: 0.025, gb: 0.5 },
  trackerFunction: { seconds: 0.005, gb: 0.25 },
  /** Sessionizer Lambda seconds per event at 1 GB. */
  sessionizeSecondsPerEvent: 0.002,
  jqSecondsPerRecord: 20e-6,
  /**
   * Bytes of CloudWatch Logs per API Gateway request: its access log line (121 B, `lib/http-api.ts`).
   * The hot path writes none: its function URLs have no access log, and a request whose events are
   * all accepted writes no function log line (no platform lines, no metric: `docs/cost.md`,
   * "Defaults"); dropped events write a `DroppedEvents` EMF line per request and reason, not
   * counted here (bots and other drops are not in the model's events).
   */
  logBytesPerApiRequest: 121,
  logStoredShare: 0.2,
  /**
   * CloudWatch alarm metrics: 9 alarms, the three 5xx rate ones (the HTTP API's and each hot-path
   * function URL's) on 2 metrics each (`lib/footfall-stack.ts`): failed batches, iterator age,
   * archive freshness, Parquet conversion failures, the partition limit, the scheduled function's errors.
   * The alarm topic (`-c alarmEmail=`) costs nothing at these volumes (SNS: first 1,000 emails a month free).
   */
  alarmMetrics: 12,
  monthsOfData: 12,
} as const;

/** Active sites by traffic level: each sends events in every Firehose buffer, so one S3 object per site per buffer. */
const SITES: Record<number, number> = { 1_000_000: 5, 10_000_000: 50, 100_000_000: 200 };

/**
 * Custom metrics the stack emits (EMF, each metric × dimension set billed as one metric):
 * `CUSTOM_METRICS` of `lambdas/observability/telemetry.ts`, each with the `service` dimension
 * only. Counted as if each had data every hour of the month (an upper bound: `MalformedRecords`
 * has none in a healthy stack).
 */
export const CUSTOM_METRIC_COUNT = Object.keys(CUSTOM_METRICS).length;

/** What the model needs from a bench run, per traffic level. */
export interface Measured {
  eventsPerMonth: number;
  batch: number;
  wru: number;
  rru: number;
  /** DynamoDB billed bytes stored per event (items kept per event plus a month's rollups over its events). */
  storedBytesPerEvent: number;
}

/**
 * Requests a month that an actively traced function records: Lambda's fixed sampling rule, the first
 * request each second and 5% of the rest (AWS X-Ray developer guide, "Sampling rules"), counted as if
 * the requests were spread evenly over the month.
 */
function sampledPerSecond(requests: number): number {
  const seconds = 30 * 24 * 3600;
  return Math.min(requests, seconds) + 0.05 * Math.max(0, requests - seconds);
}

const levelOf = (name: string): number | null => {
  const m = / at ([\d.]+)M events\/month/.exec(name);
  return m ? Number(m[1]) * 1e6 : null;
};

/** The default stack's rows and the stored bytes of a `--only sessionize` run, by traffic level. */
export function measuredFrom(figures: readonly Figure[]): Measured[] {
  const out = new Map<number, Partial<Measured>>();
  for (const f of figures) {
    const level = levelOf(f.name);
    if (level === null) continue;
    const m = out.get(level) ?? { eventsPerMonth: level };
    out.set(level, m);
    const batch = /^default stack, batch (\d+) /.exec(f.name);
    if (batch && f.name.endsWith(': WRU per 1,000 events')) Object.assign(m, { batch: Number(batch[1]), wru: f.value });
    if (batch && f.name.endsWith(': RRU per 1,000 events')) m.rru = f.value;
    if (f.name.startsWith('stored at ') && f.name.endsWith(': all per event')) m.storedBytesPerEvent = f.value;
  }
  const schema = z.object({
    eventsPerMonth: z.number(),
    batch: z.number(),
    wru: z.number(),
    rru: z.number(),
    storedBytesPerEvent: z.number(),
  });
  return [...out.values()].map((m) => schema.parse(m)).sort((a, b) => a.eventsPerMonth - b.eventsPerMonth);
}

/** One line of the monthly bill: name and USD. */
export type Line = [string, number];

/** The table class that is not the default, and the classes' names. */
const OTHER_TABLE_CLASS = { standard: 'standard-ia', 'standard-ia': 'standard' } as const satisfies Record<
  FootfallConfig['tableClass'],
  FootfallConfig['tableClass']
>;
const TABLE_CLASS_NAMES = { standard: 'Standard', 'standard-ia': 'Standard-IA' } as const satisfies Record<
  FootfallConfig['tableClass'],
  string
>;

/** DynamoDB's request and storage prices of a table class (`-c tableClass`). */
function dynamoPrices(tableClass: FootfallConfig['tableClass']): { wru: number; rru: number; gbMonth: number } {
  const P = PRICES;
  return tableClass === 'standard'
    ? { wru: P.wruPerMillion, rru: P.rruPerMillion, gbMonth: P.dynamoGbMonth }
    : {
        wru: P.wruPerMillion * P.dynamoIaRequestFactor,
        rru: P.rruPerMillion * P.dynamoIaRequestFactor,
        gbMonth: P.dynamoIaGbMonth,
      };
}

/**
 * The monthly bill of the default stack (1 provisioned shard, PITR on, no hot-path tracing, the
 * default table class of `lib/config.ts` unless `tableClass` says otherwise) at one traffic level.
 * Events and script loads reach Lambda through function URLs: Lambda's request and duration
 * lines count them, and nothing else does (a URL adds no charge of its own).
 */
export function monthlyBill(
  m: Measured,
  tableClass: FootfallConfig['tableClass'] = CONFIG_DEFAULTS.tableClass,
): Line[] {
  const P = PRICES;
  const D = dynamoPrices(tableClass);
  const A = ASSUMPTIONS;
  const E = m.eventsPerMonth;
  const M = 1e6;
  const sessionizeInvocations = E / m.batch;
  const scheduledInvocations = (30 * 24 * 60) / (FUNCTIONS.scheduled.everyMinutes ?? 5);
  const objects = (SITES[E] ?? 1) * ((30 * 24 * 3600) / FIREHOSE_BUFFER_INTERVAL.toSeconds());
  const storedGb = (A.monthsOfData * E * m.storedBytesPerEvent) / GB;
  const apiRequests = A.apiRequestsPerMonth + A.apiRequestsPerEvent * E;
  const logGb = (apiRequests * A.logBytesPerApiRequest) / GB;
  return [
    ['API Gateway HTTP API requests (dashboard, API, webhooks)', (apiRequests / M) * P.apiPerMillion],
    [
      'Lambda requests',
      ((E + A.scriptLoadsPerEvent * E + sessionizeInvocations + scheduledInvocations) / M) * P.lambdaRequestPerMillion,
    ],
    [
      'Lambda duration (arm64)',
      (E * A.eventFunction.seconds * A.eventFunction.gb +
        A.scriptLoadsPerEvent * E * A.trackerFunction.seconds * A.trackerFunction.gb +
        E * A.sessionizeSecondsPerEvent) *
        P.lambdaGbSecond,
    ],
    ['Kinesis, 1 provisioned shard', MONTH_HOURS * P.kinesisShardHour + (E / M) * P.kinesisPutUnitPerMillion],
    [
      'Firehose ingestion and Parquet conversion',
      ((E * A.firehoseRecordKb * 1024) / GB) * (P.firehoseIngestPerGb + P.firehoseConversionPerGb),
    ],
    [
      'Firehose dynamic partitioning',
      ((E * A.enrichedEventKb * 1024) / GB) * P.firehosePartitioningPerGb +
        (objects / 1000) * P.firehoseObjectsPerThousand +
        ((E * A.jqSecondsPerRecord) / 3600) * P.firehoseJqHour,
    ],
    [
      'S3 storage (month 12) and PUTs',
      ((A.monthsOfData * E * A.parquetBytesPerEvent) / GB) * P.s3GbMonth + (objects / 1000) * P.s3PutPerThousand,
    ],
    ['DynamoDB writes (measured)', ((E * m.wru) / 1000 / M) * D.wru],
    ['DynamoDB reads (measured)', ((E * m.rru) / 1000 / M) * D.rru],
    ['DynamoDB storage (measured, month 12)', storedGb * D.gbMonth],
    ['DynamoDB point-in-time recovery (month 12)', storedGb * P.pitrGbMonth],
    ['CloudWatch Logs', logGb * P.logsIngestPerGb + logGb * A.logStoredShare * P.logsStoredGbMonth],
    ['CloudWatch custom metrics and alarms', CUSTOM_METRIC_COUNT * P.metricMonth + A.alarmMetrics * P.alarmMetricMonth],
    // The report, app and webhook functions trace actively: Lambda's rule samples the first request each
    // second and 5% of the rest, so at these rates nearly every API request is traced.
    [
      'X-Ray traces (sessionizer batches, scheduled runs, API and webhook requests)',
      ((sessionizeInvocations + scheduledInvocations + sampledPerSecond(apiRequests)) / M) * P.tracePerMillion,
    ],
    ['KMS key of webhook secrets', P.kmsKeyMonth],
  ];
}

/**
 * What the other settings would change, USD a month (added to the total): on-demand Kinesis
 * (stream hours and data in and out, two consumers; at the 1-shard DynamoDB figures, a lower
 * bound since on-demand splits batches), X-Ray on the hot path (`-c hotPathTracing=true`: the first
 * request each second and 5% of the rest, per hot-path function), and PITR off.
 */
export function alternatives(m: Measured): Line[] {
  const P = PRICES;
  const A = ASSUMPTIONS;
  const E = m.eventsPerMonth;
  const sampled = sampledPerSecond;
  const onDemand =
    MONTH_HOURS * P.kinesisOnDemandStreamHour +
    ((E * 1024) / GB) * (P.kinesisOnDemandInPerGb + 2 * P.kinesisOnDemandOutPerGb);
  const provisioned = MONTH_HOURS * P.kinesisShardHour + (E / 1e6) * P.kinesisPutUnitPerMillion;
  const total = (bill: Line[]) => bill.reduce((sum, [, usd]) => sum + usd, 0);
  const pitr = monthlyBill(m).find(([name]) => name.startsWith('DynamoDB point-in-time'))?.[1] ?? 0;
  const other = OTHER_TABLE_CLASS[CONFIG_DEFAULTS.tableClass];
  return [
    [
      `*${TABLE_CLASS_NAMES[other]} table class instead (\`-c tableClass=${other}\`), month 12*`,
      total(monthlyBill(m, other)) - total(monthlyBill(m)),
    ],
    ['*on-demand Kinesis instead of 1 shard (`-c shards=on-demand`)*', onDemand - provisioned],
    [
      '*X-Ray on the hot path (`-c hotPathTracing=true`)*',
      ((sampled(E) + sampled(A.scriptLoadsPerEvent * E)) / 1e6) * P.tracePerMillion,
    ],
    ['*without point-in-time recovery (`-c pointInTimeRecovery=false`)*', -pitr],
  ];
}

/**
 * From how many months of stored data on the Standard-IA table class costs less a month than
 * Standard at one traffic level: its dearer requests (`dynamoIaRequestFactor`) against its cheaper
 * storage, which grows by a month of data every month. PITR is billed the same in both classes.
 */
export function tableClassBreakEvenMonths(m: Measured): number {
  const P = PRICES;
  const requests =
    ((m.eventsPerMonth * m.wru) / 1000 / 1e6) * P.wruPerMillion +
    ((m.eventsPerMonth * m.rru) / 1000 / 1e6) * P.rruPerMillion;
  const storageSavedPerMonthOfData =
    ((m.eventsPerMonth * m.storedBytesPerEvent) / GB) * (P.dynamoGbMonth - P.dynamoIaGbMonth);
  return (requests * (P.dynamoIaRequestFactor - 1)) / storageSavedPerMonthOfData;
}

/** The bill as a markdown table, one column per traffic level, then the alternatives' differences. */
export function billTable(levels: readonly Measured[]): string {
  const bills = levels.map((l) => monthlyBill(l));
  const usd = (n: number) => n.toFixed(2);
  const head = `| Line | ${levels.map((l) => `${l.eventsPerMonth / 1e6}M events`).join(' | ')} |`;
  const rows = (bills[0] ?? []).map(
    ([name], i) => `| ${name} | ${bills.map((b) => usd(b[i]?.[1] ?? 0)).join(' | ')} |`,
  );
  const totals = `| **Total (default stack)** | ${bills.map((b) => `**${usd(b.reduce((s, [, v]) => s + v, 0))}**`).join(' | ')} |`;
  const other = levels.map(alternatives);
  const deltas = (other[0] ?? []).map(
    ([name], i) =>
      `| ${name} | ${other.map((o) => `*${(o[i]?.[1] ?? 0) >= 0 ? '+' : '−'}${usd(Math.abs(o[i]?.[1] ?? 0))}*`).join(' | ')} |`,
  );
  return [head, `|---|${levels.map(() => '---:').join('|')}|`, ...rows, totals, ...deltas].join('\n');
}

if (process.argv[1]?.endsWith('cost-model.ts')) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node bin/run-ts.js bench/cost-model.ts <bench/results/….json>\n');
    process.exit(2);
  }
  const { figures } = z
    .object({
      figures: z.array(z.object({ name: z.string(), value: z.number(), unit: z.string(), section: z.string() })),
    })
    .parse(JSON.parse(readFileSync(file, 'utf8')));
  const levels = measuredFrom(figures);
  console.log(billTable(levels));
  console.log(
    `\nStandard-IA costs less than Standard from ${levels.map((l) => `${tableClassBreakEvenMonths(l).toFixed(1)} months of data at ${l.eventsPerMonth / 1e6}M`).join(', ')}.`,
  );
}
