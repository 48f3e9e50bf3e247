import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoRecentPaymentMarks } from '../../lambdas/adapters/dynamo/recent-payment-marks.js';
import { markerItem, markerKey } from '../../lambdas/adapters/dynamo/payments/payment-items.js';
import { PaymentTimeline } from '../../lambdas/adapters/dynamo/payments/payment-store-timeline.js';
import { memoryTable } from '../support/dynamo.js';

/**
 * An import raises its visitors' payments markers in bulk (`PaymentTimeline.bulkMarkers` with
 * `raise`): read, put where missing or lower, then the raises other writers recorded meanwhile
 * applied again. A marker must never end lower than the latest payment time any writer gave it.
 */
const NOW = Date.UTC(2026, 5, 1);
const SITE = 'example.com';

describe('bulk raise of visitor markers', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  beforeAll(async () => ({ conn, close } = await memoryTable([{ domain: SITE }])));
  afterAll(async () => close());

  const marker = async (visitor: string) =>
    (
      await conn.doc.send(
        new GetCommand({ TableName: conn.table, Key: markerKey(SITE, visitor), ConsistentRead: true }),
      )
    ).Item?.latest;

  it('raises missing and lower markers, leaves higher ones, and mends a raise it overwrote', async () => {
    const timeline = new PaymentTimeline(conn, () => NOW);
    await conn.doc.send(new PutCommand({ TableName: conn.table, Item: markerItem(SITE, 'lower', NOW - 5000) }));
    await conn.doc.send(new PutCommand({ TableName: conn.table, Item: markerItem(SITE, 'higher', NOW - 1000) }));
    // A webhook recorded its raise of `raced` to NOW - 500 (a minute of clock apart), and its marker raise was
    // lost under the bulk put (it landed between the read and the put): the marker holds only the import's time.
    await new DynamoRecentPaymentMarks(conn).record(SITE, 'raced', NOW - 500, NOW - 60_000);

    await timeline.bulkMarkers(
      SITE,
      new Map([
        ['new', NOW - 3000],
        ['lower', NOW - 3000],
        ['higher', NOW - 3000],
        ['raced', NOW - 3000],
      ]),
      true,
    );
    expect(await marker('new')).toBe(NOW - 3000);
    expect(await marker('lower')).toBe(NOW - 3000);
    expect(await marker('higher')).toBe(NOW - 1000);
    expect(await marker('raced')).toBe(NOW - 500);
  });
});
