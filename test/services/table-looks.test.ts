import { describe, expect, it } from 'vitest';
import { DynamoLookStore } from '../../lambdas/adapters/dynamo/look-store.js';
import { UnavailableError } from '../../lambdas/domain/errors.js';
import {
  LOOK_ACTIVE_MS,
  LOOK_WRITE_EVERY_MS,
  REFRESH_POLL_MS,
  REFRESH_WAIT_MS,
  REFRESHING_MESSAGE,
  TableLooks,
  freshFilteredVisits,
} from '../../lambdas/services/table-looks.js';
import { FILTERED_VISITS_METHODS, type FilteredVisits } from '../../lambdas/ports.js';
import { functionConnection, type PartitionAccess } from '../../local/iam/partition-guard.js';
import { suiteTable } from '../support/dynamo.js';

/**
 * Looks at a site's reports (`docs/data-model.md`, "Filtered reports", *On demand*): the report function's
 * marks are bounded (at most one write per site per `LOOK_WRITE_EVERY_MS` and instance), a look at an idle site asks
 * for one refresh, and a filtered call waits for a refresh asked for until the operations function records it,
 * with the report and operations functions each held to its synthesized policy.
 */

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 28, 9);

describe('TableLooks over the LOOK items (dynalite)', () => {
  const table = suiteTable();

  /** The report function's looks at `clock`, counting its table writes and the refreshes it asks for. */
  function reportLooks(clock: () => number, sleep?: (ms: number) => Promise<void>) {
    const writes: PartitionAccess[] = [];
    const asked: string[] = [];
    const marks = new DynamoLookStore(
      functionConnection(table(), 'report', (a) => void (a.action === 'dynamodb:UpdateItem' && writes.push(a))),
    );
    const looks = new TableLooks({
      marks,
      refresh: async (site) => void asked.push(site),
      clock,
      sleep,
      logger: console,
    });
    return { looks, writes, asked };
  }
  const ledger = () => new DynamoLookStore(functionConnection(table(), 'operations'));

  it('many requests make few writes: one per site per 5 minutes per instance, two when the site was idle', async () => {
    let now = T0;
    const { looks, writes, asked } = reportLooks(() => now);
    // 300 requests over 25 minutes, one every 5 s.
    for (let i = 0; i < 300; i++, now += 5_000) await looks.seen('busy.test');
    // The first look found no item (idle): the look and its `wanted`; then one look every 5 minutes.
    expect(writes).toHaveLength(2 + Math.ceil((300 * 5_000) / LOOK_WRITE_EVERY_MS) - 1);
    expect(asked).toEqual(['busy.test']);
    // A second instance's look within the hour finds the site looked at: no refresh asked.
    const other = reportLooks(() => now);
    await other.looks.seen('busy.test');
    expect(other.writes).toHaveLength(1);
    expect(other.asked).toEqual([]);
    // An hour after the last look the site is idle again: the next look asks for a refresh.
    now += LOOK_ACTIVE_MS;
    await other.looks.seen('busy.test');
    expect(other.asked).toEqual(['busy.test']);
    const look = await ledger().get('busy.test');
    expect(look).toMatchObject({ looked: now, wanted: now, refreshed: null });
  });

  it('a look the store refuses does not fail the request: it is logged, and the next request tries again', async () => {
    const warned: string[] = [];
    let attempts = 0;
    const looks = new TableLooks({
      marks: {
        look: async () => {
          attempts++;
          throw new Error('ProvisionedThroughputExceededException');
        },
        get: async () => null,
      } as unknown as DynamoLookStore,
      refresh: async () => undefined,
      clock: () => T0,
      logger: { warn: (message: string) => void warned.push(message) },
    });
    await expect(looks.seen('down.test')).resolves.toBeUndefined();
    await looks.seen('down.test');
    expect(attempts).toBe(2);
    expect(warned).toHaveLength(2);
  });

  it('a filtered call after a look at an idle site waits until the operations function records the refresh', async () => {
    let now = T0 + 10 * LOOK_ACTIVE_MS;
    let polls = 0;
    const sleep = async (ms: number) => {
      polls++;
      now += ms;
      // The operations function's refresh, begun at the look, ends after 3 polls.
      if (polls === 3) await ledger().setRefreshed('idle.test', T0 + 10 * LOOK_ACTIVE_MS);
    };
    const { looks } = reportLooks(() => now, sleep);
    const calls: string[] = [];
    const engine = Object.fromEntries(
      FILTERED_VISITS_METHODS.map((m) => [m, async (site: string) => void calls.push(`${m} ${site} after ${polls}`)]),
    ) as unknown as FilteredVisits;
    const filtered = freshFilteredVisits(engine, looks);
    await looks.seen('idle.test');
    await filtered.totals('idle.test', { op: 'and', clauses: [] } as never, { from: '2026-11-01', to: '2026-11-28' });
    expect(calls).toEqual(['totals idle.test after 3']);
    // Seen fresh: the next calls of this instance neither wait nor read.
    await filtered.breakdown('idle.test', {} as never, {} as never, 'source' as never);
    expect(polls).toBe(3);
    expect(calls.at(-1)).toBe('breakdown idle.test after 3');
    // A second instance (another filtered request of the same load) sees no refresh pending: no wait.
    const second = reportLooks(() => now, sleep);
    await second.looks.seen('idle.test');
    await second.looks.fresh('idle.test');
    expect(polls).toBe(3);
  });

  it('answers 503 when the refresh asked for has not begun within the wait', async () => {
    let now = T0 + 20 * LOOK_ACTIVE_MS;
    const { looks } = reportLooks(
      () => now,
      async (ms) => void (now += ms),
    );
    await looks.seen('stuck.test');
    const start = now;
    const error = await looks.fresh('stuck.test').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as Error).message).toBe(REFRESHING_MESSAGE);
    expect(now - start).toBeGreaterThanOrEqual(REFRESH_WAIT_MS);
    expect(now - start).toBeLessThan(REFRESH_WAIT_MS + 2 * REFRESH_POLL_MS);
  });

  it('the report function may write a look but not a refresh; the operations function lists and records them', async () => {
    const now = T0 + 30 * LOOK_ACTIVE_MS;
    const report = new DynamoLookStore(functionConnection(table(), 'report'));
    expect(await report.look('grant.test', now, now - LOOK_ACTIVE_MS)).toBe(false);
    expect(await report.look('grant.test', now + MIN, now - LOOK_ACTIVE_MS)).toBe(true);
    await expect(report.setRefreshed('grant.test', now)).rejects.toThrow(/not authorized/);
    await expect(report.list()).resolves.toBeInstanceOf(Map);
    await ledger().setRefreshed('grant.test', now);
    expect((await ledger().list()).get('grant.test')).toEqual({ looked: now + MIN, wanted: now, refreshed: now });
    // A deleted site's item is not made again by a late refresh.
    await ledger().setRefreshed('gone.test', now);
    expect((await ledger().list()).has('gone.test')).toBe(false);
  });
});
