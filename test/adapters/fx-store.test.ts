import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoFxStore, FxRates } from '../../lambdas/adapters/dynamo/fx-store.js';
import { BUNDLED_FX, usdPerUnit, type FxTable } from '../../lambdas/domain/payments/fx.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { memoryTable, scanAll } from '../support/dynamo.js';

describe('DynamoFxStore and FxRates (dynalite)', () => {
  let db: Awaited<ReturnType<typeof memoryTable>>;
  let conn: DynamoConnection;
  let store: DynamoFxStore;
  beforeAll(async () => {
    db = await memoryTable([]);
    conn = db.conn;
    store = new DynamoFxStore(conn);
  });
  afterAll(async () => db.close());
  beforeEach(async () => {
    // Each test starts with no overrides.
    for (const item of await scanAll(conn)) {
      if (item.pk === 'FX')
        await conn.doc.send(new DeleteCommand({ TableName: conn.table, Key: { pk: item.pk, sk: item.sk } }));
    }
  });

  it('loads nothing when no override was stored', async () => {
    expect(await store.loadOverrides()).toEqual({ rates: {} });
  });

  it('stores one item per day (more than one batch of 25) and loads them back', async () => {
    const rates: FxTable['rates'] = {};
    for (let d = 1; d <= 31; d++) rates[`2026-05-${String(d).padStart(2, '0')}`] = { EUR: 1.1 + d / 1000, GBP: 1.3 };
    expect(await store.putRates({ rates }, new Date('2026-06-01T00:00:00Z'))).toBe(31);
    expect(await store.loadOverrides()).toEqual({ rates });
    const items = (await scanAll(conn)).filter((i) => i.pk === 'FX');
    expect(items).toHaveLength(31);
    expect(items[0]).toEqual({
      pk: 'FX',
      sk: '2026-05-01',
      rates: { EUR: 1.101, GBP: 1.3 },
      updated: '2026-06-01T00:00:00.000Z',
    });
  });

  it('replaces a day stored again', async () => {
    await store.putRates({ rates: { '2026-05-04': { EUR: 1.1, GBP: 1.3 } } });
    await store.putRates({ rates: { '2026-05-04': { EUR: 1.2 } } });
    expect(await store.loadOverrides()).toEqual({ rates: { '2026-05-04': { EUR: 1.2 } } });
  });

  it('serves the bundled table when there are no overrides', async () => {
    expect(await new FxRates(store).table()).toBe(BUNDLED_FX);
  });

  it('lets an override win over the bundled rate from its day on', async () => {
    await store.putRates({ rates: { '2024-07-01': { EUR: 1.2 }, '2024-07-15': { GBP: 1.5 } } });
    const table = await new FxRates(store).table();
    expect(usdPerUnit(table, 'EUR', '2024-07-10')).toBe(1.2); // bundled: 1.0745
    expect(usdPerUnit(table, 'GBP', '2024-07-10')).toBe(1.2672485); // bundled, untouched
    expect(usdPerUnit(table, 'GBP', '2024-07-20')).toBe(1.5);
    expect(usdPerUnit(table, 'GBP', '2024-08-01')).toBe(1.279409); // the next bundled day
    expect(usdPerUnit(BUNDLED_FX, 'EUR', '2024-07-10')).toBe(1.0745);
  });

  it('caches the table for its TTL, then reads the overrides again', async () => {
    let now = 1_000_000;
    const rates = new FxRates(store, 60_000, () => now);
    const first = await rates.table();
    expect(usdPerUnit(first, 'EUR', '2025-01-10')).toBe(BUNDLED_FX.rates['2025-01-02']!.EUR);
    await store.putRates({ rates: { '2025-01-06': { EUR: 1.05 } } });
    now += 59_999;
    expect(await rates.table()).toBe(first);
    now += 1;
    const second = await rates.table();
    expect(second).not.toBe(first);
    expect(usdPerUnit(second, 'EUR', '2025-01-10')).toBe(1.05);
  });

  it('shares one read between concurrent callers', async () => {
    let reads = 0;
    const rates = new FxRates({
      loadOverrides: async () => {
        reads++;
        return store.loadOverrides();
      },
    });
    const tables = await Promise.all([rates.table(), rates.table(), rates.table()]);
    expect(reads).toBe(1);
    expect(new Set(tables).size).toBe(1);
  });

  it('keeps serving the last table when a refresh fails, and fails with nothing cached', async () => {
    let now = 0;
    let fail = false;
    const flaky = {
      loadOverrides: async (): Promise<FxTable> => {
        if (fail) throw new Error('DynamoDB unavailable');
        return { rates: { '2025-01-06': { EUR: 1.05 } } };
      },
    };
    const rates = new FxRates(flaky, 1000, () => now);
    const good = await rates.table();
    fail = true;
    now = 5000;
    expect(await rates.table()).toBe(good);
    await expect(new FxRates(flaky).table()).rejects.toThrow('DynamoDB unavailable');
  });
});
