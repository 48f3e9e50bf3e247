import * as z from 'zod';
import { FUNCTIONS, type FunctionSpec } from '../lib/functions.js';
import { CUSTOM_METRICS } from '../lambdas/observability/telemetry.js';
import { own } from '../lambdas/domain/dict.js';
import { OPERATIONS_EVERY_MS } from '../lambdas/services/operations.js';
import { LOOK_ACTIVE_MS } from '../lambdas/services/table-looks.js';
import { PRICES, USAGE } from './cost-prices.js';
import type { StackResource } from './stack-template.js';
import type { Figure } from './report.js';

/**
 * The cost model of `docs/cost.md`: the resources of the synthesized template, each priced by its
 * CloudFormation type (`PRICED`) from AWS list prices in us-east-1 (USD, no free tier), the figures
 * `npm run bench -- --only sessionize` measured (WRU, RRU and stored bytes per event at the
 * stack's batches) and the usage of `bench/cost-prices.ts`. A type that is neither priced nor
 * listed free with its reason (`FREE`) is reported by `unpricedTypes` (a test holds it empty), so a
 * change to the stack changes the bill's lines with it. Prices and assumptions are sourced in
 * `docs/cost.md`; this file only does the arithmetic (`bench/cost.ts` prints the table).
 */

const GB = 2 ** 30;
const M = 1e6;
const P = PRICES;

/** What the model needs from a bench run, per traffic level. */
export interface Measured {
  eventsPerMonth: number;
  batch: number;
  wru: number;
  rru: number;
  /** DynamoDB billed bytes stored per event (items kept per event plus a month's rollups over its events). */
  storedBytesPerEvent: number;
  /** Hours a day each active site's reports are looked at (`USAGE.visitTableWriter.lookedHoursPerSiteDay` unless given). */
  lookedHoursPerSiteDay?: number;
}

const levelOf = (name: string): number | null => {
  const m = / at ([\d.]+)M events\/month/.exec(name);
  return m ? Math.round(Number(m[1]) * 1e6) : null;
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

/** Thrown when the template holds something the model cannot price (a function it has no usage for, a provisioned table). */
export class UnpricedResourceError extends Error {
  override readonly name = 'UnpricedResourceError';
}

type FunctionKey = keyof typeof FUNCTIONS;
const isFunctionKey = (name: string): name is FunctionKey => Object.hasOwn(FUNCTIONS, name);

const container = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);
/** The value at `path` in a resource's properties (objects by key, arrays by index), or undefined. */
const prop = (value: unknown, ...path: string[]): unknown => {
  let at = value;
  for (const key of path) {
    const parsed = container.safeParse(at);
    if (!parsed.success) return undefined;
    at = Array.isArray(parsed.data) ? parsed.data[Number(key)] : own(parsed.data, key);
  }
  return at;
};
const num = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);
/** Whether `value` (a property of another resource) points at `id`: `{Ref: id}` or `{'Fn::GetAtt': [id, …]}`. */
const refersTo = (value: unknown, id: string): boolean => JSON.stringify(value ?? null).includes(`"${id}"`);
/** A logical id without the hash CDK appends: `ArchiveDelivery3969725A` → `ArchiveDelivery`. */
const nameOf = (id: string): string => id.replace(/[0-9A-F]{8}$/, '');

/** The logical id of the function whose Powertools service name is `key`, or undefined when not deployed. */
const functionIdOf = (resources: readonly StackResource[], key: FunctionKey): string | undefined =>
  resources.find(
    (x) =>
      x.type === 'AWS::Lambda::Function' &&
      prop(x.props, 'Environment', 'Variables', 'POWERTOOLS_SERVICE_NAME') === key,
  )?.id;

const RATE = /^rate\((\d+) (minute|minutes|hour|hours)\)$/;
/** Invocations a month of function `key` by the template's `rate(…)` rules that target it. */
function ruleInvocations(resources: readonly StackResource[], key: FunctionKey): number {
  const id = functionIdOf(resources, key);
  if (id === undefined) return 0;
  return resources
    .filter((x) => x.type === 'AWS::Events::Rule' && refersTo(x.props['Targets'], id))
    .reduce((sum, x) => {
      const rate = RATE.exec(String(x.props['ScheduleExpression']));
      if (!rate) throw new UnpricedResourceError(`rule ${x.id}: schedule ${String(x.props['ScheduleExpression'])}`);
      const minutes = Number(rate[1]) * (rate[2]?.startsWith('hour') ? 60 : 1);
      return sum + USAGE.monthSeconds / 60 / minutes;
    }, 0);
}

/** The destination of a delivery stream (`ExtendedS3DestinationConfiguration`). */
const destinationOf = (r: StackResource): unknown => prop(r.props, 'ExtendedS3DestinationConfiguration');
/** Whether a function of the template writes to `id` (its environment names it: the event function's targets). */
const writtenByFunction = (resources: readonly StackResource[], id: string): boolean =>
  resources.some((x) => x.type === 'AWS::Lambda::Function' && refersTo(prop(x.props, 'Environment'), id));
/**
 * Records a month a delivery stream ingests: one a request (the tracker sends one event a request)
 * for a Direct PUT stream a function writes; the stream's records for one sourced from a stream a
 * function still writes; none for one draining a stream nothing writes any more (`-c drainStream=true`).
 */
