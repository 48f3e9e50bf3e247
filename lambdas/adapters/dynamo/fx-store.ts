import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { batchWrite } from './batch.js';
import { PK, SK } from './table.js';
import { BUNDLED_FX, mergeTables, type FxTable } from '../../domain/payments/fx.js';
import { PARTITIONS } from './items.js';

/** All override days share one partition: a few hundred small items at most. */
const FX_PK = PARTITIONS.fx.key();
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CODE = /^[A-Z]{3}$/;

/**
 * USD rate overrides in the single table (item FX: `pk = FX`, `sk = YYYY-MM-DD`,
 * `rates` a map of currency → USD per unit, `updated` ISO time). They refresh
 * or refine the bundled table (`BUNDLED_FX`) without a release; see
 * `footfall fx update`.
 */
export class DynamoFxStore {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * Stores each day of `table` as one item, replacing that day's earlier
   * override (BatchWriteItem, 25 per call). Returns the number of days written.
   */
  async putRates(table: FxTable, now: Date = new Date()): Promise<number> {
    const updated = now.toISOString();
    const requests = Object.keys(table.rates)
      .sort()
      .map((day) => ({
        PutRequest: { Item: { [PK]: FX_PK, [SK]: PARTITIONS.fx.items.FX.key(day), rates: table.rates[day]!, updated } },
      }));
    await batchWrite(this.conn, requests);
    return requests.length;
  }

  /** Every override day (Query on the FX partition). Malformed entries are skipped. */
  async loadOverrides(): Promise<FxTable> {
    const rates: FxTable['rates'] = {};
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': FX_PK },
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        const day = item[SK];
        if (typeof day !== 'string' || !DAY.test(day) || typeof item.rates !== 'object' || item.rates === null)
          continue;
        const row = Object.entries(item.rates as Record<string, unknown>).filter(
          (entry): entry is [string, number] =>
            CODE.test(entry[0]) && typeof entry[1] === 'number' && entry[1] > 0 && Number.isFinite(entry[1]),
        );
        if (row.length > 0) rates[day] = Object.fromEntries(row);
      }
    }
    return { rates };
  }
}

/** How long `FxRates` keeps a table before reading the overrides again. */
export const DEFAULT_FX_TTL_MS = 10 * 60_000;

/**
 * The rate table in force: the bundled table with the DynamoDB overrides laid
 * over it, read at most once per `ttlMs` per instance (concurrent callers share
 * one read). When a refresh fails the previous table is served and the next
 * call tries again; with nothing cached yet the error propagates.
 */
export class FxRates {
  private cached: { table: FxTable; at: number } | undefined;
  private loading: Promise<FxTable> | undefined;

  constructor(
    private readonly store: Pick<DynamoFxStore, 'loadOverrides'>,
    private readonly ttlMs: number = DEFAULT_FX_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async table(): Promise<FxTable> {
    if (this.cached && this.now() - this.cached.at < this.ttlMs) return this.cached.table;
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<FxTable> {
    try {
      const overrides = await this.store.loadOverrides();
      const table = Object.keys(overrides.rates).length > 0 ? mergeTables(BUNDLED_FX, overrides) : BUNDLED_FX;
      this.cached = { table, at: this.now() };
      return table;
    } catch (error) {
      if (this.cached) return this.cached.table;
      throw error;
    }
  }
}
