import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSecretBox } from '../../lambdas/adapters/secrets/local-secret-box.js';
import { importRunDeps, importStartDeps } from '../../lambdas/wiring/import-deps.js';
import { paddleSource } from '../../lambdas/adapters/history/paddle.js';
import { dynamoPaymentDeps } from '../../lambdas/wiring/payment-deps.js';
import { readPage } from '../../lambdas/services/history-pages.js';
import { mapPage } from '../../lambdas/domain/payments/history-source.js';
import { importPayments } from '../../lambdas/services/payment-import.js';
import {
  runHistoryImport,
  startHistoryImport,
  type ImportJob,
  type ImportRunDeps,
} from '../../lambdas/services/history-import.js';
import { ConflictError } from '../../lambdas/domain/errors.js';
import { ApiStandIn } from '../support/api-stand-in.js';
import { PADDLE, paddleApi } from '../support/paddle-stand-in.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { site } from '../support/events.js';

/**
 * The app's provider history import as a job (`lambdas/services/history-import.ts`): started with a
 * key that is stored sealed and removed at the end, run in batches that checkpoint the list and
 * cursor, resumed after a crash between a batch's import and its save, a 429 backed off at least its
 * Retry-After; against the Paddle stand-in (its documented example objects, two a page).
 */

const KEY = 'pdl_sdbx_apikey_01h8c6tbrkpdd7vx61w7b1test';
const DOMAIN = site().domain;
const everything = { since: null, until: null };
/** What the stand-in serves of its lists: completed transactions, refund adjustments, subscriptions. */
const SERVED = PADDLE.transactions!.filter((t) => t.status === 'completed').length + 3 + 1;

let api: ApiStandIn;
let base: URL;
let dir: string;
let box: LocalSecretBox;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ff-import-job-'));
  box = await LocalSecretBox.open(dir);
});
afterAll(async () => rm(dir, { recursive: true, force: true }));
afterEach(async () => api?.close());

async function fixture() {
  api = new ApiStandIn(paddleApi);
  base = await api.start();
  const table = await memoryTable();
  const waits: number[] = [];
  const invoked: Array<[string, string, string]> = [];
  const run: ImportRunDeps = {
    ...importRunDeps(table.conn, box, Date.now, { FOOTFALL_PADDLE_API: base.href }),
    pages: { wait: async (ms) => void waits.push(ms) },
    batchObjects: 2,
  };
  const start = importStartDeps(table.conn, box, async (s, p, r) => void invoked.push([s, p, r]), Date.now);
  return { table, run, start, waits, invoked };
}

const begin = (start: Parameters<typeof startHistoryImport>[0]) =>
  startHistoryImport(start, {
    site: DOMAIN,
    provider: 'paddle',
    apiKey: KEY,
    range: everything,
    scope: null,
    by: 'ana@acme.test',
  });

/** The payment rows of a table (versions and counters aside, which count writes). */
const paymentRows = async (conn: Parameters<typeof scanAll>[0]) =>
  (await scanAll(conn, ['rev', 'ver', 'src', 'n', 'updated'])).filter((i) => String(i.pk).startsWith('PAY'));

/** The rows a direct bulk import of every object the stand-in serves leaves. */
async function directRows(): Promise<Record<string, unknown>[]> {
  const table = await memoryTable();
  try {
    const source = paddleSource(KEY, base);
    const facts = [];
    for (const kind of source.kinds)
      for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
        const page: Awaited<ReturnType<typeof readPage>> = await readPage(source, kind, cursor, everything);
        facts.push(...mapPage(source, kind, page.objects).facts);
        cursor = page.next;
      }
    await importPayments(dynamoPaymentDeps(table.conn), site(), facts);
    return await paymentRows(table.conn);
  } finally {
    await table.close();
  }
}

