import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  accountEvents,
  prepareDataDir,
  runLoad,
  startServe,
  stopServe,
  waitForCatchUp,
  type LoadResult,
  type ServeProcess,
} from '../../bench/load.js';
import { localPaths } from '../../local/service.js';
import { LONG, accountingProblems, report } from './support.js';

/**
 * Crash under load (`docs/reliability.md` "The checks"): the load of `load.test.ts`, `kill -9` of the
 * server mid-way (once in the short form, three times in the long one), a
 * restart on the same data each time, more load, then the catch-up.
 * Every event of every 202 the client received must be on the stream, in the
 * archive and in the sessionized visits exactly once, and the rollups must
 * count each once: the sessionizer and the archive were most likely killed in
 * the middle of a batch, which they then take again.
 */
const SECONDS = LONG ? 60 : 16;
const RATE = LONG ? undefined : 60;
const CONNECTIONS = 8;
const KILLS = LONG ? 3 : 1;
const PHASE_SECONDS = SECONDS / (KILLS + 1);

/** The checkpoint files of the local event source mappings, as left by the kill. */
async function checkpoints(dataDir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of ['sessionize', 'archive']) {
    out[name] = JSON.parse(
      await readFile(join(localPaths(dataDir).stream, 'checkpoints', `${name}.json`), 'utf8').catch(() => 'null'),
    );
  }
  return out;
}

describe('kill -9 of footfall serve under load, restart, catch-up', () => {
  let dataDir = '';
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    if (serve) await stopServe(serve);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('every event of every 202 is in the stream, the archive and the sessionized visits exactly once', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-rel-crash-'));
    await prepareDataDir(dataDir);
    const common = { rate: RATE, connections: CONNECTIONS, maxRequests: LONG ? 2_000_000 : 5_000 };

    // Load, and kill -9 mid-way with requests in flight; start again on the same data.
    const killed: LoadResult[] = [];
    const leftByKill: Array<Record<string, unknown>> = [];
    for (let k = 0; k < KILLS; k++) {
      const victim = await startServe(dataDir, ['--sessionize-interval', '1000']);
      serve = victim;
      const load = runLoad({ ...common, url: victim.url, seconds: PHASE_SECONDS + 30, run: `k${k}`, seed: k + 1 });
      await new Promise((r) => setTimeout(r, PHASE_SECONDS * 1000));
      victim.child.kill('SIGKILL');
      load.stop();
      expect(await victim.exited).toBeNull();
      serve = undefined;
      killed.push(await load.done);
      leftByKill.push(await checkpoints(dataDir));
    }

    // The rest of the load on the last restart, which is stopped gracefully.
    serve = await startServe(dataDir, ['--sessionize-interval', '1000']);
    const last = await runLoad({ ...common, url: serve.url, seconds: PHASE_SECONDS, run: 'last', seed: 99 }).done;
    expect(last.errors).toBe(0);
    expect(Object.keys(last.statuses)).toEqual(['202']);

    const catchUpMs = await waitForCatchUp(dataDir, LONG ? 1_800_000 : 150_000);
    const accounting = await accountEvents(dataDir);
    await stopServe(serve);
    serve = undefined;

    const phases = [...killed, last];
    const acked = phases.flatMap((p) => p.accepted);
    const problems = accountingProblems(
      accounting,
      acked,
      phases.flatMap((p) => p.sent),
    );
    const acknowledged = new Set(acked);
    await report('crash-under-load', {
      seconds: SECONDS,
      kills: KILLS,
      rate: RATE ?? 'unthrottled',
      beforeEachKill: killed.map((p) => ({
        requests: p.requests,
        statuses: p.statuses,
        acceptedEvents: p.accepted.length,
        connectionErrors: p.errors,
      })),
      checkpointsLeftByKill: leftByKill,
      afterLastRestart: { requests: last.requests, acceptedEvents: last.accepted.length, p99Ms: last.latencyMs.p99 },
      acknowledgedEvents: acked.length,
      streamEvents: accounting.stream.length,
      writtenButUnacknowledged: accounting.stream.filter((e) => !acknowledged.has(e.token ?? '')).length,
      tornLinesSkipped: accounting.tornLines,
      archiveRows: accounting.archive.length,
      sessionizedEvents: accounting.visits.length,
      visits: accounting.visitItems,
      catchUpMs,
      problems,
    });
    for (const phase of killed) {
      expect(phase.accepted.length).toBeGreaterThan(1_000);
      // Only 202s before the kill; what was in flight at the kill got no answer at all.
      expect(Object.keys(phase.statuses)).toEqual(['202']);
    }
    expect(problems).toEqual({});
  });
});
