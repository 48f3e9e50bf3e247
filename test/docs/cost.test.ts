import { beforeAll, describe, expect, it } from 'vitest';
import { ensureAppBuilt } from '../../app/build.js';
import {
  customMetricsUsd,
  UnpricedResourceError,
  alarmMetrics,
  sampledTraces,
  stackBill,
  unpricedTypes,
  type Line,
  type Measured,
} from '../../bench/cost-model.js';
import { PRICES, USAGE } from '../../bench/cost-prices.js';
import { resourcesOf, type StackResource } from '../../bench/stack-template.js';
import { stepGroup } from '../../bench/sessionize.js';
import { synth } from '../infra/synth.js';
import { SWEEP_EVERY_MINUTES } from '../../lambdas/handlers/sessionize-objects.js';

const tenM: Measured = { eventsPerMonth: 10_000_000, batch: 231, wru: 500, rru: 500, storedBytesPerEvent: 300 };
const line = (bill: readonly Line[], prefix: string) => bill.find(([name]) => name.startsWith(prefix))?.[1] ?? NaN;
const lines = (bill: readonly Line[], prefix: string) => bill.filter(([name]) => name.startsWith(prefix));

let stack: StackResource[];
let app: StackResource[];
beforeAll(async () => {
  await ensureAppBuilt();
  stack = resourcesOf(synth({ bundle: false }).template.toJSON());
  app = resourcesOf(synth({ bundle: false, config: { app: true } }).template.toJSON());
}, 600_000);

describe('the cost model prices every billable resource of the synthesized template', () => {
  it('knows every resource type of the default stack and of the stack with the dashboard', () => {
    expect(unpricedTypes(stack)).toEqual([]);
    expect(unpricedTypes(app)).toEqual([]);
  });

  it('refuses a template with a type it neither prices nor lists as free', () => {
    const withQueue = [...stack, { id: 'Cache1234ABCD', type: 'AWS::ElastiCache::CacheCluster', props: {} }];
    expect(unpricedTypes(withQueue)).toEqual(['AWS::ElastiCache::CacheCluster']);
    expect(() => stackBill(withQueue, tenM)).toThrow(UnpricedResourceError);
  });

  it('refuses a function it has no usage for', () => {
    const fn = stack.find((r) => r.type === 'AWS::Lambda::Function' && r.id.startsWith('event'))!;
    const renamed = {
      ...fn,
      props: { ...fn.props, Environment: { Variables: { POWERTOOLS_SERVICE_NAME: 'newone' } } },
    };
    expect(() => stackBill([...stack, renamed], tenM)).toThrow(/newone/);
  });

  it('prices one line per function from its memory size and architecture in the template', () => {
    const bill = stackBill(app, tenM);
    const functions = app.filter((r) => r.type === 'AWS::Lambda::Function');
    const footfall = functions.filter((r) =>
      JSON.stringify(r.props['Environment'] ?? {}).includes('POWERTOOLS_SERVICE_NAME'),
    );
    // Every Footfall function has its line; CDK's deploy-time handlers (the bucket notifications' among them) share one.
    expect(footfall.length).toBeGreaterThanOrEqual(9);
    expect(lines(bill, 'Lambda `').length).toBe(footfall.length);
    expect(functions.length).toBeGreaterThan(footfall.length);
    expect(lines(bill, 'Lambda, custom')).toEqual([['Lambda, custom resource handlers (run at deploy only)', 0]]);
    // event: 10M requests at $0.20/M at 256 MB arm64: the 25 ms taken at 512 MB, its 2 ms of CPU at one vCPU
    // rescaled from 512/1769 of a vCPU to 256/1769 (bench: ingest); the rest is waiting, whatever the memory.
    const at = (mb: number) => 0.025 - 0.002 / (512 / 1769) + 0.002 / (mb / 1769);
    expect(line(bill, 'Lambda `event` (requests, 256 MB')).toBeCloseTo(
      2 + 10e6 * at(256) * 0.25 * PRICES.lambdaGbSecond.arm64,
      10,
    );
    const doubled = app.map((r) =>
      r.type === 'AWS::Lambda::Function' && r.id.startsWith('eventFunction')
        ? { ...r, props: { ...r.props, MemorySize: 512 } }
        : r,
    );
    expect(line(stackBill(doubled, tenM), 'Lambda `event` (requests, 512 MB')).toBeCloseTo(
      2 + 10e6 * 0.025 * 0.5 * PRICES.lambdaGbSecond.arm64,
      10,
    );
  });
});

