import { UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { BULK_CONCURRENCY, batchWrite } from './batch.js';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';

/**
 * Bumps a period's change counter (`<pk>` / `<sk>`: the item's `C#<period>`, UpdateItem ADD) and
 * returns its new value: the recompute that follows owns that value and
 * writes its results only over ones computed from an older counter
 * (`docs/data-model.md`, "Payments: a list, and counters recomputed from it";
 * the payment counters and retention's cohorts share this discipline).
 *
 * @param type the item's `type` (PAYMENT_CHANGE, COHORT_CHANGE)
 * @returns the counter after the bump (≥ 1)
 */
export async function bumpChangeCounter(conn: DynamoConnection, pk: string, sk: string, type: string): Promise<number> {
  const { Attributes } = await conn.doc.send(
    new UpdateCommand({
      TableName: conn.table,
      Key: { [PK]: pk, [SK]: sk },
      UpdateExpression: 'ADD n :one SET #type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': type },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(Attributes?.n ?? 1);
}

/** Where a family's change counters are: their partition, and the sort key of a period's (`C#<period>`). */
export interface CounterRange {
  pk: string;
  sk: (period: string) => string;
  /** The first and last period (inclusive, `YYYY-MM-DD` or `YYYY-MM`). */
  from: string;
  to: string;
}

/**
 * The change counters of the periods of `range`, read consistently: one paged Query (the counters
 * are contiguous and < 100 B each: a month's days in one read unit). A period never bumped is absent.
 * @returns each period's counter `n`
 */
export async function readChangeCounters(conn: DynamoConnection, range: CounterRange): Promise<Map<string, number>> {
  const prefix = range.sk('').length;
  const out = new Map<string, number>();
  const query = {
    TableName: conn.table,
    KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
    ExpressionAttributeValues: { ':pk': range.pk, ':from': range.sk(range.from), ':to': range.sk(range.to) },
    ConsistentRead: true,
  };
  for await (const page of paginateQuery({ client: conn.doc }, query))
    for (const item of page.Items ?? []) out.set(String(item[SK]).slice(prefix), Number(item.n ?? 0));
  return out;
}

/** A period's recomputed items for `checkedBatchWrite`: computed from inputs read after its counter was seen at `src`. */
export interface CheckedPeriod {
  period: string;
  src: number;
  items: ReadonlyArray<Record<string, unknown>>;
}

/**
 * Writes recomputed periods' items without a condition (BatchWriteItem, which takes none), each
 * carrying `src`, the period's change counter as read (`readChangeCounters`) before its inputs
 * were, then reads the counters again (`docs/data-model.md`, "Payments: a list, and counters
 * recomputed from it", "The bulk recompute"). A period whose counter did not move had no recompute
 * start between that read and the write, so its write replaced only results from a counter at
 * most `src`, and any input written after the read is followed by a bump and a recompute that
 * writes over it; a period whose counter moved may have lost a newer result: it is returned, for
 * the caller to recompute under the guard (bump, read, conditional Put) before relying on it.
 * `range`: where the counters of `periods` are (every period in it).
 * @returns the periods whose counter moved
 */
export async function checkedBatchWrite(
  conn: DynamoConnection,
  range: CounterRange,
  periods: readonly CheckedPeriod[],
): Promise<string[]> {
  if (periods.length === 0) return [];
  await batchWrite(
    conn,
    periods.flatMap((p) => p.items.map((Item) => ({ PutRequest: { Item: { ...Item, src: p.src } } }))),
    BULK_CONCURRENCY,
  );
  const after = await readChangeCounters(conn, range);
  return periods.filter((p) => (after.get(p.period) ?? 0) !== p.src).map((p) => p.period);
}
