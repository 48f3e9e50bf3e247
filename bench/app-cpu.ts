import { readdirSync, readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/** Linux's clock ticks per second in `/proc/<pid>/task/<tid>/stat` (USER_HZ). */
const TICKS_PER_S = 100;

/**
 * CPU time of this process's threads so far, ms: the main thread (the server's handlers, and dynalite when it
 * runs there) and the others (the dynalite thread, V8's GC helpers, libuv's pool), from
 * `/proc/self/task/<tid>/stat` (utime and stime, fields 14 and 15: proc(5)), and each thread's by its id
 * (`byThread`); null where there is no `/proc`. Counts of threads that exited in between are lost.
 */
export function threadCpu(): { main: number; others: number; byThread: Map<string, number> } | null {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  const total = { main: 0, others: 0, byThread: new Map<string, number>() };
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // it exited
    }
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
    total.byThread.set(tid, ms);
    if (tid === String(process.pid)) total.main += ms;
    else total.others += ms;
  }
  return total;
}

/**
 * The CPU the busiest thread other than the main one used between two `threadCpu` readings, ms: in the import
 * and app benches dynalite's own thread (the others are libuv's pool and V8's helpers, GC and compilers).
 */
export function busiestOtherThread(
  before: { byThread: Map<string, number> },
  after: { byThread: Map<string, number> },
): number {
  let most = 0;
  for (const [tid, ms] of after.byThread)
    if (tid !== String(process.pid)) most = Math.max(most, ms - (before.byThread.get(tid) ?? 0));
  return most;
}

/** Where the main thread's CPU goes, by the script a sampled function is in (first match). */
const CATEGORIES: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /node_modules\/(dynalite|level|classic-level|memory-level|abstract-level|big\.js|lazy|lock|buffer-crc32)\//,
    'dynalite',
  ],
  [/\/local\/(dynalite|sigv4-check)/, 'dynalite'],
  [/node_modules\/(@aws-sdk|@smithy|@aws-crypto)\//, 'AWS SDK (client, and the signature check)'],
  [/\/lambdas\//, 'handlers and report code (lambdas/)'],
  [/\/local\//, 'local server (local/)'],
  [/node_modules\/playwright/, 'the bench driving Chromium (Playwright)'],
  [/^node:/, 'Node (http, streams, zlib)'],
  [/node_modules\//, 'other packages'],
];

/** V8's pseudo-functions of a profile, by name. */
const PSEUDO = new Map([
  ['(garbage collector)', 'garbage collector'],
  ['(program)', 'native (V8 and Node)'],
  ['(root)', 'native (V8 and Node)'],
]);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

/**
 * Starts V8's sampling profiler on this thread; the returned function stops it and gives the time sampled per
 * category (`CATEGORIES`), ms, idle time left out. For the bench's split of the server's CPU between dynalite
 * and the report code (`FOOTFALL_BENCH_PROFILE`, `docs/benchmarks.md`).
 */
export async function profileMainThread(): Promise<() => Promise<Map<string, number>>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    const nodes = new Map((profile.nodes as ProfileNode[]).map((n) => [n.id, n.callFrame]));
    const byCategory = new Map<string, number>();
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    for (let i = 0; i < samples.length; i++) {
      const frame = nodes.get(samples[i]!)!;
      if (frame.functionName === '(idle)') continue;
      const category =
        PSEUDO.get(frame.functionName) ??
        CATEGORIES.find(([pattern]) => pattern.test(frame.url))?.[1] ??
        (frame.url ? 'other' : 'native (V8 and Node)');
      byCategory.set(category, (byCategory.get(category) ?? 0) + (deltas[i] ?? 0) / 1000);
    }
    return byCategory;
  };
}

/**
 * `FOOTFALL_BENCH_DYNALITE`: `thread` (the default, as `serve` runs) or `inline` (dynalite in the server's
 * thread, as before it had its own), to compare the two on one machine (`docs/benchmarks.md`).
 * @throws Error for any other value
 */
export function benchDynaliteThread(env: NodeJS.ProcessEnv = process.env): boolean {
  const mode = env.FOOTFALL_BENCH_DYNALITE || 'thread';
  if (mode !== 'thread' && mode !== 'inline')
    throw new Error(`FOOTFALL_BENCH_DYNALITE must be thread or inline; got '${mode}'`);
  return mode === 'thread';
}