function deliveryRecords(r: StackResource, resources: readonly StackResource[], events: number): number {
  const source = prop(r.props, 'KinesisStreamSourceConfiguration', 'KinesisStreamARN');
  if (source === undefined) return writtenByFunction(resources, r.id) ? events : 0;
  const stream = resources.find((x) => x.type === 'AWS::Kinesis::Stream' && refersTo(source, x.id));
  return stream !== undefined && writtenByFunction(resources, stream.id) ? events : 0;
}

/**
 * The S3 objects a delivery stream writes a month: one per buffer interval that received a record,
 * per active site when partitioned. Records arrive at random (Poisson), so of `slots` buffers a
 * month, `slots × (1 − e^(−records/slots))` hold at least one (`docs/ingestion.md`, "The paths, priced").
 */
function deliveryObjects(r: StackResource, resources: readonly StackResource[], events: number): number {
  const dest = destinationOf(r);
  const interval = num(prop(dest, 'BufferingHints', 'IntervalInSeconds'), 300);
  const partitioned = prop(dest, 'DynamicPartitioningConfiguration', 'Enabled') === true;
  const records = deliveryRecords(r, resources, events);
  const slots = (partitioned ? USAGE.activeSites(events) : 1) * (USAGE.monthSeconds / Math.max(interval, 1));
  return slots * (1 - Math.exp(-records / slots));
}

/** The prefixes of a bucket that notify a function (`Custom::S3BucketNotifications`), by the function's logical id. */
function notifiedPrefixes(resources: readonly StackResource[], bucketId: string): Array<[string, string]> {
  const configs = z.array(
    z
      .object({
        LambdaFunctionArn: z.unknown(),
        Filter: z
          .object({ Key: z.object({ FilterRules: z.array(z.object({ Name: z.string(), Value: z.string() })) }) })
          .optional(),
      })
      .loose(),
  );
  return resources
    .filter((x) => x.type === 'Custom::S3BucketNotifications' && refersTo(x.props['BucketName'], bucketId))
    .flatMap((x) => {
      const parsed = configs.safeParse(prop(x.props, 'NotificationConfiguration', 'LambdaFunctionConfigurations'));
      return (parsed.success ? parsed.data : []).flatMap((c) => {
        const fn = resources.find((f) => f.type === 'AWS::Lambda::Function' && refersTo(c.LambdaFunctionArn, f.id));
        const prefix = c.Filter?.Key.FilterRules.find((rule) => rule.Name.toLowerCase() === 'prefix')?.Value ?? '';
        return fn ? [[fn.id, prefix] as [string, string]] : [];
      });
    });
}

/** The deliveries into bucket `bucketId`, each with whether its objects notify a function. */
function deliveriesInto(resources: readonly StackResource[], bucketId: string) {
  const notified = notifiedPrefixes(resources, bucketId);
  return resources
    .filter(
      (x) =>
        x.type === 'AWS::KinesisFirehose::DeliveryStream' && refersTo(prop(destinationOf(x), 'BucketARN'), bucketId),
    )
    .map((x) => {
      const prefix = String(prop(destinationOf(x), 'Prefix') ?? '');
      return { r: x, prefix, notifies: notified.filter(([, p]) => prefix.startsWith(p)).map(([fn]) => fn) };
    });
}

/** Raw objects a month that S3 notifies function `fnId` of (each one invocation, one journal entry, one GET). */
function notifiedObjects(resources: readonly StackResource[], fnId: string, events: number): number {
  return resources
    .filter((x) => x.type === 'AWS::S3::Bucket')
    .flatMap((b) => deliveriesInto(resources, b.id))
    .filter((x) => x.notifies.includes(fnId))
    .reduce((sum, x) => sum + deliveryObjects(x.r, resources, events), 0);
}

/**
 * The sessionizer's invocations a month: one per raw object S3 notifies it of, one per sweep
 * (its schedule), and one per batch of a stream it consumes (`-c drainStream=true`, while a
 * function still writes the stream).
 */
function sessionizeInvocations(resources: readonly StackResource[], m: Measured): number {
  const id = functionIdOf(resources, 'sessionize');
  if (id === undefined) return 0;
  const streamBatches = resources.some(
    (x) =>
      x.type === 'AWS::Lambda::EventSourceMapping' &&
      refersTo(x.props['FunctionName'], id) &&
      resources.some(
        (s) =>
          s.type === 'AWS::Kinesis::Stream' &&
          refersTo(x.props['EventSourceArn'], s.id) &&
          writtenByFunction(resources, s.id),
      ),
  );
  return (
    notifiedObjects(resources, id, m.eventsPerMonth) +
    ruleInvocations(resources, 'sessionize') +
    (streamBatches ? m.eventsPerMonth / m.batch : 0)
  );
}

/** What a month of use asks of the stack at one traffic level (`USAGE`, `docs/cost.md` "Assumptions"). */
interface Demand {
  m: Measured;
  events: number;
  dashboardLoads: number;
  invocations: Readonly<Record<FunctionKey, number>>;
  /** Raw objects S3 notifies the sessionizer of, and its sweeps (each journals and reads; `docs/ingestion.md`). */
  rawObjects: number;
  sweeps: number;
}

