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
    const functions = app.filter((r) => r.type === 'AWS::Lambda::Function').length;
    // Every Footfall function has its line; CDK's deploy-time handlers share one.
    expect(lines(bill, 'Lambda `').length).toBe(functions - lines(bill, 'Lambda, custom').length);
    // event: 10M requests at $0.20/M, 25 ms at 512 MB arm64.
    expect(line(bill, 'Lambda `event`')).toBeCloseTo(2 + 10e6 * 0.025 * 0.5 * PRICES.lambdaGbSecond.arm64, 10);
    const halved = app.map((r) =>
      r.type === 'AWS::Lambda::Function' && r.id.startsWith('eventFunction')
        ? { ...r, props: { ...r.props, MemorySize: 256 } }
        : r,
    );
    expect(line(stackBill(halved, tenM), 'Lambda `event` (requests, 256 MB')).toBeCloseTo(
      2 + 10e6 * 0.025 * 0.25 * PRICES.lambdaGbSecond.arm64,
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
    // DroppedEvents has data every hour (bots reach every public site), MalformedRecords none in a healthy stack.
    expect(line(stackBill(stack, tenM), 'CloudWatch custom metrics')).toBeCloseTo(PRICES.metricMonth, 10);
    expect(customMetricsUsd()).toBeCloseTo(PRICES.metricMonth, 10);
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

  it('bills a Firehose delivery per object buffered and per event in 5 KB increments', () => {
    const bill = stackBill(stack, tenM);
    const gb = (10e6 * USAGE.firehoseRecordKb * 1024) / 2 ** 30;
    expect(line(bill, 'Firehose `ArchiveDelivery`: ingestion')).toBeCloseTo(
      gb * (PRICES.firehoseIngestPerGb + PRICES.firehoseConversionPerGb),
      10,
    );
  });
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
