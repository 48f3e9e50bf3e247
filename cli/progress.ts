import type { RebuildProgress } from '../lambdas/services/rebuild.js';

/** A progress report of a long command (`rebuild`, `sites delete`): its phase's name and counts. */
export type PhaseProgress = Omit<RebuildProgress, 'phase'> & { phase: string };

/** What a phase's progress line says, from the reports since the phase began. */
export interface PhaseState {
  phase: string;
  /** ms since epoch the phase began, and its count and fraction then. */
  startedMs: number;
  doneAtStart: number;
  fractionAtStart: number | null;
  latest: PhaseProgress;
}

/** What a phase counts; phases absent here count nothing. */
const UNITS: ReadonlyMap<string, string> = new Map([
  ['cleaning up', 'items deleted'],
  ['sessionizing', 'events'],
  ['crediting payments', 'payments'],
  ['storing payments', 'payments'],
  ['writing payments', 'payments'],
  ['reading stripe', 'objects'],
  ['reading lemonsqueezy', 'objects'],
  ['reading paddle', 'objects'],
  ['reading polar', 'objects'],
  ['deleting items', 'items deleted'],
  ['deleting the archive', 'files deleted'],
]);
const count = (n: number) => n.toLocaleString('en-US');

/** `1h 02m`, `3m 05s`, `12s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/**
 * One progress line of `footfall rebuild`: phase, items, rate and time left
 * (`sessionizing  120,000 events  2,400/s  2m 00s left  29%`).
 * The rate counts items since the phase began; the time left extrapolates the
 * phase's fraction (the archive's time span for sessionizing, the count for
 * payments), and is shown once a second has passed and some fraction is done.
 */
export function formatProgress(state: PhaseState, nowMs: number): string {
  const { latest } = state;
  const unit = UNITS.get(latest.phase) ?? '';
  const parts: string[] = [latest.phase];
  if (unit) parts.push(`${count(latest.done)}${latest.total !== null ? ` of ${count(latest.total)}` : ''} ${unit}`);
  const elapsed = nowMs - state.startedMs;
  if (unit && elapsed >= 1000)
    parts.push(`${count(Math.round(((latest.done - state.doneAtStart) * 1000) / elapsed))}/s`);
  const f0 = state.fractionAtStart ?? 0;
  if (latest.fraction !== null) {
    const gained = latest.fraction - f0;
    if (latest.fraction < 1 && gained > 0 && elapsed >= 1000)
      parts.push(`${formatDuration((elapsed * (1 - latest.fraction)) / gained)} left`);
    parts.push(`${Math.floor(latest.fraction * 100)}%`);
  }
  return parts.join('  ');
}

/** Fractions at which a non-terminal output gets a line (besides each phase's first and last). */
const PLAIN_STEPS = 10;
/** Items between two plain lines when a phase has no fraction (cleaning up). */
const PLAIN_EVERY = 50_000;

/**
 * A progress sink for `rebuildSite` and `importPayments`: on a terminal one line rewritten in place
 * (like `import`), elsewhere (a pipe, a log file) plain lines: one when a
 * phase begins, one per tenth of it (or per 50,000 items when it has no
 * fraction), none in between. Writes to `out` (stderr: stdout keeps the
 * summary, JSON with `--json`).
 */
export function rebuildProgressPrinter(
  out: { write(text: string): unknown },
  tty: boolean,
  clock: () => number = Date.now,
) {
  let state: PhaseState | null = null;
  let shown = '';
  let step = -1;
  // Off a terminal: the phase's last line, when its last report fell between two steps.
  let unprinted: string | null = null;
  const plain = (line: string) => out.write(`${line}\n`);
  const endPhase = () => {
    if (tty && state) out.write('\n');
    if (!tty && unprinted !== null) plain(unprinted);
    unprinted = null;
  };
  const printer = (progress: PhaseProgress) => {
    const now = clock();
    if (!state || state.phase !== progress.phase) {
      endPhase();
      state = {
        phase: progress.phase,
        startedMs: now,
        doneAtStart: progress.done,
        fractionAtStart: progress.fraction,
        latest: progress,
      };
      step = -1;
      shown = '';
    }
    state.latest = progress;
    const line = formatProgress(state, now);
    if (tty) {
      out.write(`\r${line.padEnd(shown.length)}`);
      shown = line;
      return;
    }
    const next =
      progress.fraction !== null
        ? Math.floor(progress.fraction * PLAIN_STEPS)
        : Math.floor(progress.done / PLAIN_EVERY);
    if (next > step) {
      step = next;
      plain(line);
      unprinted = null;
    } else unprinted = line;
  };
  return Object.assign(printer, {
    /** Ends the last phase: its line on a terminal, its last state off one. */
    finish: () => {
      endPhase();
      state = null;
    },
  });
}