function demandOf(m: Measured, resources: readonly StackResource[]): Demand {
  const U = USAGE;
  const E = m.eventsPerMonth;
  const perMillion = (rate: number, floor: number) => Math.max(floor, (E / M) * rate);
  const dashboardLoads = perMillion(U.dashboardLoadsPerMillion, U.dashboardLoadsMin);
  const sessionizer = functionIdOf(resources, 'sessionize');
  return {
    m,
    events: E,
    dashboardLoads,
    rawObjects: sessionizer === undefined ? 0 : notifiedObjects(resources, sessionizer, E),
    sweeps: ruleInvocations(resources, 'sessionize'),
    invocations: {
      event: E,
      tracker: U.scriptLoadsPerEvent * E,
      health: U.healthChecks,
      sessionize: sessionizeInvocations(resources, m),
      report: dashboardLoads * U.reportCallsPerLoad + perMillion(U.apiCallsPerMillion, U.apiCallsMin),
      mcp: perMillion(U.mcpCallsPerMillion, U.mcpCallsMin),
      webhook: perMillion(U.webhooksPerMillion, U.webhooksMin),
      app: dashboardLoads,
      scheduled: ruleInvocations(resources, 'scheduled'),
      operations: ruleInvocations(resources, 'operations'),
      // A one-off, begun in the app: priced per import in docs/cost.md, not in a month's bill.
      imports: 0,
      // Priced only where the template has the function (`-c filteredReports=true`).
      filtered:
        U.filteredCallShare *
        (dashboardLoads * U.reportCallsPerLoad +
          perMillion(U.apiCallsPerMillion, U.apiCallsMin) +
          perMillion(U.mcpCallsPerMillion, U.mcpCallsMin)),
    },
  };
}

/** The template as the pricers see it: every resource by logical id, and the demand. */
interface Context {
  d: Demand;
  resources: readonly StackResource[];
}

type Pricer = (r: StackResource, ctx: Context) => Line[];

/** Requests a month that an actively traced function records: Lambda's fixed rule, the first each second and 5% of the rest (X-Ray developer guide, "Sampling rules"), spread evenly over the month. */
export function sampledTraces(requests: number): number {
  const seconds = USAGE.monthSeconds;
  return Math.min(requests, seconds) + 0.05 * Math.max(0, requests - seconds);
}

/** The function key of a Lambda resource (`POWERTOOLS_SERVICE_NAME`), or null for a deploy-time custom resource handler. */
function functionKeyOf(r: StackResource, ctx: Context): FunctionKey | null {
  const service = prop(r.props, 'Environment', 'Variables', 'POWERTOOLS_SERVICE_NAME');
  if (typeof service === 'string') {
    if (isFunctionKey(service)) return service;
    throw new UnpricedResourceError(`function ${r.id} (${service}) has no usage in bench/cost-model.ts`);
  }
  const handlerOf = ctx.resources.some(
    (other) =>
      (other.type.startsWith('Custom::') || other.type === 'AWS::CloudFormation::CustomResource') &&
      refersTo(other.props['ServiceToken'], r.id),
  );
  if (handlerOf) return null;
  throw new UnpricedResourceError(`function ${r.id} is neither a Footfall function nor a custom resource handler`);
}

/**
 * Seconds of one invocation of a function at `mib` MB: `USAGE.secondsPerInvocation` (taken at
 * `secondsMeasuredAtMb`), with its measured CPU part (`cpuSecondsPerInvocation`, at one vCPU)
 * rescaled to the vCPU share `mib` gets; the rest is waiting on round trips, which memory does not change.
 */
export function secondsAt(key: Exclude<FunctionKey, 'sessionize'>, mib: number): number {
  const U = USAGE;
  const cpu = own<number>(U.cpuSecondsPerInvocation, key) ?? 0;
  const share = (mb: number) => Math.min(1, mb / U.vcpuMb);
  return U.secondsPerInvocation[key] - cpu / share(U.secondsMeasuredAtMb) + cpu / share(mib);
}

/** Whether a function is the visit table's writer in this template (`-c filteredReports`, lib/visit-table.ts). */
const writesVisitTable = (r: StackResource, key: FunctionKey) =>
  key === 'operations' && prop(r.props, 'Environment', 'Variables', 'VISIT_TABLE_BUCKET') !== undefined;

/** Whether a function waits for the filtered function in this template (a report or MCP function with `FILTERED_FUNCTION`). */
const waitsOnFiltered = (r: StackResource) =>
  prop(r.props, 'Environment', 'Variables', 'FILTERED_FUNCTION') !== undefined;

/** Days in the model's month. */
const MONTH_DAYS = USAGE.monthSeconds / 86_400;

/**
 * A site's table refreshes a day when it is looked at `hours` hours a day in one sitting (`USAGE.visitTableWriter`):
 * the daily run, and with a look the refresh it asks for and every run while the last look is under an hour old.
 */
export function refreshesPerSiteDay(hours: number): number {
  if (hours <= 0) return 1;
  const runsPerHour = 3_600_000 / OPERATIONS_EVERY_MS;
  return Math.min(1 + 1 + runsPerHour * (hours + LOOK_ACTIVE_MS / 3_600_000), 86_400_000 / OPERATIONS_EVERY_MS);
}

