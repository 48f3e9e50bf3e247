import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
