import { describe, expect, it } from 'vitest';
import { formatDuration, formatProgress, rebuildProgressPrinter, type PhaseState } from '../../cli/progress.js';
import type { RebuildProgress } from '../../lambdas/services/rebuild.js';

const state = (latest: RebuildProgress, o: Partial<PhaseState> = {}): PhaseState => ({
  phase: latest.phase,
  startedMs: 0,
  doneAtStart: 0,
  fractionAtStart: 0,
  latest,
  ...o,
});

describe('rebuild progress lines', () => {
  it.each([
    [0, '0s'],
    [12_400, '12s'],
    [185_000, '3m 05s'],
    [3_725_000, '1h 02m'],
  ])('%i ms is %s', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it.each<[string, PhaseState, number, string]>([
    [
      'sessionizing: items, rate, time left from the archive span, percent',
      state({ phase: 'sessionizing', done: 120_000, total: null, fraction: 0.25 }),
      50_000,
      'sessionizing  120,000 events  2,400/s  2m 30s left  25%',
    ],
    [
      'a resumed phase counts its rate and time left from where it began',
      state(
        { phase: 'sessionizing', done: 60_000, total: null, fraction: 0.6 },
        { doneAtStart: 50_000, fractionAtStart: 0.5 },
      ),
      10_000,
      'sessionizing  60,000 events  1,000/s  40s left  60%',
    ],
    [
      'payments: done of total',
      state({ phase: 'crediting payments', done: 30, total: 120, fraction: 0.25 }),
      3_000,
      'crediting payments  30 of 120 payments  10/s  9s left  25%',
    ],
    [
      'no rate or time left in the first second',
      state({ phase: 'sessionizing', done: 1000, total: null, fraction: 0.01 }),
      400,
      'sessionizing  1,000 events  1%',
    ],
    [
      'cleaning up has no fraction',
      state({ phase: 'cleaning up', done: 5000, total: null, fraction: null }, { fractionAtStart: null }),
      2000,
      'cleaning up  5,000 items deleted  2,500/s',
    ],
    [
      'a phase without items is its name',
      state({ phase: 'waiting for writers', done: 0, total: null, fraction: null }),
      5000,
      'waiting for writers',
    ],
    [
      'done: no time left',
      state({ phase: 'sessionizing', done: 400, total: null, fraction: 1 }),
      2000,
      'sessionizing  400 events  200/s  100%',
    ],
  ])('%s', (_name, s, now, line) => expect(formatProgress(s, now)).toBe(line));

  it('writes plain lines off a terminal: each phase start, each tenth, not every report', () => {
    const out: string[] = [];
    let now = 0;
    const print = rebuildProgressPrinter({ write: (t: string) => out.push(t) }, false, () => now);
    print({ phase: 'waiting for writers', done: 0, total: null, fraction: null });
    for (let i = 0; i <= 100; i++) {
      now += 100;
      print({ phase: 'sessionizing', done: i * 10, total: null, fraction: i / 100 });
    }
    print.finish();
    expect(out.every((l) => l.endsWith('\n') && !l.includes('\r'))).toBe(true);
    expect(out).toHaveLength(12);
    expect(out[0]).toBe('waiting for writers\n');
    expect(out[11]).toBe('sessionizing  1,000 events  100/s  100%\n');
  });

  it('rewrites one line on a terminal and ends it when the phase changes', () => {
    const out: string[] = [];
    const print = rebuildProgressPrinter({ write: (t: string) => out.push(t) }, true, () => 0);
    print({ phase: 'sessionizing', done: 10, total: null, fraction: 0.5 });
    print({ phase: 'sessionizing', done: 9, total: null, fraction: 0.5 });
    print({ phase: 'switching', done: 0, total: null, fraction: null });
    print.finish();
    expect(out).toEqual([
      '\rsessionizing  10 events  50%',
      '\rsessionizing  9 events  50% ',
      '\n',
      '\rswitching',
      '\n',
    ]);
  });
});