/** Refreshes a day on a cold instance: the daily run, the sitting's first, and one every two hours of the sitting after. */
export function coldRefreshesPerSiteDay(hours: number): number {
  return hours <= 0 ? 1 : 1 + Math.ceil((hours + LOOK_ACTIVE_MS / 3_600_000) / 2);
}

/** The looked-at hours a day priced at a level: its own, else the usage assumption. */
const lookedHours = (d: Demand) => d.m.lookedHoursPerSiteDay ?? USAGE.visitTableWriter.lookedHoursPerSiteDay;

/** The visit table writer's refreshes a month at a traffic level: per active site, busy and idle (`USAGE.visitTableWriter`). */
function visitTableRuns(d: Demand) {
  const W = USAGE.visitTableWriter;
  const sites = USAGE.activeSites(d.events);
  const perSite = d.events / sites;
  const busyShare = 1 - Math.exp(-perSite / W.archiveObjectsPerSiteMonth);
  const hours = lookedHours(d);
  const siteRuns = Math.min(d.invocations.operations, MONTH_DAYS * refreshesPerSiteDay(hours)) * sites;
  const coldRuns = Math.min(siteRuns, MONTH_DAYS * coldRefreshesPerSiteDay(hours) * sites);
  return { sites, perSite, siteRuns, coldRuns, busy: siteRuns * busyShare, idle: siteRuns * (1 - busyShare) };
}

/** Seconds a month the operations runs spend writing the visit table: busy and idle runs, and cold instances' copies. */
function visitTableWriterSeconds(d: Demand): number {
  const W = USAGE.visitTableWriter;
  const runs = visitTableRuns(d);
  const busy = W.busySeconds.base + W.busySeconds.perMonthlyEvent * runs.perSite;
  const cold = W.coldExtraSeconds.base + W.coldExtraSeconds.perMonthlyEvent * runs.perSite;
  return runs.busy * busy + runs.idle * W.idleSeconds + runs.siteRuns * W.requestSeconds + runs.coldRuns * cold;
}

/**
 * The visit table's writer besides its Lambda seconds (`docs/cost.md`, "Filtered reports"): per run and active
 * site the LISTs of the table's families and of the open days' objects, a busy run's GET and puts, cold
 * instances' GETs, once a day the listing of the site's archive for changed days; and the table's storage
 * (month 12). No Athena query: the open days are read from the archive's objects.
 */
function visitTableLines(d: Demand): Line[] {
  const W = USAGE.visitTableWriter;
  const runs = visitTableRuns(d);
  // The archive is listed for changed days once a day (`CHANGES_EVERY_MS_IN_AWS`, a day less a run), not every run.
  const listings = Math.min(runs.siteRuns, MONTH_DAYS * runs.sites);
  const archiveLists = Math.ceil((W.archiveObjectsPerSiteMonth * USAGE.monthsOfData) / 1000);
  const gets = runs.busy + runs.coldRuns * W.objectsPerColdRun;
  const lookWru = runs.sites * MONTH_DAYS * lookedHours(d) * W.lookWritesPerLookedHour;
  const lookRru = d.invocations.operations * W.lookRruPerRun;
  return [
    [
      'DynamoDB: looks at sites (LOOK items: the report and MCP functions write, each operations run reads)',
      (lookWru / M) * P.wruPerMillion + (lookRru / M) * P.rruPerMillion,
    ],
    [
      'S3: the visit table (requests and storage, month 12)',
      ((runs.siteRuns * W.listsPerRun + listings * archiveLists) / 1000) * P.s3ListPerThousand +
        ((runs.busy * W.putsPerBusyRun) / 1000) * P.s3PutPerThousand +
        (gets / 1000) * P.s3GetPerThousand +
        ((d.events * USAGE.monthsOfData * USAGE.visitTableBytesPerEvent) / GB) * P.s3GbMonth,
    ],
  ];
}

const priceLambda: Pricer = (r, ctx) => {
  const key = functionKeyOf(r, ctx);
  if (key === null) return [['Lambda, custom resource handlers (run at deploy only)', 0]];
  const U = USAGE;
  const invocations = ctx.d.invocations[key];
  const mib = num(r.props['MemorySize'], 128);
  const arch = prop(r.props, 'Architectures', '0') === 'arm64' ? 'arm64' : 'x86_64';
  const seconds =
    key === 'sessionize'
      ? ctx.d.events * U.sessionizeSecondsPerEvent +
        invocations * U.sessionizeSecondsPerInvocation +
        ctx.d.rawObjects * U.archiveForwardSecondsPerObject
      : invocations * secondsAt(key, mib) +
        (writesVisitTable(r, key) ? visitTableWriterSeconds(ctx.d) : 0) +
        (waitsOnFiltered(r) ? invocations * U.filteredCallShare * U.secondsPerInvocation.filtered : 0);
  const spec: FunctionSpec = FUNCTIONS[key];
  // Platform lines (START, END, REPORT) are INFO: a system log level of WARN drops them, and the hot path writes no line for an accepted event.
  const quiet = prop(r.props, 'LoggingConfig', 'SystemLogLevel') === 'WARN' && spec.hotPath;
  const logGb = quiet ? 0 : (invocations * U.logBytesPerInvocation) / GB;
  const responseBytes = own<number>(U.responseBytes, key) ?? 0;
  const servedOutside = spec.url !== undefined || spec.routes !== undefined;
  return [
    ...(writesVisitTable(r, key) ? visitTableLines(ctx.d) : []),
    [
      `Lambda \`${key}\` (requests, ${mib} MB ${arch})`,
      (invocations / M) * P.lambdaRequestPerMillion + seconds * (mib / 1024) * P.lambdaGbSecond[arch],
    ],
    [
      'X-Ray traces (actively traced functions)',
      prop(r.props, 'TracingConfig', 'Mode') === 'Active' ? (sampledTraces(invocations) / M) * P.tracePerMillion : 0,
    ],
    [
      'CloudWatch Logs (function lines, ingestion and storage)',
      logGb * (P.logsIngestPerGb + U.logStoredShare * P.logsStoredGbMonth),
    ],
    [
      'Data transfer out (function URL and API responses)',
      servedOutside ? ((invocations * responseBytes) / GB) * P.transferOutGb : 0,
    ],
  ];
};

