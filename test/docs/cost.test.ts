import { describe, expect, it } from 'vitest';
import { ASSUMPTIONS, PRICES, monthlyBill } from '../../bench/cost-model.js';
import { FIREHOSE_BUFFER_INTERVAL } from '../../lib/archive.js';
import { FUNCTIONS, type FunctionSpec } from '../../lib/functions.js';
import { stepGroup } from '../../bench/sessionize.js';

describe('the cost model of docs/cost.md', () => {
  it('prices DynamoDB from the measured units and bytes: doubling WRU doubles the write line and nothing else', () => {
    const base = { eventsPerMonth: 10_000_000, batch: 231, wru: 500, rru: 500, storedBytesPerEvent: 300 };
    const a = monthlyBill(base);
    const b = monthlyBill({ ...base, wru: 1000 });
    for (const [i, [name, usd]] of a.entries()) {
      if (name.startsWith('DynamoDB writes')) expect(b[i]?.[1]).toBeCloseTo(2 * usd, 10);
      else expect(b[i]?.[1], name).toBe(usd);
    }
    // 10M events × 500 WRU per 1,000 = 5M WRU at $0.625 per million on Standard, 25% more on Standard-IA.
    const writes = (tableClass: 'standard' | 'standard-ia') =>
      monthlyBill(base, tableClass).find(([name]) => name.startsWith('DynamoDB writes'))?.[1];
    expect(writes('standard')).toBeCloseTo(3.125, 10);
    expect(writes('standard-ia')).toBeCloseTo(3.90625, 10);
  });
});

describe('the cost model prices the stack as deployed: hot path on function URLs, 15-minute archive buffer', () => {
  const tenM = { eventsPerMonth: 10_000_000, batch: 231, wru: 500, rru: 500, storedBytesPerEvent: 300 };
  const line = (bill: ReturnType<typeof monthlyBill>, prefix: string) =>
    bill.find(([name]) => name.startsWith(prefix))?.[1] ?? Number.NaN;

  it('bills API Gateway for the dashboard, API and webhooks only, not per hot-path request', () => {
    // 150,000 dashboard requests + 0.02 webhook deliveries per event, at $1.00 per million.
    expect(line(monthlyBill(tenM), 'API Gateway')).toBeCloseTo((150_000 + 200_000) / 1e6, 10);
    // 10M more events add their webhooks only (200,000 requests), not 11M hot-path requests.
    expect(
      line(monthlyBill({ ...tenM, eventsPerMonth: 20_000_000 }), 'API Gateway') -
        line(monthlyBill(tenM), 'API Gateway'),
    ).toBeCloseTo(0.2, 10);
  });

  it('counts every hot-path request as a Lambda invocation: events, script loads (10%), sessionizer batches, scheduled runs', () => {
    const invocations =
      10_000_000 + 1_000_000 + 10_000_000 / 231 + (30 * 24 * 60) / (FUNCTIONS.scheduled.everyMinutes ?? 5);
    expect(line(monthlyBill(tenM), 'Lambda requests')).toBeCloseTo(
      (invocations / 1e6) * PRICES.lambdaRequestPerMillion,
      10,
    );
  });

  it("writes no access log line per event: CloudWatch Logs is the API requests' lines only", () => {
    const gb = ((150_000 + 200_000) * 121) / 2 ** 30;
    expect(line(monthlyBill(tenM), 'CloudWatch Logs')).toBeCloseTo(
      gb * PRICES.logsIngestPerGb + gb * 0.2 * PRICES.logsStoredGbMonth,
      10,
    );
  });

  it("prices the archive's per-object fees at one object per active site and 15-minute buffer", () => {
    expect(FIREHOSE_BUFFER_INTERVAL.toMinutes()).toBe(15);
    // 50 active sites at 10M × 2,880 buffers a month, $0.005 per 1,000 objects (Firehose) and per 1,000 PUTs (S3).
    const objectFees = ((50 * 2880) / 1000) * 0.005;
    const gb = (10_000_000 * 0.7 * 1024) / 2 ** 30;
    const jqHours = (10_000_000 * 20e-6) / 3600;
    expect(line(monthlyBill(tenM), 'Firehose dynamic partitioning')).toBeCloseTo(
      gb * PRICES.firehosePartitioningPerGb + objectFees + jqHours * PRICES.firehoseJqHour,
      10,
    );
    expect(line(monthlyBill(tenM), 'S3 storage')).toBeCloseTo(
      ((12 * 10_000_000 * 150) / 2 ** 30) * PRICES.s3GbMonth + objectFees,
      10,
    );
  });

  it('counts the alarm metrics of the stack: 6 alarms of one metric and a 2-metric 5xx alarm per HTTP front (the API and each hot-path function URL)', () => {
    const urls = Object.values(FUNCTIONS).filter((spec: FunctionSpec) => spec.hotPath && spec.url).length;
    expect(urls).toBe(2);
    expect(ASSUMPTIONS.alarmMetrics).toBe(6 + 2 * (1 + urls));
    expect(line(monthlyBill(tenM), 'CloudWatch custom metrics')).toBeCloseTo(
      2 * PRICES.metricMonth + 12 * PRICES.alarmMetricMonth,
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
