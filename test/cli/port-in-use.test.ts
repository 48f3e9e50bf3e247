import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PortUnavailableError, startLocalService } from '../../local/service.js';
import { runCli } from '../support/cli.js';

/** A port in use is one line naming the port and how to choose another, and a non-zero exit, not a hang. */
describe('serve and start on a port already in use', () => {
  let blocker: Server;
  let port = 0;
  let dataDir = '';
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-port-'));
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    port = (blocker.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('footfall serve exits 1 with one line naming the port, --port and PORT', () => {
    const result = runCli(['--data', dataDir, 'serve', '--port', String(port)]);
    // spawnSync's timeout would leave status null (-1 here): exiting at all is the point
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual([
      `error: port ${port} on 127.0.0.1 is already in use: stop what listens there, or choose another port with --port <n> or the PORT environment variable`,
    ]);
    expect(result.stdout).toBe('');
  });

  it('the local service (what start and serve run) rejects with PortUnavailableError and releases the data directory', async () => {
    const failed = startLocalService({ dataDir, port, app: true, sessionizeIntervalMs: 50 });
    await expect(failed).rejects.toBeInstanceOf(PortUnavailableError);
    await expect(failed).rejects.toMatchObject({ port, code: 'EADDRINUSE' });
    // The directory is free again: a service on another port can hold it.
    const service = await startLocalService({
      dataDir,
      port: 0,
      app: false,
      sessionizeIntervalMs: 0,
      dynaliteThread: false,
    });
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await service.close();
  });
});