/** DynamoDB's request and storage prices of a table class (`TableClass` of the template). */
function dynamoPrices(tableClass: unknown): { wru: number; rru: number; gbMonth: number } {
  return tableClass === 'STANDARD_INFREQUENT_ACCESS'
    ? {
        wru: P.wruPerMillion * P.dynamoIaRequestFactor,
        rru: P.rruPerMillion * P.dynamoIaRequestFactor,
        gbMonth: P.dynamoIaGbMonth,
      }
    : { wru: P.wruPerMillion, rru: P.rruPerMillion, gbMonth: P.dynamoGbMonth };
}

const priceTable: Pricer = (r, { d, resources }) => {
  if (r.props['BillingMode'] !== 'PAY_PER_REQUEST')
    throw new UnpricedResourceError(`table ${r.id} is not on-demand (PAY_PER_REQUEST)`);
  const U = USAGE;
  const D = dynamoPrices(r.props['TableClass']);
  const deployed = (key: FunctionKey) =>
    resources.some(
      (x) =>
        x.type === 'AWS::Lambda::Function' &&
        prop(x.props, 'Environment', 'Variables', 'POWERTOOLS_SERVICE_NAME') === key,
    )
      ? d.invocations[key]
      : 0;
  const otherWru = deployed('webhook') * U.wruPerWebhook + deployed('app') * U.wruPerAppCall;
  const otherRru =
    (deployed('report') + deployed('mcp')) * U.rruPerReportCall +
    deployed('webhook') * U.rruPerWebhook +
    deployed('app') * U.rruPerAppCall +
    deployed('operations') * U.rruPerOperationsRun;
  const journalWru = d.rawObjects * U.journalWruPerObject;
  const objectsPerSweep = (d.rawObjects * U.sweepWindowMinutes * 60) / U.monthSeconds;
  const journalRru = d.rawObjects * U.journalRruPerObject + d.sweeps * (U.journalRruPerSweep + objectsPerSweep);
  const storedGb = (U.monthsOfData * d.events * d.m.storedBytesPerEvent) / GB;
  const pitr = prop(r.props, 'PointInTimeRecoverySpecification', 'PointInTimeRecoveryEnabled') === true;
  return [
    ['DynamoDB writes: sessionizer (measured)', ((d.events * d.m.wru) / 1000 / M) * D.wru],
    ['DynamoDB reads: sessionizer (measured)', ((d.events * d.m.rru) / 1000 / M) * D.rru],
    ['DynamoDB requests: webhooks, dashboard, API, MCP, operations', (otherWru / M) * D.wru + (otherRru / M) * D.rru],
    ['DynamoDB requests: ingest journal (raw objects and sweeps)', (journalWru / M) * D.wru + (journalRru / M) * D.rru],
    ['DynamoDB storage (measured, month 12)', storedGb * D.gbMonth],
    ['DynamoDB point-in-time recovery (month 12)', pitr ? storedGb * P.pitrGbMonth : 0],
  ];
};

const priceStream: Pricer = (r, { d, resources }) => {
  const U = USAGE;
  // While draining (`-c drainStream=true`) nothing writes the stream: it bills its hours only.
  const records = writtenByFunction(resources, r.id) ? d.events : 0;
  const onDemand = prop(r.props, 'StreamModeDetails', 'StreamMode') === 'ON_DEMAND';
  const consumers = 2;
  const usd = onDemand
    ? U.monthHours * P.kinesisOnDemandStreamHour +
      ((records * 1024) / GB) * (P.kinesisOnDemandInPerGb + consumers * P.kinesisOnDemandOutPerGb)
    : num(r.props['ShardCount'], 1) * U.monthHours * P.kinesisShardHour + (records / M) * P.kinesisPutUnitPerMillion;
  // Server-side encryption: each producer and consumer asks KMS for a data key about every 5 minutes.
  const kms = r.props['StreamEncryption'] ? U.kinesisKmsPrincipals * 12 * U.monthHours : 0;
  return [
    [
      `Kinesis \`${nameOf(r.id)}\` (${onDemand ? 'on-demand' : `${num(r.props['ShardCount'], 1)} provisioned shard`})`,
      usd,
    ],
    ['KMS requests (stream encryption, webhook secrets)', (kms / 10_000) * P.kmsRequestPer10k],
  ];
};

