import { CreateTableCommand, DescribeTableCommand, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from './client.js';

/** Partition and sort key attribute names of the single table (`docs/data-model.md`). */
export const PK = 'pk';
export const SK = 'sk';
/** TTL attribute (epoch seconds); AWS deletes expired items, the local timer sweeps them. */
export const TTL_ATTRIBUTE = 'expires_at';

/**
 * Creates the table if it does not exist (local mode and tests; in AWS the CDK
 * stack owns the table). Waits until it is ACTIVE.
 */
export async function ensureTable(conn: DynamoConnection): Promise<void> {
  try {
    await conn.doc.send(new DescribeTableCommand({ TableName: conn.table }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  try {
    await conn.doc.send(
      new CreateTableCommand({
        TableName: conn.table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: PK, AttributeType: 'S' },
          { AttributeName: SK, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: PK, KeyType: 'HASH' },
          { AttributeName: SK, KeyType: 'RANGE' },
        ],
      }),
    );
  } catch (error) {
    // Another process created it first.
    if ((error as Error).name !== 'ResourceInUseException') throw error;
  }
  for (let i = 0; i < 100; i++) {
    const { Table } = await conn.doc.send(new DescribeTableCommand({ TableName: conn.table }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`table ${conn.table} did not become ACTIVE`);
}
