import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DynamoErasureStore } from '../../lambdas/adapters/dynamo/erasure-store.js';
import { dynamoOperationsDeps } from '../../lambdas/wiring/operations-deps.js';
import { advanceOperations } from '../../lambdas/services/operations.js';
import { functionConnection } from '../../local/iam/partition-guard.js';
import { functionArchiveEraser, functionArchiveReader } from '../../local/iam/stand-ins.js';
import { erasureView, newErasureRequest, type PendingErasure } from '../../lambdas/services/erasure-requests.js';
import { FieldError } from '../../lambdas/domain/errors.js';
import { createTelemetry } from '../../lambdas/observability/telemetry.js';
import { DuckDbArchiveReader } from '../../local/archive-reader.js';
import { LocalArchiveEraser } from '../../local/archive-eraser.js';
import { localPaths } from '../../local/service.js';
import { LocalVisitTable } from '../../local/visit-table.js';
import { runSql } from '../../local/sql.js';
import { scanAll } from '../support/dynamo.js';
import { DOMAIN, NOW, startScenario } from './scenario.js';

/** The fence and the drain of these runs, ms: the waits a run must not sleep through. */
const WAIT_MS = 60_000;

describe('erasure requests: queued by the app, driven to the end by scheduled runs, resumed after crashes', () => {
  let s: Awaited<ReturnType<typeof startScenario>>;
  beforeEach(async () => {
    s = await startScenario();
  }, 120_000);
  afterEach(async () => s.svc.cleanup());

  const archived = async (visitor: string) =>
    Number(
      (await runSql(localPaths(s.svc.dataDir).archive, `SELECT count(*) FROM events WHERE visitor_id = '${visitor}'`))
        .rows[0]![0],
    );
  const money = (r: Awaited<ReturnType<typeof s.read>>) => ({
    payments: r.payments.rows.map((p) => [p.provider_payment_id, p.amount_usd, p.net_usd]).sort(),
    totals: Object.fromEntries(
      Object.entries(r.overview.current).filter(
        ([k]) => /revenue|payment|usd/i.test(k) && !/matched|per_visitor/.test(k),
      ),
    ),
  });

  it('by customer id: five runs, a crash after the items step and one in the rebuild; no trace, the money stays', async () => {
    const before = await s.read();
    let now = NOW;
    const clock = () => now;
    const queue = new DynamoErasureStore(s.svc.dynamo);
    const crashes = { save: 0, catchUp: 0 };
    // The Lambda dies right after erasing the items, before it saves that it did: the person's ids must survive the retry.
    const crashingQueue = Object.assign(Object.create(queue) as DynamoErasureStore, {
      save: async (r: PendingErasure) => {
        // Both the step's save and the failure's: nothing of the run after the items is kept.
        if (r.phase === 'waiting for the archive' && crashes.save++ < 2) throw new Error('Task timed out');
        return queue.save(r);
      },
    });
    const logged: unknown[] = [];
    const { logger } = createTelemetry('test');
    logger.error = (...args: unknown[]) => void logged.push(args);
    // The operations function's code on its role's policy (local/iam/policies.json), as the twin runs it: a denial fails the run.
    const deps = dynamoOperationsDeps(functionConnection(s.svc.dynamo, 'operations'), {
      archive: functionArchiveReader(new DuckDbArchiveReader(localPaths(s.svc.dataDir).archive), 'operations'),
      eraser: functionArchiveEraser(new LocalArchiveEraser(localPaths(s.svc.dataDir).archive), 'operations'),
      fenceMs: WAIT_MS,
      drainMs: WAIT_MS,
      catchUp: async () => {
        // The second catch-up is the rebuild's fence: it fails once, mid-rebuild.
        if (++crashes.catchUp === 2) throw new Error('connection reset');
        await s.svc.sessionize();
        await s.svc.archive();
      },
      clock,
      logger,
    });
    deps.erasures.queue = crashingQueue;
    // The visit table's writer, recording which sites it is told to drop (no site to refresh).
    const dropped: string[] = [];
    const visitTable = Object.assign(new LocalVisitTable(localPaths(s.svc.dataDir).visitTable), {
      dropSite: async (site: string) => void dropped.push(site),
    });
    deps.visitTable = {
      archive: functionArchiveReader(new DuckDbArchiveReader(localPaths(s.svc.dataDir).archive), 'operations'),
      table: visitTable,
      payments: { listPayments: async () => [], monthCounters: async () => new Map(), listedMonth: async () => [] },
      rates: async () => () => 1,
      sites: { listSites: async () => [], getSite: async () => null },
      clock,
      logger,
    };
    const run = () => advanceOperations(deps, now + 10 * WAIT_MS);
    const pending = async () => (await queue.pending(DOMAIN))[0];

    await queue.add(newErasureRequest(DOMAIN, { kind: 'customer', id: 'cus_1', confirm: DOMAIN }, now, 'req-1'));
    expect(erasureView((await pending())!)).toMatchObject({ status: 'pending', phase: 'queued', percent: 0 });

    // Run 1: the person found and saved, the items erased, then the crash before the save.
    await expect(run()).rejects.toThrow('Task timed out');
    expect((await pending())!).toMatchObject({ phase: 'erasing items', visitors: ['visitor-0001'], error: null });
    // Run 2: the items again (nothing left to change), then the archive's fence has not passed: no sleeping.
    expect(await run()).toEqual({ deletions: 0, erasures: 0, visitDays: 0, refreshed: 0 });
    expect(erasureView((await pending())!)).toMatchObject({ status: 'running', phase: 'waiting for the archive' });
    expect(await archived('visitor-0001')).toBe(8);

    // Run 3: the archive rewritten, the rebuild begun; its fence starts now.
    now += WAIT_MS;
    await run();
    expect(await archived('visitor-0001')).toBe(0);
    expect((await pending())!).toMatchObject({ phase: 'rebuilding', generation: 1 });
    expect((await s.site()).building).toBe(1);
    // Run 4: the fence has passed, the catch-up fails: logged, retried.
    now += WAIT_MS;
    await run();
    expect((await pending())!.error).toMatch(/rebuilding/);
    expect(logged).toHaveLength(2);
    expect(JSON.stringify(logged)).not.toMatch(/cus_1|visitor-0001|connection reset/);
    // Run 5: sessionized, credited, switched; the old generation waits for its readers to drain.
    await run();
    expect((await s.site()).generation).toBe(1);
    expect(erasureView((await pending())!).percent).toBe(99);
    // Run 6: the old generation deleted, the audit record written, the request (and the ids in it) gone.
    now += WAIT_MS;
    expect(dropped).toEqual([]);
    expect(await run()).toEqual({ deletions: 0, erasures: 1, visitDays: 0, refreshed: 0 });
    // The erased person's rows and dictionary values leave the visit table with the site's whole table.
    expect(dropped).toEqual([DOMAIN]);
    expect(await queue.pending()).toEqual([]);
    const [record, ...more] = await queue.records(DOMAIN, 20);
    expect(more).toEqual([]);
    expect(record).toMatchObject({ kind: 'customer', visitors: 1, payments: 2, customers: 1, archive_events: 8 });
    expect(record!.generation).toBe(1);

    const items = JSON.stringify(await scanAll(s.svc.dynamo));
    expect(items).not.toContain('cus_1');
    expect(items).not.toContain('visitor-0001');
    expect(items).toContain('visitor-0002');
    const after = await s.read();
    expect(money(after)).toEqual(money(before));
    expect(Object.keys(money(before).totals).length).toBeGreaterThan(0);
    expect(after.overview.current).toMatchObject({ visitors: 2, payments: 3 });
    expect(JSON.stringify({ ...after, timelines: [] })).not.toContain('visitor-0001');
  }, 180_000);
});

// No scenario: the request and its view are values.
describe('erasure requests: what is queued and shown', () => {
  it('an email is refused with the way to the customer id; the progress names no id', () => {
    expect(() => newErasureRequest(DOMAIN, { kind: 'email', id: 'a@b.test', confirm: DOMAIN }, NOW, 'r')).toThrow(
      FieldError,
    );
    const view = erasureView({
      ...newErasureRequest(DOMAIN, { kind: 'visitor', id: 'visitor-0003', confirm: DOMAIN }, NOW, 'r'),
      phase: 'rebuilding',
      fraction: 0.5,
    });
    expect(view).toEqual({
      id: 'r',
      kind: 'visitor',
      requested: new Date(NOW).toISOString(),
      status: 'running',
      phase: 'rebuilding',
      percent: 65,
      error: null,
    });
  });
});