/**
 * KB a delivery's ingestion (and conversion) bills for `events` events a month, every record
 * rounded up to 5 KB. Without deaggregation a record is an event (the tracker posts one a request).
 * With JSON multi-record deaggregation the sessionizer puts each raw object's events (`objects` a
 * month) packed in records of at most 500 (`docs/ingestion.md`, "Archive packed"): an object of k
 * events is ⌈k/500⌉ records of k/⌈k/500⌉ events each, each rounded up to 5 KB.
 */
function billedRecordKb(dest: unknown, events: number, objects: number): number {
  const U = USAGE;
  const processors = z
    .array(z.object({ Type: z.string() }).loose())
    .safeParse(prop(dest, 'ProcessingConfiguration', 'Processors'));
  const packed = (processors.success ? processors.data : []).some((p) => p.Type === 'RecordDeAggregation');
  if (!packed || objects <= 0 || events <= objects) return events * U.firehoseRecordKb;
  const perObject = events / objects;
  const recordsPerObject = Math.ceil(perObject / U.eventsPerPackedRecord);
  const recordKb = (perObject / recordsPerObject) * U.enrichedEventKb;
  return objects * recordsPerObject * Math.ceil(recordKb / U.firehoseRecordKb) * U.firehoseRecordKb;
}

const priceDelivery: Pricer = (r, { d, resources }) => {
  const U = USAGE;
  const dest = destinationOf(r);
  const converts = prop(dest, 'DataFormatConversionConfiguration', 'Enabled') === true;
  const partitioned = prop(dest, 'DynamicPartitioningConfiguration', 'Enabled') === true;
  const records = deliveryRecords(r, resources, d.events);
  const billedGb = (billedRecordKb(dest, records, d.rawObjects) * 1024) / GB;
  const name = nameOf(r.id);
  return [
    [
      `Firehose \`${name}\`: ingestion${converts ? ' and Parquet conversion' : ''}`,
      billedGb * (P.firehoseIngestPerGb + (converts ? P.firehoseConversionPerGb : 0)),
    ],
    [
      `Firehose \`${name}\`: dynamic partitioning`,
      partitioned
        ? ((records * U.enrichedEventKb * 1024) / GB) * P.firehosePartitioningPerGb +
          (deliveryObjects(r, resources, d.events) / 1000) * P.firehoseObjectsPerThousand +
          ((records * U.jqSecondsPerRecord) / 3600) * P.firehoseJqHour
        : 0,
    ],
  ];
};

/** Days until the bucket's lifecycle expires objects under `prefix` (the rule with the longest matching prefix), or Infinity. */
function expiryDays(bucket: StackResource, prefix: string): number {
  const rules = z
    .array(z.object({ ExpirationInDays: z.number().optional(), Prefix: z.string().optional() }).loose())
    .safeParse(prop(bucket.props, 'LifecycleConfiguration', 'Rules'));
  const matching = (rules.success ? rules.data : [])
    .filter((rule) => prefix.startsWith(rule.Prefix ?? ''))
    .sort((a, b) => (b.Prefix ?? '').length - (a.Prefix ?? '').length);
  return matching[0]?.ExpirationInDays ?? Infinity;
}

const priceBucket: Pricer = (r, { d, resources }) => {
  const U = USAGE;
  const monthsKept = (prefix: string) => Math.min(U.monthsOfData, expiryDays(r, prefix) / 30);
  let storedBytes = 0;
  let requests = 0;
  for (const { r: delivery, prefix, notifies } of deliveriesInto(resources, r.id)) {
    const parquet = prop(destinationOf(delivery), 'DataFormatConversionConfiguration', 'Enabled') === true;
    const records = deliveryRecords(delivery, resources, d.events);
    const objects = deliveryObjects(delivery, resources, d.events);
    storedBytes += monthsKept(prefix) * records * (parquet ? U.parquetBytesPerEvent : U.enrichedEventKb * 1024);
    // Firehose PUTs each object; a function S3 notifies GETs it once.
    requests += (objects / 1000) * (P.s3PutPerThousand + notifies.length * P.s3GetPerThousand);
  }
  // The sweep lists the raw hour prefixes of its window (`lambdas/adapters/s3-raw-objects.ts`).
  if (notifiedPrefixes(resources, r.id).length > 0)
    requests += ((d.sweeps * U.listsPerSweep) / 1000) * P.s3ListPerThousand;
  // CloudFront's standard logs (app mode) land in the access log bucket: one line per dashboard request.
  const distributions = resources.filter(
    (x) => x.type === 'AWS::CloudFront::Distribution' && refersTo(prop(x.props, 'DistributionConfig', 'Logging'), r.id),
  );
  storedBytes +=
    monthsKept('') * distributions.length * d.dashboardLoads * (1 + U.reportCallsPerLoad) * U.accessLogBytesPerRequest;
  return [[`S3 \`${nameOf(r.id)}\`: storage (month 12) and requests`, (storedBytes / GB) * P.s3GbMonth + requests]];
};

const priceKey: Pricer = (r, { d }) => [
  [`KMS key \`${nameOf(r.id)}\``, P.kmsKeyMonth],
  [
    'KMS requests (stream encryption, webhook secrets)',
    ((d.invocations.webhook * USAGE.kmsRequestsPerWebhook) / 10_000) * P.kmsRequestPer10k,
  ],
];

