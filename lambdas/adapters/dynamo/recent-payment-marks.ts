import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { ttlOf } from './expiry.js';
import type { RecentPaymentMarks } from '../../ports.js';
import { PARTITIONS } from './items.js';

/**
 * How long a RECENT_PAYMENT_MARK is kept (ms): DynamoDB's TTL deletes it
 * after this (within days; readers read by time, so the ones not yet deleted
 * cost nothing). It must exceed the longest window any reader asks for
 * (`ShardVisitCache`: its entries' age bound plus a margin).
 */
export const RECENT_MARK_TTL_MS = 2 * 3_600_000;

/** Partition of a namespace's RECENT_PAYMENT_MARK items. */
export const recentMarksPk = (site: string) => PARTITIONS.recentPaymentMarks.key(site);
const { RECENT_PAYMENT_MARK } = PARTITIONS.recentPaymentMarks.items;

/**
 * RECENT_PAYMENT_MARK items (`docs/data-model.md`): one per raise of a
 * visitor's payments marker, `RPM#<site>` / `<raise time ms, 13 digits>#<visitor>`
 * with the marker's new time (`latest`), and one per bulk rewrite of markers
 * (`<ms>#`, `reset`). They let the sessionizer know a visitor's marker
 * without reading the visitor's partition (`ShardVisitCache`): one strongly
 * consistent Query per namespace and batch instead of one per visitor.
 * Each item is < 200 B; the partition holds what was raised in the last
 * `RECENT_MARK_TTL_MS` (plus TTL's lag in AWS; locally, in dynalite, which
 * has no TTL, they stay: ~120 B per payment placed on a timeline).
 */
export class DynamoRecentPaymentMarks implements RecentPaymentMarks {
  constructor(private readonly conn: DynamoConnection) {}

  /** Records that `visitor`'s marker is being raised to `latest` (ms) at `nowMs`: written before the marker itself. */
  async record(site: string, visitor: string, latest: number, nowMs: number): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: {
          [PK]: recentMarksPk(site),
          [SK]: RECENT_PAYMENT_MARK.key(nowMs, visitor),
          type: 'RECENT_PAYMENT_MARK',
          visitor,
          latest,
          ...ttlOf(nowMs + RECENT_MARK_TTL_MS),
        },
      }),
    );
  }

  /** Records that markers of any number of visitors are being rewritten at `nowMs` (a bulk load): written before them. */
  async recordReset(site: string, nowMs: number): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: {
          [PK]: recentMarksPk(site),
          [SK]: RECENT_PAYMENT_MARK.forms.reset(nowMs),
          type: 'RECENT_PAYMENT_MARK',
          reset: true,
          ...ttlOf(nowMs + RECENT_MARK_TTL_MS),
        },
      }),
    );
  }

  /** Raises recorded at or after `fromMs`, in pages of 1,000 items (`RecentPaymentMarks.since`). */
  async since(site: string, fromMs: number): Promise<{ latest: Map<string, number>; reset: boolean }> {
    const latest = new Map<string, number>();
    let reset = false;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.conn.doc.send(
        new QueryCommand({
          TableName: this.conn.table,
          KeyConditionExpression: `${PK} = :pk AND ${SK} >= :from`,
          ExpressionAttributeValues: { ':pk': recentMarksPk(site), ':from': RECENT_PAYMENT_MARK.range.from(fromMs) },
          ConsistentRead: true,
          Limit: 1000,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        if (item.reset === true) reset = true;
        else {
          const visitor = String(item.visitor);
          latest.set(visitor, Math.max(latest.get(visitor) ?? Number.NEGATIVE_INFINITY, Number(item.latest)));
        }
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return { latest, reset };
  }
}