describe('provider history import jobs', () => {
  it('starts with the key sealed, runs every list in batches to the end, counts each object once and deletes the key', async () => {
    const { table, run, start, invoked } = await fixture();
    try {
      const job = await begin(start);
      expect(invoked).toEqual([[DOMAIN, 'paddle', job.run]]);
      const stored = JSON.stringify(await scanAll(table.conn));
      expect(stored).not.toContain(KEY);
      expect(stored).toContain('sealed_key');
      await expect(begin(start)).rejects.toThrow(ConflictError);

      expect(await runHistoryImport(run, DOMAIN, 'paddle', job.run, Date.now() + 60_000)).toBe('done');
      const done = (await run.jobs.get(DOMAIN, 'paddle'))!;
      expect(done).toMatchObject({ status: 'done', sealedKey: null, error: null, kind: 3, cursor: null });
      expect(done.counts.read).toBe(SERVED);
      expect(done.counts.imported + done.counts.skipped + done.counts.failed).toBe(SERVED);
      expect(done.counts.imported).toBeGreaterThan(0);
      expect(await paymentRows(table.conn)).toEqual(await directRows());
    } finally {
      await table.close();
    }
  });

  it('resumes after a crash between a batch import and its save: nothing lost, nothing counted twice', async () => {
    const { table, run, start } = await fixture();
    try {
      const job = await begin(start);
      // The third save (the second batch's) never happens: the process dies after the import, before the checkpoint.
      let saves = 0;
      const crashing: ImportRunDeps = {
        ...run,
        jobs: {
          get: (s, p) => run.jobs.get(s, p),
          put: async (next, expected) => {
            if (++saves >= 2) throw new Error('killed');
            return run.jobs.put(next, expected);
          },
        },
      };
      await expect(runHistoryImport(crashing, DOMAIN, 'paddle', job.run, Date.now() + 60_000)).rejects.toThrow(
        'killed',
      );
      const saved = (await run.jobs.get(DOMAIN, 'paddle'))!;
      expect(saved).toMatchObject({ status: 'running', kind: 0 });
      expect(saved.cursor).not.toBeNull();
      expect(saved.counts.read).toBe(2);

      // Lambda's retry of the same invocation goes on at the saved cursor.
      expect(await runHistoryImport(run, DOMAIN, 'paddle', job.run, Date.now() + 60_000)).toBe('done');
      const done = (await run.jobs.get(DOMAIN, 'paddle'))!;
      expect(done.counts.read).toBe(SERVED);
      expect(api.requests.filter((r) => r.startsWith('/transactions?')).length).toBe(3);
      expect(await paymentRows(table.conn)).toEqual(await directRows());
    } finally {
      await table.close();
    }
  });

  it('backs off a 429 at least its Retry-After and asks the same page again', async () => {
    const { table, run, start, waits } = await fixture();
    try {
      api.fail = {
        path: '/adjustments',
        nth: 2,
        answer: { status: 429, body: { error: 'too many' }, headers: { 'retry-after': '7' } },
      };
      const job = await begin(start);
      expect(await runHistoryImport(run, DOMAIN, 'paddle', job.run, Date.now() + 60_000)).toBe('done');
      expect(waits).toEqual([7000]);
      const adjustments = api.requests.filter((r) => r.startsWith('/adjustments?'));
      expect(adjustments[1]).toBe(adjustments[2]);
      expect((await run.jobs.get(DOMAIN, 'paddle'))!.counts.read).toBe(SERVED);
    } finally {
      await table.close();
    }
  });

  it('stops with the error in words and without the key when the provider refuses it; a new start resumes at the cursor', async () => {
    const { table, run, start } = await fixture();
    try {
      api.fail = { path: '/adjustments', nth: 1, answer: { status: 403, body: { error: 'forbidden' } } };
      const first = await begin(start);
      expect(await runHistoryImport(run, DOMAIN, 'paddle', first.run, Date.now() + 60_000)).toBe('failed');
      const failed = (await run.jobs.get(DOMAIN, 'paddle'))!;
      expect(failed).toMatchObject({ status: 'failed', sealedKey: null, kind: 1, cursor: null });
      expect(failed.error).toMatch(/Paddle refused the key \(403\)/);

      const second = await begin(start);
      expect(second).toMatchObject({ kind: 1, counts: failed.counts, started: failed.started });
      const before = api.requests.length;
      expect(await runHistoryImport(run, DOMAIN, 'paddle', second.run, Date.now() + 60_000)).toBe('done');
      expect(api.requests.slice(before).some((r) => r.startsWith('/transactions?'))).toBe(false);
      expect((await run.jobs.get(DOMAIN, 'paddle'))!.counts.read).toBe(SERVED);
    } finally {
      await table.close();
    }
  });

  it('a run past its deadline saves nothing and asks for the next; a run of an older invocation stops', async () => {
    const { table, run, start } = await fixture();
    try {
      const job: ImportJob = await begin(start);
      expect(await runHistoryImport(run, DOMAIN, 'paddle', job.run, Date.now() - 1)).toBe('continue');
      expect(api.requests).toEqual([]);
      expect(await runHistoryImport(run, DOMAIN, 'paddle', 'newer', Date.now() - 1)).toBe('continue');
      // The older invocation finds the job taken over at its first save.
      const stale: ImportRunDeps = {
        ...run,
        jobs: { ...run.jobs, get: async () => ({ ...job }), put: run.jobs.put.bind(run.jobs) },
      };
      expect(await runHistoryImport(stale, DOMAIN, 'paddle', job.run, Date.now() + 60_000)).toBe('superseded');
    } finally {
      await table.close();
    }
  });
});