/** Metrics an alarm watches: one, or each `MetricStat` of its metric math. */
export function alarmMetrics(r: StackResource): number {
  if (r.props['MetricName'] !== undefined) return 1;
  const metrics = z.array(z.object({ MetricStat: z.unknown().optional() }).loose()).safeParse(r.props['Metrics']);
  return metrics.success ? metrics.data.filter((x) => x.MetricStat !== undefined).length : 0;
}

const priceAlarm: Pricer = (r) => [['CloudWatch alarm metrics', alarmMetrics(r) * P.alarmMetricMonth]];

const priceHttpApi: Pricer = (r, { d, resources }) => {
  const U = USAGE;
  const served = resources
    .filter((x) => x.type === 'AWS::Lambda::Function')
    .map((x) => prop(x.props, 'Environment', 'Variables', 'POWERTOOLS_SERVICE_NAME'))
    .filter((key): key is FunctionKey => typeof key === 'string' && isFunctionKey(key))
    .filter((key) => {
      const spec: FunctionSpec = FUNCTIONS[key];
      return spec.routes !== undefined && !spec.hotPath;
    });
  const requests = served.reduce((sum, key) => sum + d.invocations[key], 0);
  const logged = resources.some(
    (x) => x.type === 'AWS::ApiGatewayV2::Stage' && refersTo(x.props['ApiId'], r.id) && x.props['AccessLogSettings'],
  );
  const logGb = logged ? (requests * U.logBytesPerApiRequest) / GB : 0;
  return [
    [`API Gateway HTTP API requests (${served.join(', ')})`, (requests / M) * P.apiPerMillion],
    ['CloudWatch Logs (API access log)', logGb * (P.logsIngestPerGb + U.logStoredShare * P.logsStoredGbMonth)],
  ];
};

const priceQueue: Pricer = (r, { d, resources }) => {
  // A queue a function polls carries every event (send, receive, delete in batches of 10); a failure queue is empty.
  const polled = resources.some(
    (x) => x.type === 'AWS::Lambda::EventSourceMapping' && refersTo(x.props['EventSourceArn'], r.id),
  );
  return [[`SQS \`${nameOf(r.id)}\``, polled ? ((d.events * 1.2) / M) * P.sqsPerMillion : 0]];
};

const priceDistribution: Pricer = (_r, { d }) => {
  const U = USAGE;
  const requests = d.dashboardLoads * (1 + U.reportCallsPerLoad);
  return [
    [
      'CloudFront (the app: requests and transfer)',
      (requests / 10_000) * P.cloudFrontRequestPer10k +
        ((d.dashboardLoads * U.dashboardBytesPerLoad) / GB) * P.cloudFrontGb,
    ],
  ];
};

const priceCloudFrontFunction: Pricer = (_r, { d }) => [
  [
    'CloudFront (the app: requests and transfer)',
    ((d.dashboardLoads * USAGE.cloudFrontFunctionCallsPerLoad) / M) * P.cloudFrontFunctionPerMillion,
  ],
];

const priceSchedule: Pricer = (_r, { d }) => [
  ['EventBridge Scheduler', (d.invocations.scheduled / M) * P.schedulerPerMillion],
];

/** Billable CloudFormation types and how each is priced. */
export const PRICED: ReadonlyMap<string, Pricer> = new Map([
  ['AWS::Lambda::Function', priceLambda],
  ['AWS::DynamoDB::Table', priceTable],
  ['AWS::Kinesis::Stream', priceStream],
  ['AWS::KinesisFirehose::DeliveryStream', priceDelivery],
  ['AWS::S3::Bucket', priceBucket],
  ['AWS::KMS::Key', priceKey],
  ['AWS::CloudWatch::Alarm', priceAlarm],
  ['AWS::ApiGatewayV2::Api', priceHttpApi],
  ['AWS::SQS::Queue', priceQueue],
  ['AWS::CloudFront::Distribution', priceDistribution],
  ['AWS::CloudFront::Function', priceCloudFrontFunction],
  ['AWS::Scheduler::Schedule', priceSchedule],
]);

