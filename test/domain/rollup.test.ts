import { describe, expect, it } from 'vitest';
import {
  DIMENSIONS,
  DIMENSION_BUCKETS,
  GOAL_KEYS_PER_ITEM,
  LocalDays,
  NONE,
  OTHER_GOALS_KEY,
  RollupDeltas,
  bucketOf,
  goalKeySlot,
  goalLinkKey,
  parseGoalKey,
} from '../../lambdas/domain/rollup.js';
import { localDay, localHour } from '../../lambdas/domain/range.js';
import { OUTBOUND_GOAL, buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import { trackedEvent } from '../support/events.js';

const T = Date.UTC(2026, 9, 24, 21, 0); // 23:00 in Berlin, the night before the clocks go back

function visitOf(overrides: Parameters<typeof trackedEvent>[0] = {}, paths = ['/', '/a', '/']) {
  const events = paths.map((path, i) =>
    visitEventOf(trackedEvent({ ts: T + i * 60_000, event_id: `x${i}`, path, ...overrides })),
  );
  const [visit] = buildVisits('example.com', 'visitor-0001', events);
  if (!visit) throw new Error('no visit');
  return visit;
}

describe('RollupDeltas', () => {
  it('adds a visit to the visits item and one value per dimension, pages once per visit', () => {
    const deltas = new RollupDeltas();
    deltas.addVisit(visitOf({ referrer_host: null, utm_campaign: 'spring' }), 'Europe/Berlin', 1);
    const list = deltas.list();
    const visits = list.find((d) => d.key.metric === 'visits' && d.key.granularity === 'D');
    expect(visits).toMatchObject({ key: { period: '2026-10-24' }, visits: 1, pageviews: 3 });
    const values = (metric: string) =>
      Object.fromEntries(
        list.filter((d) => d.key.metric === metric && d.key.granularity === 'M').flatMap((d) => [...d.values]),
      );
    expect(values('page')).toEqual({ '/': 1, '/a': 1 });
    expect(values('referrer')).toEqual({ [NONE]: 1 });
    expect(values('campaign')).toEqual({ spring: 1 });
    expect(values('landing_page')).toEqual({ '/': 1 });
    for (const dimension of DIMENSIONS) expect(Object.keys(values(dimension)).length, dimension).toBeGreaterThan(0);
  });

  it('cancels out a visit added and taken back, leaving no delta', () => {
    const deltas = new RollupDeltas();
    const visit = visitOf();
    deltas.addVisit(visit, 'UTC', 1);
    deltas.addVisit(visit, 'UTC', -1);
    expect(deltas.list()).toEqual([]);
  });

  it('records activity per local hour, day and month', () => {
    const deltas = new RollupDeltas();
    deltas.addActivity('example.com', 'v1', T + 2 * 3600_000, 'Europe/Berlin'); // 01:00 the next local day
    const days = deltas.list().map((d) => `${d.key.granularity}#${d.key.period}:${[...d.visitors].join()}`);
    expect(days).toEqual(['D#2026-10-25:v1', 'M#2026-10:v1', 'H#2026-10-25T01:v1']);
  });

  it('adds a visit to the hourly visits item of its start, and no dimension by hour', () => {
    const deltas = new RollupDeltas();
    deltas.addVisit(visitOf(), 'Europe/Berlin', 1); // starts 23:00 local
    const hourly = deltas.list().filter((d) => d.key.granularity === 'H');
    expect(hourly.map((d) => [d.key.metric, d.key.period, d.visits, d.pageviews])).toEqual([
      ['visits', '2026-10-24T23', 1, 3],
    ]);
  });

  it('keys hours by the wall clock on the days clocks change (Berlin, 25 October 2026: 02:00 twice)', () => {
    const deltas = new RollupDeltas();
    const fallBack = Date.UTC(2026, 9, 25, 0, 30); // 02:30 summer time
    for (const [i, ts] of [fallBack, fallBack + 3600_000, fallBack + 2 * 3600_000].entries())
      deltas.addActivity('example.com', `v${i}`, ts, 'Europe/Berlin');
    const hours = deltas
      .list()
      .filter((d) => d.key.granularity === 'H')
      .map((d) => `${d.key.period}:${[...d.visitors].join()}`);
    expect(hours).toEqual(['2026-10-25T02:v0,v1', '2026-10-25T03:v2']);
  });
});

describe('bucketOf', () => {
  it('spreads values over the buckets of their dimension and is stable', () => {
    const pages = Array.from({ length: 800 }, (_, i) => `/blog/post-${i}`);
    const counts = new Array(DIMENSION_BUCKETS.page).fill(0);
    for (const p of pages) counts[bucketOf('page', p)]++;
    expect(Math.min(...counts)).toBeGreaterThan(60);
    expect(bucketOf('page', '/pricing')).toBe(bucketOf('page', '/pricing'));
    expect(bucketOf('channel', 'Search')).toBe(0);
  });
});

describe('LocalDays', () => {
  it.each([
    ['Europe/Berlin', Date.UTC(2026, 9, 24, 21, 59)],
    ['Europe/Berlin', Date.UTC(2026, 9, 24, 22, 0)],
    ['Europe/Berlin', Date.UTC(2026, 9, 25, 0, 59)],
    ['Europe/Berlin', Date.UTC(2026, 9, 25, 1, 0)],
    ['Europe/Berlin', Date.UTC(2026, 9, 25, 22, 59)],
    ['Europe/Berlin', Date.UTC(2026, 9, 25, 23, 0)],
    ['Europe/Berlin', Date.UTC(2026, 2, 29, 1, 0)],
    ['America/Los_Angeles', Date.UTC(2026, 2, 8, 7, 59)],
    ['America/Los_Angeles', Date.UTC(2026, 2, 8, 8, 0)],
    ['Asia/Kolkata', Date.UTC(2026, 0, 1, 18, 29)],
    ['Asia/Kolkata', Date.UTC(2026, 0, 1, 18, 30)],
    ['Asia/Kathmandu', Date.UTC(2026, 0, 1, 18, 14)],
    ['Asia/Kathmandu', Date.UTC(2026, 0, 1, 18, 15)],
    ['Australia/Lord_Howe', Date.UTC(2026, 9, 3, 15, 29)],
    ['Australia/Lord_Howe', Date.UTC(2026, 9, 3, 15, 30)],
  ])('agrees with localDay and localHour in %s at %i, whatever came before', (tz, ts) => {
    const days = new LocalDays();
    const hours = new LocalDays();
    for (const t of [ts - 86_400_000, ts - 1, ts + 1, ts - 3_600_000, ts + 1_800_000, ts]) {
      expect(days.of(t, tz)).toBe(localDay(t, tz));
      expect(hours.hourOf(t, tz)).toBe(localHour(t, tz));
    }
  });
});

describe('RollupDeltas: top-stats counters and goals', () => {
  const goalVisit = () => {
    const events = [
      visitEventOf(trackedEvent({ ts: T, event_id: 'g0', path: '/' })),
      visitEventOf(trackedEvent({ ts: T + 10_000, event_id: 'g1', path: '/', type: 'goal', goal: 'Signup' })),
      visitEventOf(trackedEvent({ ts: T + 20_000, event_id: 'g2', path: '/', type: 'goal', goal: 'Signup' })),
      visitEventOf(
        trackedEvent({
          ts: T + 30_000,
          event_id: 'g3',
          path: '/',
          type: 'goal',
          goal: OUTBOUND_GOAL,
          link: 'https://github.com/x',
        }),
      ),
    ];
    const [visit] = buildVisits('example.com', 'visitor-0001', events);
    if (!visit) throw new Error('no visit');
    return visit;
  };

  it('adds bounces, timed visits and duration to the hour, day and month visits items', () => {
    const deltas = new RollupDeltas();
    deltas.addVisit(visitOf(), 'Europe/Berlin', 1); // 3 page views over 120 s
    const visits = deltas.list().filter((d) => d.key.metric === 'visits');
    expect(visits.map((d) => [d.key.granularity, Object.fromEntries(d.counters)])).toEqual([
      ['D', { timed_visits: 1, duration_ms: 120_000 }],
      ['M', { timed_visits: 1, duration_ms: 120_000 }],
      ['H', { timed_visits: 1, duration_ms: 120_000 }],
    ]);
    const bounce = new RollupDeltas();
    bounce.addVisit(visitOf({}, ['/']), 'UTC', 1);
    expect(Object.fromEntries(bounce.list()[0]?.counters ?? [])).toEqual({ bounces: 1 });
  });

  it('counts goal completions, visits with the goal, its visitors, and outbound clicks per URL', () => {
    const deltas = new RollupDeltas();
    deltas.addVisit(goalVisit(), 'UTC', 1);
    const goal = deltas.list().filter((d) => d.key.metric === 'goal' && d.key.granularity === 'D');
    const merged = <T>(pick: (d: (typeof goal)[number]) => Map<string, T>) =>
      Object.fromEntries(goal.flatMap((d) => [...pick(d)]));
    const link = goalLinkKey(OUTBOUND_GOAL, 'https://github.com/x');
    expect(merged((d) => d.counters)).toEqual({ Signup: 2, [OUTBOUND_GOAL]: 1, [link]: 1 });
    expect(merged((d) => d.values)).toEqual({ Signup: 1, [OUTBOUND_GOAL]: 1, [link]: 1 });
    expect(Object.fromEntries(Object.entries(merged((d) => d.valueVisitors)).map(([k, v]) => [k, [...v]]))).toEqual({
      Signup: ['visitor-0001'],
      [OUTBOUND_GOAL]: ['visitor-0001'],
      [link]: ['visitor-0001'],
    });
    for (const d of goal) for (const key of d.values.keys()) expect(d.key.bucket).toBe(bucketOf('goal', key));
    expect(parseGoalKey(link)).toEqual({ goal: OUTBOUND_GOAL, link: 'https://github.com/x' });
    expect(parseGoalKey('Signup')).toEqual({ goal: 'Signup', link: null });
  });

  it('takes back counts of a replaced visit but keeps its goal visitors (sketches only grow)', () => {
    const deltas = new RollupDeltas();
    deltas.addVisit(goalVisit(), 'UTC', 1);
    deltas.addVisit(goalVisit(), 'UTC', -1);
    const left = deltas.list();
    expect(
      left.every(
        (d) => d.key.metric === 'goal' && d.values.size === 0 && d.counters.size === 0 && d.valueVisitors.size > 0,
      ),
    ).toBe(true);
  });
});

describe('goalKeySlot: at most GOAL_KEYS_PER_ITEM keys per goal item', () => {
  it('admits keys until the item is full, then sends new ones to the other-goals key, known ones to themselves', () => {
    const known = new Set(Array.from({ length: GOAL_KEYS_PER_ITEM - 1 }, (_, i) => `g${i}`));
    const slot = goalKeySlot(known);
    expect(slot('new-1')).toBe('new-1');
    expect(slot('new-2')).toBe(OTHER_GOALS_KEY);
    expect(slot('g0')).toBe('g0');
    expect(slot('new-1')).toBe('new-1');
    expect(known.size).toBe(GOAL_KEYS_PER_ITEM);
  });
});
