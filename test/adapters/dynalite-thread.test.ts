import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createDynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { openLocalDynamo } from '../../local/dynalite.js';
import { startServeProcess } from '../support/cli.js';

/** Whether something listens on the loopback port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** The dynalite port a data directory's holder published (`local/dynalite.ts`). */
const holderPort = async (dataDir: string) =>
  (JSON.parse(await readFile(join(dataDir, 'dynalite.json'), 'utf8')) as { port: number }).port;

/**
 * `serve` runs dynalite in a thread of its own (`local/dynalite-thread.ts`, `docs/architecture.md` "Local mode"):
 * it answers while the server's thread is busy, and it ends with the service, whichever way the service stops.
 */
describe('the dynalite thread of serve', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const dataDir = async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'ff-dyn-thread-')), 'data');
    dirs.push(join(dir, '..'));
    return dir;
  };

  it('answers while the thread that opened it is blocked, and on close frees the database for the next holder', async () => {
    const dir = await dataDir();
    const db = await openLocalDynamo(dir, 'serve');
    const conn = createDynamoConnection({ table: 'thread', endpoint: db.endpoint, credentials: db.credentials });
    await ensureTable(conn);
    await conn.doc.send(new PutCommand({ TableName: conn.table, Item: { pk: 'p', sk: 's', n: 7 } }));
    // A request from another process while this thread waits synchronously for it: dynalite in this thread
    // could not answer (the call would time out); its answer, a refusal of the unsigned request, is proof.
    const status = execFileSync(
      process.execPath,
      ['-e', `fetch(${JSON.stringify(db.endpoint)}, { method: 'POST' }).then((r) => console.log(r.status))`],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(status.trim()).toBe('400');
    const port = await holderPort(dir);
    conn.doc.destroy();
    await db.close();
    expect(await listening(port)).toBe(false);
    // LevelDB allows one holder: opening it again works only once the thread has closed it, with the write kept.
    const again = await openLocalDynamo(dir, 'cli');
    const reader = createDynamoConnection({
      table: 'thread',
      endpoint: again.endpoint,
      credentials: again.credentials,
    });
    try {
      const read = await reader.doc.send(new GetCommand({ TableName: reader.table, Key: { pk: 'p', sk: 's' } }));
      expect(read.Item).toEqual({ pk: 'p', sk: 's', n: 7 });
    } finally {
      reader.doc.destroy();
      await again.close();
    }
  });

  it.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)(
    'footfall serve stopped by %s leaves no dynalite listening',
    async (signal) => {
      const dir = await dataDir();
      const serve = await startServeProcess(dir, ['--sessionize-interval', '0']);
      const port = await holderPort(dir);
      expect(await listening(port)).toBe(true);
      serve.child.kill(signal);
      const code = await serve.exited;
      // Ctrl-C and SIGTERM close the service (exit 0); kill -9 ends the process and its threads with it.
      if (signal !== 'SIGKILL') expect(code).toBe(0);
      expect(await listening(port)).toBe(false);
    },
  );
});
