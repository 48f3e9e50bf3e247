import { describe, expect, it } from 'vitest';
import { topStats } from '../../lambdas/domain/reports/overview.js';
import { visitCounters } from '../../lambdas/domain/rollup.js';
import { buildVisits, visitEventOf, type Visit } from '../../lambdas/domain/visit.js';
import { trackedEvent } from '../support/events.js';

const T = Date.UTC(2026, 2, 5, 10);

/** A visit of events given as [seconds after T, 'page' | goal name]. */
function visitOf(events: Array<[number, string]>): Visit {
  const list = events.map(([s, what], i) =>
    visitEventOf(
      trackedEvent({
        event_id: `e${i}`,
        ts: T + s * 1000,
        ...(what === 'page' ? { type: 'pageview' } : { type: 'goal', goal: what }),
      }),
    ),
  );
  const [visit] = buildVisits('example.com', 'visitor-0001', list);
  if (!visit) throw new Error('no visit');
  return visit;
}

describe('visitCounters: bounce and duration of one visit (docs/api.md, "Top stats")', () => {
  it.each<[string, Array<[number, string]>, { bounces: number; timed_visits: number; duration_ms: number }]>([
    ['one page view: a bounce, no duration', [[0, 'page']], { bounces: 1, timed_visits: 0, duration_ms: 0 }],
    [
      'two page views 90 s apart',
      [
        [0, 'page'],
        [90, 'page'],
      ],
      { bounces: 0, timed_visits: 1, duration_ms: 90_000 },
    ],
    [
      'one page view and a goal: not a bounce, timed',
      [
        [0, 'page'],
        [30, 'Signup'],
      ],
      { bounces: 0, timed_visits: 1, duration_ms: 30_000 },
    ],
    [
      'one page view and an outbound click at the same ms',
      [
        [0, 'page'],
        [0, 'Outbound Link: Click'],
      ],
      { bounces: 0, timed_visits: 1, duration_ms: 0 },
    ],
    ['a goal alone: no page view, not a bounce', [[0, 'Signup']], { bounces: 0, timed_visits: 0, duration_ms: 0 }],
    [
      'the same page twice: two page views, not a bounce',
      [
        [0, 'page'],
        [1700, 'page'],
      ],
      { bounces: 0, timed_visits: 1, duration_ms: 1_700_000 },
    ],
  ])('%s', (_, events, expected) => {
    expect(visitCounters(visitOf(events))).toEqual(expected);
  });
});

describe('topStats: the formulas over rollup items', () => {
  const item = (visits: number, pageviews: number, counters: Record<string, number>) => ({
    visits,
    pageviews,
    counters,
  });
  it.each<[string, Array<ReturnType<typeof item>>, ReturnType<typeof topStats>]>([
    [
      'no visit: every ratio null',
      [],
      { pageviews: 0, views_per_visit: null, bounce_rate: null, visit_duration: null },
    ],
    [
      'only bounces: rate 1, no duration',
      [item(3, 3, { bounces: 3 })],
      { pageviews: 3, views_per_visit: 1, bounce_rate: 1, visit_duration: null },
    ],
    [
      'sums over items before dividing (not a mean of means)',
      [
        item(1, 5, { timed_visits: 1, duration_ms: 100_000 }),
        item(3, 3, { bounces: 2, timed_visits: 1, duration_ms: 20_000 }),
      ],
      { pageviews: 8, views_per_visit: 2, bounce_rate: 0.5, visit_duration: 60 },
    ],
    [
      'ratios to 6 decimals, duration to whole seconds',
      [item(3, 7, { bounces: 1, timed_visits: 2, duration_ms: 2_999 })],
      { pageviews: 7, views_per_visit: 2.333333, bounce_rate: 0.333333, visit_duration: 1 },
    ],
    [
      'a half second rounds up',
      [item(2, 2, { timed_visits: 2, duration_ms: 1_000 })],
      { pageviews: 2, views_per_visit: 1, bounce_rate: 0, visit_duration: 1 },
    ],
    [
      'unknown counters are ignored',
      [item(1, 2, { timed_visits: 1, duration_ms: 4_000, other: 9 })],
      { pageviews: 2, views_per_visit: 2, bounce_rate: 0, visit_duration: 4 },
    ],
  ])('%s', (_, items, expected) => {
    expect(topStats(items)).toEqual(expected);
  });
});
