import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK, SK } from '../table.js';

/**
 * The item operations the payment-list families share (`docs/data-model.md`, "Payments: a list,
 * and counters recomputed from it"): the recompute guard and the reads of a period range.
 */

/** A table key of `{ pk, sk }`. */
export const toKey = (k: { pk: string; sk: string }) => ({ [PK]: k.pk, [SK]: k.sk });

/** Swallows a failed write condition (the item was newer, or not ours); rethrows anything else. */
export function ignoreCondition(error: unknown): void {
  if (!(error instanceof ConditionalCheckFailedException)) throw error;
}

/**
 * Puts a recomputed item unless one computed from a newer change counter is there: the recompute
 * that bumped the counter to `src` owns it, and of two racing recomputes the one that saw more wins.
 */
export async function writeGuarded(conn: DynamoConnection, item: Record<string, unknown>, src: number): Promise<void> {
  await conn.doc
    .send(
      new PutCommand({
        TableName: conn.table,
        Item: { ...item, src },
        ConditionExpression: `attribute_not_exists(${PK}) OR src < :src`,
        ExpressionAttributeValues: { ':src': src },
      }),
    )
    .catch(ignoreCondition);
}

/** Every item of partition `pk` with a sort key from `from` to `to` (inclusive), in sort key order (a paged Query). */
export async function queryBetween(
  conn: DynamoConnection,
  pk: string,
  from: string,
  to: string,
  consistent: boolean,
): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  const query = {
    TableName: conn.table,
    KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
    ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
    ConsistentRead: consistent,
  };
  for await (const page of paginateQuery({ client: conn.doc }, query)) out.push(...(page.Items ?? []));
  return out;
}