/** Types that bill nothing by themselves, and why (`docs/cost.md`, "Not in the totals"). */
export const FREE: ReadonlyMap<string, string> = new Map([
  ['AWS::IAM::Role', 'IAM is free'],
  ['AWS::IAM::Policy', 'IAM is free'],
  ['AWS::IAM::ManagedPolicy', 'IAM is free'],
  ['AWS::Lambda::Permission', 'a resource policy statement'],
  ['AWS::Lambda::Url', "billed as its function's invocations (priced there with its responses' transfer)"],
  [
    'AWS::Lambda::EventSourceMapping',
    'Kinesis and S3 triggers bill nothing of their own; an SQS one is priced on its queue',
  ],
  ['AWS::Lambda::LayerVersion', "stored within Lambda's 75 GB code storage at no charge"],
  ['AWS::Lambda::EventInvokeConfig', 'configuration'],
  ['AWS::Logs::LogGroup', 'billed by the bytes written to it, priced on the function or API that writes them'],
  ['AWS::Logs::LogStream', 'as its log group'],
  ['AWS::S3::BucketPolicy', 'configuration'],
  ['AWS::SQS::QueuePolicy', 'configuration'],
  ['AWS::Glue::Database', 'within the Data Catalog’s free million objects'],
  ['AWS::Glue::Table', 'within the Data Catalog’s free million objects'],
  ['AWS::Athena::WorkGroup', 'Athena bills the bytes a query scans, outside the monthly bill ($5 per TB)'],
  ['AWS::Athena::NamedQuery', 'a saved query'],
  ['AWS::ApiGatewayV2::Stage', 'billed as its API’s requests'],
  ['AWS::ApiGatewayV2::Integration', 'billed as its API’s requests'],
  ['AWS::ApiGatewayV2::Route', 'billed as its API’s requests'],
  ['AWS::Events::Rule', 'scheduled rules are free'],
  ['AWS::SNS::Topic', 'alarm notifications: the first 1,000 emails a month are free'],
  ['AWS::SNS::Subscription', 'as its topic'],
  ['AWS::SSM::Parameter', 'standard parameters and their standard-throughput reads are free'],
  ['AWS::CloudFront::OriginAccessControl', 'configuration'],
  ['AWS::CloudFront::ResponseHeadersPolicy', 'configuration'],
  ['AWS::CloudFront::OriginRequestPolicy', 'configuration'],
  ['AWS::CloudFront::CachePolicy', 'configuration'],
  ['AWS::S3::BucketNotifications', 'configuration'],
  ['Custom::S3BucketNotifications', 'runs its handler at deploy only'],
  ['Custom::S3AutoDeleteObjects', 'runs its handler at deploy only'],
  ['Custom::CDKBucketDeployment', 'runs its handler at deploy only'],
  ['AWS::CDK::Metadata', 'template metadata'],
]);

/** Template types the model neither prices nor lists as free: each is a line missing from the bill. */
export function unpricedTypes(resources: readonly StackResource[]): string[] {
  return [...new Set(resources.map((r) => r.type))].filter((t) => !PRICED.has(t) && !FREE.has(t)).sort();
}

/** The order of the bill's lines, by the service their name starts with (a stable sort keeps the template's order within one). */
const SERVICE_ORDER = [
  'Lambda',
  'Athena',
  'API Gateway',
  'Kinesis',
  'Firehose',
  'SQS',
  'S3',
  'DynamoDB',
  'CloudWatch',
  'X-Ray',
  'KMS',
  'CloudFront',
  'EventBridge',
  'Data transfer',
];

/**
 * The custom metrics the functions emit (EMF, `CUSTOM_METRICS` of `lambdas/observability/telemetry.ts`),
 * one billed metric each, prorated by the share of hours it has data (`USAGE.customMetricHours`).
 * @throws UnpricedResourceError for a metric the usage does not say how often it has data
 */
export function customMetricsUsd(): number {
  return Object.values(CUSTOM_METRICS).reduce((sum, name) => {
    const share = own<number>(USAGE.customMetricHours, name);
    if (share === undefined)
      throw new UnpricedResourceError(`custom metric ${name} has no hours in USAGE.customMetricHours`);
    return sum + share * P.metricMonth;
  }, 0);
}

/**
 * The monthly bill of the stack `resources` at one traffic level: every resource's lines by type,
 * lines of the same name summed, in the order they first appear, then the custom metrics.
 * @throws UnpricedResourceError when a type is not in `PRICED` or `FREE`, or a resource cannot be priced
 */
export function stackBill(resources: readonly StackResource[], m: Measured): Line[] {
  const missing = unpricedTypes(resources);
  if (missing.length > 0) throw new UnpricedResourceError(`the cost model prices no ${missing.join(', ')}`);
  const ctx: Context = { d: demandOf(m, resources), resources };
  const lines = new Map<string, number>();
  for (const r of resources) {
    for (const [name, usd] of PRICED.get(r.type)?.(r, ctx) ?? []) lines.set(name, (lines.get(name) ?? 0) + usd);
  }
  lines.set('CloudWatch custom metrics (billed in the hours they have data)', customMetricsUsd());
  const rank = (name: string) => {
    const at = SERVICE_ORDER.findIndex((prefix) => name.startsWith(prefix));
    return at < 0 ? SERVICE_ORDER.length : at;
  };
  return [...lines].sort(([a], [b]) => rank(a) - rank(b));
}

/** The sum of a bill's lines, USD. */
export const totalOf = (bill: readonly Line[]): number => bill.reduce((sum, [, usd]) => sum + usd, 0);

/**
 * From how many months of stored data the Standard-IA table class costs less a month than
 * Standard at one traffic level: its dearer requests (`dynamoIaRequestFactor`) against its cheaper
 * storage, which grows by a month of data every month. PITR is billed the same in both classes.
 */
export function tableClassBreakEvenMonths(m: Measured): number {
  const requests =
    ((m.eventsPerMonth * m.wru) / 1000 / 1e6) * P.wruPerMillion +
    ((m.eventsPerMonth * m.rru) / 1000 / 1e6) * P.rruPerMillion;
  const storageSavedPerMonthOfData =
    ((m.eventsPerMonth * m.storedBytesPerEvent) / GB) * (P.dynamoGbMonth - P.dynamoIaGbMonth);
  return (requests * (P.dynamoIaRequestFactor - 1)) / storageSavedPerMonthOfData;
}
