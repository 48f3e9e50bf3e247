import { describe, expect, it } from 'vitest';
import {
  REALTIME_RECORD_MS,
  REALTIME_WINDOW_MS,
  minuteOf,
  realtimeReport,
  realtimeSlices,
  type RealtimeSlice,
} from '../../lambdas/domain/realtime.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { trackedEvent } from '../support/events.js';

const NOW = Date.UTC(2026, 10, 23, 14, 0, 30);

function batch(events: TrackedEvent[]) {
  const byVisitor = new Map<string, TrackedEvent[]>();
  for (const e of events) byVisitor.set(e.visitor_id, [...(byVisitor.get(e.visitor_id) ?? []), e]);
  return [...byVisitor].map(([visitor, evs]) => ({
    site: 'example.com',
    events: evs,
    visits: buildVisits('example.com', visitor, evs.map(visitEventOf)),
  }));
}

describe('realtimeSlices: what a batch records', () => {
  it("records recent events per site-minute with the visit's referrer, the pages viewed and the goals completed, skipping old ones", () => {
    const slices = realtimeSlices(
      batch([
        trackedEvent({
          event_id: 'a1',
          visitor_id: 'a',
          ts: NOW - 60_000,
          path: '/',
          referrer_host: 'news.ycombinator.com',
        }),
        trackedEvent({ event_id: 'a2', visitor_id: 'a', ts: NOW - 50_000, path: '/pricing' }),
        trackedEvent({
          event_id: 'a3',
          visitor_id: 'a',
          ts: NOW - 40_000,
          path: '/pricing',
          type: 'goal',
          goal: 'Signup',
        }),
        trackedEvent({ event_id: 'b1', visitor_id: 'b', ts: NOW - REALTIME_RECORD_MS - 1, path: '/old' }),
      ]),
      NOW,
    );
    expect(slices).toEqual([
      {
        site: 'example.com',
        minute: minuteOf(NOW - 60_000),
        visitors: { a: [NOW - 40_000, 'news.ycombinator.com', ['/', '/pricing'], ['Signup']] },
      },
    ]);
  });

  it('skips events of no written visit (a replay that changed nothing)', () => {
    const events = [trackedEvent({ event_id: 'x', visitor_id: 'a', ts: NOW })];
    expect(realtimeSlices([{ site: 'example.com', events, visits: [] }], NOW)).toEqual([]);
  });
});

describe('realtimeReport: current visitors at now', () => {
  const slice = (minute: string, visitors: RealtimeSlice['visitors']): RealtimeSlice => ({
    site: 'example.com',
    minute,
    visitors,
  });
  it.each<[string, number, number]>([
    ['an event just now', NOW, 1],
    ['an event 4:59 ago', NOW - REALTIME_WINDOW_MS + 1000, 1],
    ['an event exactly 5:00 ago: gone', NOW - REALTIME_WINDOW_MS, 0],
    ['an event in the future of the clock: not counted', NOW + 1000, 0],
  ])('%s', (_, ts, visitors) => {
    expect(realtimeReport([slice(minuteOf(ts), { a: [ts, null, ['/']] })], NOW, 10).visitors).toBe(visitors);
  });

  it('counts each visitor once across slices and batches, pages, referrers and goals by distinct visitors, most first', () => {
    const m = minuteOf(NOW);
    const report = realtimeReport(
      [
        slice(m, { a: [NOW - 1000, 't.co', ['/', '/pricing'], ['Signup']], b: [NOW - 2000, null, ['/']] }),
        slice(m, { a: [NOW - 500, 't.co', ['/pricing'], ['Signup']], c: [NOW - 100, 't.co', ['/blog'], ['Trial']] }),
        slice(minuteOf(NOW - 9 * 60_000), { d: [NOW - 9 * 60_000, 'old.example', ['/old'], ['Old']] }),
      ],
      NOW,
      2,
    );
    expect(report).toEqual({
      visitors: 3,
      pages: [
        { page: '/', visitors: 2 },
        { page: '/blog', visitors: 1 },
      ],
      referrers: [
        { referrer: 't.co', visitors: 2 },
        { referrer: null, visitors: 1 },
      ],
      // a's Signup in two slices is one visitor; d's goal is outside the window.
      goals: [
        { goal: 'Signup', visitors: 1 },
        { goal: 'Trial', visitors: 1 },
      ],
    });
  });

  it('reads items written before goals were recorded as visitors with no goal', () => {
    const report = realtimeReport([slice(minuteOf(NOW), { a: [NOW - 1000, null, ['/']] })], NOW, 10);
    expect(report.visitors).toBe(1);
    expect(report.goals).toEqual([]);
  });
});
