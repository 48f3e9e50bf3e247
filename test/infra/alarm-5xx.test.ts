import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { synth } from './synth.js';

/** The fields of an `AWS::CloudWatch::Alarm` that decide when it pages. */
interface AlarmRule {
  MetricName: string;
  Statistic: string;
  Period: number;
  Threshold: number;
  ComparisonOperator: string;
  EvaluationPeriods: number;
  DatapointsToAlarm: number;
  TreatMissingData: string;
}

/** One five-minute period of a URL's or the API's traffic. */
interface Period {
  requests: number;
  errors: number;
}

/**
 * Whether CloudWatch would put the alarm in ALARM over these periods: some window of `EvaluationPeriods`
 * consecutive periods holds at least `DatapointsToAlarm` breaching datapoints (CloudWatch User Guide,
 * "Evaluating an alarm"). The metric is the period's 5xx count (its Sum); a period without a 5xx has no
 * datapoint or a 0, neither breaching with `notBreaching`.
 */
function pages(rule: AlarmRule, periods: Period[]): boolean {
  expect(rule.ComparisonOperator).toBe('GreaterThanThreshold');
  expect(rule.TreatMissingData).toBe('notBreaching');
  const breaching = periods.map((p) => p.errors > rule.Threshold);
  for (let end = rule.EvaluationPeriods; end <= breaching.length; end++)
    if (breaching.slice(end - rule.EvaluationPeriods, end).filter(Boolean).length >= rule.DatapointsToAlarm)
      return true;
  return false;
}

/** The two-metric alarm these replaced: more than 1% of a period's requests answered 5xx, in 2 of 3 periods. */
function ratePaged(periods: Period[]): boolean {
  const breaching = periods.map((p) => p.requests > 0 && (100 * p.errors) / p.requests > 1);
  for (let end = 3; end <= breaching.length; end++)
    if (breaching.slice(end - 3, end).filter(Boolean).length >= 2) return true;
  return false;
}

const quiet = (errors: number[], requests = 2): Period[] =>
  errors.map((e) => ({ requests: Math.max(requests, e), errors: e }));
/** About 100M events a month: 11,574 requests in five minutes. */
const busy = (errors: number[]): Period[] => errors.map((e) => ({ requests: 11_574, errors: e }));

describe('5xx alarms: one metric each, paging on sustained failures at any traffic', () => {
  let rules: Array<[string, AlarmRule]>;
  beforeAll(() => {
    const alarms = synth({ bundle: false }).template.findResources('AWS::CloudWatch::Alarm');
    rules = Object.entries(alarms)
      .filter(([id]) => /^(Api|eventUrl|trackerUrl)5xxAlarm/.test(id))
      .map(([id, r]) => [id, (r as { Properties: AlarmRule }).Properties]);
  }, 300_000);

  it('are the API’s and each hot-path URL’s, on its 5xx count summed over five minutes', () => {
    const watched = rules.map(([id, r]) => [id.replace(/[0-9A-F]{8}$/, ''), r.MetricName, r.Statistic, r.Period]);
    expect(watched.sort()).toEqual([
      ['Api5xxAlarm', '5xx', 'Sum', 300],
      ['eventUrl5xxAlarm', 'Url5xxCount', 'Sum', 300],
      ['trackerUrl5xxAlarm', 'Url5xxCount', 'Sum', 300],
    ]);
  });

  it('do not page on one failed request, or one bad period of a busy site', () => {
    for (const [id, rule] of rules) {
      expect(pages(rule, quiet([0, 1, 0, 0, 0, 0])), id).toBe(false);
      expect(pages(rule, quiet([1, 0, 0, 1, 0, 0])), id).toBe(false);
      expect(pages(rule, busy([0, 80, 0, 0, 0])), id).toBe(false);
    }
  });

  it('page when every request of a quiet site fails for 15 minutes, even with a period without traffic', () => {
    for (const [id, rule] of rules) {
      expect(
        pages(rule, [
          { requests: 1, errors: 1 },
          { requests: 0, errors: 0 },
          { requests: 2, errors: 2 },
        ]),
        id,
      ).toBe(true);
    }
  });

  it('page when a busy site fails 2% of its requests, and when it keeps failing 0.1% (events the rate let go)', () => {
    for (const [id, rule] of rules) {
      expect(pages(rule, busy([231, 231, 231])), id).toBe(true);
      expect(pages(rule, busy([12, 12, 12])), id).toBe(true);
      expect(ratePaged(busy([12, 12, 12]))).toBe(false);
    }
  });

  it('page whenever the 1% rate alarm did, and exactly when it did while periods have under 100 requests', () => {
    const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
    console.log(`5xx alarms against the rate: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    // Most periods of a healthy endpoint have no 5xx: the cases that tell the alarms apart are the few that do.
    const period = (max: number) =>
      fc.integer({ min: 0, max }).chain((requests) =>
        fc.record({
          requests: fc.constant(requests),
          errors: fc.oneof(
            { arbitrary: fc.constant(0), weight: 3 },
            { arbitrary: fc.integer({ min: 0, max: Math.min(requests, 3) }), weight: 1 },
            { arbitrary: fc.integer({ min: 0, max: requests }), weight: 1 },
          ),
        }),
      );
    for (const [, rule] of rules) {
      fc.assert(
        fc.property(
          fc.array(period(20_000), { maxLength: 12 }),
          (periods) => !ratePaged(periods) || pages(rule, periods),
        ),
        { seed, examples: [[busy([231, 0, 231])]] },
      );
      fc.assert(
        fc.property(fc.array(period(99), { maxLength: 12 }), (periods) => pages(rule, periods) === ratePaged(periods)),
        { seed },
      );
    }
  });
});