describe('the lines follow the template', () => {
  it('prices DynamoDB from the measured units and bytes: doubling WRU doubles the write line and nothing else', () => {
    const a = stackBill(stack, tenM);
    const b = stackBill(stack, { ...tenM, wru: 1000 });
    for (const [i, [name, usd]] of a.entries()) {
      if (name.startsWith('DynamoDB writes')) expect(b[i]?.[1]).toBeCloseTo(2 * usd, 10);
      else expect(b[i]?.[1], name).toBe(usd);
    }
    // 10M events × 500 WRU per 1,000 = 5M WRU at $0.625 per million, 25% more on Standard-IA (the default).
    expect(line(a, 'DynamoDB writes')).toBeCloseTo(3.90625, 10);
    const standard = stack.map((r) =>
      r.type === 'AWS::DynamoDB::Table' ? { ...r, props: { ...r.props, TableClass: 'STANDARD' } } : r,
    );
    expect(line(stackBill(standard, tenM), 'DynamoDB writes')).toBeCloseTo(3.125, 10);
  });

  it('bills point-in-time recovery only when the table has it', () => {
    expect(line(stackBill(stack, tenM), 'DynamoDB point-in-time')).toBeGreaterThan(0);
    const off = synth({ bundle: false, config: { pointInTimeRecovery: false } }).template.toJSON();
    expect(line(stackBill(resourcesOf(off), tenM), 'DynamoDB point-in-time')).toBe(0);
  }, 300_000);

  it('counts the alarm metrics of the template: one per alarm, or each metric of its math', () => {
    const alarms = stack.filter((r) => r.type === 'AWS::CloudWatch::Alarm');
    const metrics = alarms.reduce((sum, r) => sum + alarmMetrics(r), 0);
    expect(metrics).toBeGreaterThanOrEqual(alarms.length);
    expect(line(stackBill(stack, tenM), 'CloudWatch alarm metrics')).toBeCloseTo(metrics * PRICES.alarmMetricMonth, 10);
    // The one custom metric, MalformedRecords, has no data in a healthy stack; dropped events are log lines.
    expect(line(stackBill(stack, tenM), 'CloudWatch custom metrics')).toBe(0);
    expect(customMetricsUsd()).toBe(0);
  });

  it('traces only the actively traced functions, at Lambda’s sampling', () => {
    const bill = stackBill(stack, tenM);
    const traced = stackBill(
      stack.map((r) =>
        r.type === 'AWS::Lambda::Function' && r.id.startsWith('eventFunction')
          ? { ...r, props: { ...r.props, TracingConfig: { Mode: 'Active' } } }
          : r,
      ),
      tenM,
    );
    expect(line(traced, 'X-Ray') - line(bill, 'X-Ray')).toBeCloseTo(
      (sampledTraces(10e6) / 1e6) * PRICES.tracePerMillion,
      10,
    );
  });

  it('writes no log bytes for the hot path (system log level WARN), and some for the others', () => {
    const quiet = stackBill(
      stack.filter((r) => r.type !== 'AWS::Lambda::Function' || r.id.startsWith('eventFunction')),
      tenM,
    );
    expect(line(quiet, 'CloudWatch Logs (function lines')).toBe(0);
    expect(line(stackBill(stack, tenM), 'CloudWatch Logs (function lines')).toBeGreaterThan(0);
  });

  it('bills the ingest delivery per request in 5 KB increments, the archive per packed record, with conversion and partitioning', () => {
    const bill = stackBill(stack, tenM);
    const gb = (10e6 * USAGE.firehoseRecordKb * 1024) / 2 ** 30;
    // The sessionizer forwards a raw object (one a minute, 231 events) as one record of 162 KB, billed 165 KB.
    const perObject = 10e6 / ((30 * 24 * 3600) / 60);
    const packedKb = Math.ceil((perObject * USAGE.enrichedEventKb) / 5) * 5;
    expect(packedKb).toBe(165);
    const packedGb = (((30 * 24 * 3600) / 60) * packedKb * 1024) / 2 ** 30;
    expect(line(bill, 'Firehose `ArchiveDirectDelivery`: ingestion and Parquet')).toBeCloseTo(
      packedGb * (PRICES.firehoseIngestPerGb + PRICES.firehoseConversionPerGb),
      10,
    );
    // Without the deaggregation processor each event would be a record of its own, billed 5 KB.
    const unpacked = stack.map((r) =>
      r.type === 'AWS::KinesisFirehose::DeliveryStream' && r.id.startsWith('ArchiveDirectDelivery')
        ? JSON.parse(JSON.stringify(r).replace(/"RecordDeAggregation"/, '"Unpacked"'))
        : r,
    );
    expect(line(stackBill(unpacked, tenM), 'Firehose `ArchiveDirectDelivery`: ingestion and Parquet')).toBeCloseTo(
      gb * (PRICES.firehoseIngestPerGb + PRICES.firehoseConversionPerGb),
      10,
    );
    expect(line(bill, 'Firehose `ArchiveDirectDelivery`: dynamic partitioning')).toBeGreaterThan(0);
    // The ingest delivery neither converts nor partitions: JSON lines to raw/.
    expect(line(bill, 'Firehose `IngestDelivery`: ingestion')).toBeCloseTo(gb * PRICES.firehoseIngestPerGb, 10);
    expect(line(bill, 'Firehose `IngestDelivery`: ingestion and')).toBeNaN();
    expect(line(bill, 'Firehose `IngestDelivery`: dynamic partitioning')).toBe(0);
    expect(lines(bill, 'Kinesis')).toEqual([]);
  });

  // 10M events a month fill every 60 s buffer of the ingest delivery: one raw object a minute; the sweep runs every 15 minutes.
  const rawObjects = (30 * 24 * 3600) / 60;
  const sweeps = (30 * 24 * 60) / SWEEP_EVERY_MINUTES;

  it('invokes the sessionizer once per raw object and per sweep, and prices the journal of each', () => {
    const bill = stackBill(stack, tenM);
    const invocations = rawObjects + sweeps;
    expect(line(bill, 'Lambda `sessionize`')).toBeCloseTo(
      (invocations / 1e6) * PRICES.lambdaRequestPerMillion +
        (10e6 * USAGE.sessionizeSecondsPerEvent +
          invocations * USAGE.sessionizeSecondsPerInvocation +
          rawObjects * USAGE.archiveForwardSecondsPerObject) *
          PRICES.lambdaGbSecond.arm64,
      6,
    );
    const ia = PRICES.dynamoIaRequestFactor;
    expect(line(bill, 'DynamoDB requests: ingest journal')).toBeCloseTo(
      ((rawObjects * USAGE.journalWruPerObject) / 1e6) * PRICES.wruPerMillion * ia +
        ((rawObjects * USAGE.journalRruPerObject + sweeps * (USAGE.journalRruPerSweep + 3 * SWEEP_EVERY_MINUTES)) /
          1e6) *
          PRICES.rruPerMillion *
          ia,
      6,
    );
    // Without the sweep's rule, its invocations leave the bill.
    const noSweep = stackBill(
      stack.filter((r) => !(r.type === 'AWS::Events::Rule' && r.id.startsWith('sessionizeSchedule'))),
      tenM,
    );
    expect(line(bill, 'Lambda `sessionize`') - line(noSweep, 'Lambda `sessionize`')).toBeCloseTo(
      (sweeps / 1e6) * PRICES.lambdaRequestPerMillion +
        sweeps * USAGE.sessionizeSecondsPerInvocation * PRICES.lambdaGbSecond.arm64,
      8,
    );
  });

  it('bills a raw object one PUT and one GET, the archive objects a PUT, and keeps raw objects a week', () => {
    const events = stack.find((r) => r.type === 'AWS::S3::Bucket' && r.id.startsWith('ArchiveEvents'))!;
    const delivery = (name: string) =>
      stack.find((r) => r.type === 'AWS::KinesisFirehose::DeliveryStream' && r.id.startsWith(name))!;
    const bucket = (resources: StackResource[]) => line(stackBill(resources, tenM), 'S3 `ArchiveEvents`');
    const ingest = delivery('IngestDelivery');
    const archive = delivery('ArchiveDirectDelivery');
    const withoutIngest = stack.filter((r) => r !== ingest);
    // Raw objects: a PUT and the sessionizer's GET each, and 0.7 KB an event kept seven days of the month
    // (as long as the journal: the archive is fed from them).
    const raw =
      (rawObjects / 1000) * (PRICES.s3PutPerThousand + PRICES.s3GetPerThousand) +
      (((10e6 * USAGE.enrichedEventKb * 1024) / 2 ** 30) * PRICES.s3GbMonth * 7) / 30;
    expect(bucket(stack) - bucket(withoutIngest)).toBeCloseTo(raw, 6);
    // The archive: Parquet kept the model's 12 months, whatever the raw objects' seven-day rule says.
    const parquetOnly = bucket(withoutIngest);
    const noArchive = bucket(withoutIngest.filter((r) => r !== archive));
    expect(parquetOnly - noArchive).toBeGreaterThan(
      ((12 * 10e6 * USAGE.parquetBytesPerEvent) / 2 ** 30) * PRICES.s3GbMonth,
    );
    expect(events).toBeDefined();
  });

  it('prices the stream under drainStream by its hours only, since the event function no longer writes it', () => {
    const drain = resourcesOf(synth({ bundle: false, config: { drainStream: true } }).template.toJSON());
    const bill = stackBill(drain, tenM);
    expect(line(bill, 'Kinesis')).toBeCloseTo(USAGE.monthHours * PRICES.kinesisShardHour, 10);
    // The stream-sourced archive delivery drains no new record: no ingestion billed twice.
    const sourced = drain.filter(
      (r) => r.type === 'AWS::KinesisFirehose::DeliveryStream' && r.props['KinesisStreamSourceConfiguration'],
    );
    expect(sourced.length).toBe(1);
    expect(line(bill, `Firehose \`${sourced[0]!.id.replace(/[0-9A-F]{8}$/, '')}\`: ingestion`)).toBe(0);
  }, 300_000);
});

