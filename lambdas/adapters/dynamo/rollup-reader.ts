import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { parseRollupItem, rollupPk, type RollupItem } from './rollup-store.js';
import type { Granularity, PaymentDimension, RollupMetric } from '../../domain/rollup.js';
import { paymentRollupPk } from './payment-store.js';

/** Counts of one read: requests made and bytes returned, for the report benchmarks. */
export interface ReadCost {
  requests: number;
  bytes: number;
}

/**
 * Size of an item as DynamoDB counts it (attribute names plus values: UTF-8
 * strings, binary length, about 1 byte per 2 digits of a number; lists and maps
 * add 3 bytes plus their elements). Used to report bytes read per report.
 */
export function itemBytes(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') return Math.ceil(String(value).length / 2) + 1;
  if (value instanceof Uint8Array) return value.length;
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + itemBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + itemBytes(v) + 1, 0);
  return 3 + Object.entries(value as Record<string, unknown>).reduce((n, [k, v]) => n + Buffer.byteLength(k) + itemBytes(v) + 1, 0);
}

/**
 * Reads a metric's rollup items of a site for periods `from`..`to` inclusive
 * (`YYYY-MM-DD` for days, `YYYY-MM` for months), all buckets, with one Query
 * (paged at 1 MB).
 */
export async function readRollups(
  conn: DynamoConnection,
  site: string,
  metric: RollupMetric,
  granularity: Granularity,
  from: string,
  to: string,
  cost?: ReadCost,
): Promise<Array<RollupItem & { period: string }>> {
  const items: Array<RollupItem & { period: string }> = [];
  const query = {
    TableName: conn.table,
    KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
    ExpressionAttributeValues: { ':pk': rollupPk(site, metric), ':from': `${granularity}#${from}#`, ':to': `${granularity}#${to}#~` },
  };
  for await (const page of paginateQuery({ client: conn.doc }, query)) {
    if (cost) {
      cost.requests++;
      for (const item of page.Items ?? []) cost.bytes += itemBytes(item);
    }
    for (const item of page.Items ?? []) items.push({ ...parseRollupItem(item), period: String(item[SK]).split('#')[1] ?? '' });
  }
  return items;
}

/**
 * Reads the payment rollups of a metric (`totals` or a dimension) for periods
 * `from`..`to`: each period's entries by payment key, tombstones included.
 */
export async function readPaymentEntries(
  conn: DynamoConnection,
  site: string,
  metric: 'totals' | PaymentDimension,
  granularity: Granularity,
  from: string,
  to: string,
  cost?: ReadCost,
): Promise<Array<{ period: string; entries: Record<string, number[] | unknown[]> }>> {
  const out: Array<{ period: string; entries: Record<string, unknown[]> }> = [];
  const query = {
    TableName: conn.table,
    KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
    ExpressionAttributeValues: { ':pk': paymentRollupPk(site, metric), ':from': `${granularity}#${from}`, ':to': `${granularity}#${to}~` },
  };
  for await (const page of paginateQuery({ client: conn.doc }, query)) {
    if (cost) {
      cost.requests++;
      for (const item of page.Items ?? []) cost.bytes += itemBytes(item);
    }
    for (const item of page.Items ?? []) out.push({ period: String(item[SK]).slice(2), entries: JSON.parse(String(item.e ?? '{}')) });
  }
  return out;
}
