import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLocalStream } from '../../lambdas/adapters/local-stream.js';
import { localPaths } from '../../local/service.js';
import { CHROME_UA } from '../support/events.js';
import { runCli, startServeProcess } from '../support/cli.js';

describe('kill -9 of the local service loses no acknowledged event', () => {
  let dataDir = '';
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  it('every event answered 202 before the kill is in the stream after it', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-crash-'));
    expect(runCli(['--data', dataDir, 'accounts', 'add', 'acme']).status).toBe(0);
    expect(
      runCli([
        '--data',
        dataDir,
        'sites',
        'add',
        'example.com',
        '--timezone',
        'UTC',
        '--account',
        'acme',
        '--rate-limit',
        '100000',
      ]).status,
    ).toBe(0);

    const { child, url } = await startServeProcess(dataDir);
    const exited = new Promise((r) => child.once('exit', r));
    const acked: string[] = [];
    let sent = 0;
    let killed = false;
    const send = async (): Promise<void> => {
      while (!killed) {
        const path = `/p${sent++}`;
        try {
          const res = await fetch(`${url}/api/event`, {
            method: 'POST',
            headers: { 'user-agent': CHROME_UA },
            body: JSON.stringify({ n: 'pageview', u: `https://example.com${path}`, s: 'example.com' }),
          });
          if (res.status === 202) acked.push(path);
          if (acked.length >= 300 && !killed) {
            // Kill at once, with other requests still in flight.
            killed = true;
            child.kill('SIGKILL');
          }
        } catch {
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, send));
    await exited;

    const { records } = await readLocalStream(localPaths(dataDir).stream, 0, 1_000_000);
    const written = new Set(records.map((r) => JSON.parse(r.data.toString()).path as string));
    expect(acked.length).toBeGreaterThanOrEqual(300);
    expect(acked.filter((p) => !written.has(p))).toEqual([]);

    // The service starts again on the same data and keeps appending.
    const again = await startServeProcess(dataDir);
    const res = await fetch(`${again.url}/api/event`, {
      method: 'POST',
      headers: { 'user-agent': CHROME_UA },
      body: JSON.stringify({ n: 'pageview', u: 'https://example.com/after-restart', s: 'example.com' }),
    });
    expect(res.status).toBe(202);
    const stopped = new Promise((r) => again.child.once('exit', r));
    again.child.kill('SIGTERM');
    await stopped;
    const after = await readLocalStream(localPaths(dataDir).stream, 0, 1_000_000);
    expect(after.records.map((r) => JSON.parse(r.data.toString()).path)).toContain('/after-restart');
    // The suite's timeout (vitest.reliability.config.ts): three CLI processes and two servers take minutes at a high load.
  });
});