describe('sessionize cost shares', () => {
  it.each([
    ['visits.visitsAround', 'visits'],
    ['visits.writeVisits', 'visits'],
    ['rollups.compact', 'rollups'],
    ['rollups.apply', 'rollups'],
    ['recredit', 're-credit'],
    ['markers.put', 'markers and config'],
    ['sites.getSite', 'markers and config'],
    ['something.else', 'other'],
  ])('%s is counted under %s', (step, group) => {
    expect(stepGroup(step)).toBe(group);
  });
});

describe('the visit table writer with `-c filteredReports=true` (docs/cost.md, "Filtered reports")', () => {
  it('is priced without Athena, per active site: busy runs with a new archive object, idle runs, and their S3 requests', () => {
    const flagged = resourcesOf(
      synth({ bundle: false, config: { app: true, filteredReports: true } }).template.toJSON(),
    );
    const tenK: Measured = { ...tenM, eventsPerMonth: 10_000 };
    const bill = stackBill(flagged, tenK);
    expect(lines(bill, 'Athena')).toEqual([]);
    const W = USAGE.visitTableWriter;
    // One active site at 10k, looked at an hour a day: the daily run, the refresh the look asks for, and the 15-minute
    // runs of that hour and the hour after, 10 refreshes a day (not 96); busy when one of its 10,000 events a month fell
    // in the 15 minutes before. Two of them on a cold instance (the daily run, the sitting's first).
    expect(W.lookedHoursPerSiteDay).toBe(1);
    const runs = 30 * 10;
    const coldRuns = 30 * 2;
    const busy = runs * (1 - Math.exp(-10_000 / W.archiveObjectsPerSiteMonth));
    expect(busy / runs).toBeCloseTo(0.969, 3);
    const storage = ((10_000 * USAGE.monthsOfData * USAGE.visitTableBytesPerEvent) / 2 ** 30) * PRICES.s3GbMonth;
    const requests =
      ((runs * W.listsPerRun + 30 * 35) / 1000) * PRICES.s3ListPerThousand +
      ((busy * W.putsPerBusyRun) / 1000) * PRICES.s3PutPerThousand +
      ((busy + coldRuns * W.objectsPerColdRun) / 1000) * PRICES.s3GetPerThousand;
    expect(line(bill, 'S3: the visit table')).toBeCloseTo(requests + storage, 6);
    // The writer's seconds: busy and idle runs, their round trips and cold instances, at 1769 MB x86_64.
    const seconds =
      busy * (W.busySeconds.base + W.busySeconds.perMonthlyEvent * 10_000) +
      (runs - busy) * W.idleSeconds +
      runs * W.requestSeconds +
      coldRuns * (W.coldExtraSeconds.base + W.coldExtraSeconds.perMonthlyEvent * 10_000);
    // Every scheduled run still starts (2,880 a month), reads the queues and the looks, and refreshes no other site.
    const idleOperations = 2880 * USAGE.secondsPerInvocation.operations;
    expect(line(bill, 'DynamoDB: looks at sites')).toBeCloseTo(
      ((30 * 24) / 1e6) * PRICES.wruPerMillion + ((2880 * 2) / 1e6) * PRICES.rruPerMillion,
      9,
    );
    expect(line(bill, 'Lambda `operations` (requests, 1769 MB x86_64)')).toBeCloseTo(
      (2880 / 1e6) * PRICES.lambdaRequestPerMillion +
        (idleOperations + seconds) * (1769 / 1024) * PRICES.lambdaGbSecond.x86_64,
      6,
    );
  });
});
