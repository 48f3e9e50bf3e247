import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  accountEvents,
  prepareDataDir,
  runLoad,
  startServe,
  stopServe,
  waitForCatchUp,
  type ServeProcess,
} from '../../bench/load.js';
import { runCli } from '../support/cli.js';
import { LONG, accountingProblems, report } from './support.js';

/**
 * Load (`docs/reliability.md` "The checks"): `footfall serve` in a child process takes a sustained stream
 * of events from autocannon in this process over loopback; afterwards every
 * accepted event is accounted for on the stream, in the Parquet archive and in
 * the sessionized visits, none twice.
 *
 * Short form: 15 s at a fixed 60 requests/s (about 900 events/s, what the
 * local sessionizer keeps up with), so the catch-up stays short. Long form
 * (`FOOTFALL_RELIABILITY=long`): 60 s as fast as the server answers.
 */
const SECONDS = LONG ? 60 : 15;
const RATE = LONG ? undefined : 60;
const CONNECTIONS = 8;

describe('sustained load on footfall serve (separate process)', () => {
  let dataDir = '';
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    if (serve) await stopServe(serve);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('answers every request 202 and accounts for every accepted event: stream = archive = sessionized, none twice', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-rel-load-'));
    await prepareDataDir(dataDir);
    serve = await startServe(dataDir, ['--sessionize-interval', '1000']);

    const load = await runLoad({
      url: serve.url,
      seconds: SECONDS,
      rate: RATE,
      connections: CONNECTIONS,
      maxRequests: LONG ? 2_000_000 : 5_000,
    }).done;
    expect(load.errors, 'connection errors').toBe(0);
    expect(Object.keys(load.statuses)).toEqual(['202']);
    expect(load.accepted.length).toBeGreaterThan(LONG ? 50_000 : 5_000);

    const catchUpMs = await waitForCatchUp(dataDir, LONG ? 1_800_000 : 150_000);
    expect((await fetch(`${serve.url}/health`)).status).toBe(200);
    const accounting = await accountEvents(dataDir);
    await stopServe(serve);
    serve = undefined;

    // The same count through the CLI an operator would use.
    const sql = runCli([
      '--data',
      dataDir,
      '--json',
      'sql',
      'SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM events',
    ]);
    expect(sql.status, sql.stderr).toBe(0);
    expect(JSON.parse(sql.stdout)).toEqual([{ n: accounting.stream.length, ids: accounting.stream.length }]);

    const problems = accountingProblems(accounting, load.accepted, load.sent);
    // Requests still in flight when the load stopped were written but their 202 never read.
    const unanswered = accounting.stream.length - load.accepted.length;
    await report('load', {
      seconds: Number(load.seconds.toFixed(1)),
      connections: CONNECTIONS,
      rate: RATE ?? 'unthrottled',
      requests: load.requests,
      requestsPerSecond: Math.round(load.requestsPerSecond),
      eventsPerSecond: Math.round(load.eventsPerSecond),
      latencyMs: load.latencyMs,
      acceptedEvents: load.accepted.length,
      streamEvents: accounting.stream.length,
      archiveRows: accounting.archive.length,
      sessionizedEvents: accounting.visits.length,
      visits: accounting.visitItems,
      unansweredInFlightAtStop: unanswered,
      catchUpMs,
      problems,
    });
    expect(problems).toEqual({});
    expect(unanswered).toBeGreaterThanOrEqual(0);
    expect(unanswered).toBeLessThanOrEqual(CONNECTIONS * 50);
  });
});
