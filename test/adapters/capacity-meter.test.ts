import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBClient, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { HttpRequest } from '@smithy/types';
import { createDynamoConnection, type DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { attachCapacityMeter, CapacityMeter } from '../../lambdas/adapters/dynamo/capacity-meter.js';
import { ensureTable } from '../../lambdas/adapters/dynamo/table.js';
import { startMemoryDynalite } from '../../local/dynalite.js';

/**
 * An item of exactly `bytes` bytes by DynamoDB's item-size rule: the UTF-8 bytes of each attribute
 * name plus its string value ("Item sizes and formats", DynamoDB Developer Guide). `pk` (2+1),
 * `sk` (2+len) and `body` (4+n).
 */
function itemOf(sk: string, bytes: number): Record<string, string> {
  const n = bytes - 3 - (2 + sk.length) - 4;
  return { pk: 'p', sk, body: 'x'.repeat(n) };
}

describe('CapacityMeter against dynalite', () => {
  let db: { endpoint: string; close(): Promise<void> };
  let conn: DynamoConnection;
  const meter = new CapacityMeter();

  beforeAll(async () => {
    db = await startMemoryDynalite();
    conn = createDynamoConnection({ table: 'meter', endpoint: db.endpoint, maxAttempts: 1, capacityMeter: meter });
    await ensureTable(conn);
  });
  afterAll(async () => {
    conn.doc.destroy();
    await db.close();
  });

  const put = (item: Record<string, string>) => conn.doc.send(new PutCommand({ TableName: conn.table, Item: item }));

  // AWS: a write costs 1 WRU per KB of the item, rounded up; an overwrite or update costs the larger
  // of the item before and after ("Read/write capacity mode", DynamoDB Developer Guide).
  it.each([
    [20, 1],
    [1024, 1],
    [1025, 2],
    [2048, 2],
    [2049, 3],
    [10_000, 10],
  ])('a PutItem of %i bytes costs %i WCU', async (bytes, wcu) => {
    const { total, byOperation } = await meter.measure(() => put(itemOf(`w${bytes}`, bytes)));
    expect(total.wcu).toBe(wcu);
    expect(total.rcu).toBe(0);
    expect(byOperation.PutItem).toMatchObject({ calls: 1, requests: 1, items: 1 });
    expect(total.bytesSent).toBeGreaterThan(bytes);
  });

  it('an update that shrinks an item costs the size before it', async () => {
    await put(itemOf('shrink', 3000));
    const { total } = await meter.measure(() =>
      conn.doc.send(
        new UpdateCommand({ TableName: conn.table, Key: { pk: 'p', sk: 'shrink' }, UpdateExpression: 'REMOVE body' }),
      ),
    );
    expect(total.wcu).toBe(3);
  });

  // AWS: a read costs 1 RRU per 4 KB rounded up when strongly consistent, half that when eventually
  // consistent; a missing item still costs the minimum.
  it.each([
    [4096, false, 0.5],
    [4097, false, 1],
    [4096, true, 1],
    [4097, true, 2],
    [9000, false, 1.5],
  ])('a GetItem of %i bytes (consistent %s) costs %d RCU', async (bytes, consistent, rcu) => {
    const sk = `r${bytes}${consistent}`;
    await put(itemOf(sk, bytes));
    const { total } = await meter.measure(() =>
      conn.doc.send(new GetCommand({ TableName: conn.table, Key: { pk: 'p', sk }, ConsistentRead: consistent })),
    );
    expect(total).toMatchObject({ rcu, wcu: 0, items: 1, requests: 1 });
    expect(total.bytesReceived).toBeGreaterThan(bytes - 100);
  });

  it('a missing item costs 0.5 RCU and counts no item', async () => {
    const { total } = await meter.measure(() =>
      conn.doc.send(new GetCommand({ TableName: conn.table, Key: { pk: 'p', sk: 'none' } })),
    );
    expect(total).toMatchObject({ rcu: 0.5, items: 0 });
  });

  it('a Query rounds the sum of its items, a BatchGetItem each item', async () => {
    for (let i = 0; i < 3; i++) await put({ ...itemOf(`q${i}`, 3000), pk: 'q' });
    const query = await meter.measure(() =>
      conn.doc.send(
        new QueryCommand({
          TableName: conn.table,
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': 'q' },
        }),
      ),
    );
    // 9000 bytes → ceil(9000 / 4096) = 3 × 0.5.
    expect(query.total).toMatchObject({ rcu: 1.5, items: 3 });
    const batch = await meter.measure(() =>
      conn.doc.send(
        new BatchGetCommand({
          RequestItems: { [conn.table]: { Keys: [0, 1, 2].map((i) => ({ pk: 'q', sk: `q${i}` })) } },
        }),
      ),
    );
    // Each 3000-byte item rounds up to 4 KB: 3 × 0.5.
    expect(batch.total).toMatchObject({ rcu: 1.5, items: 3, calls: 1, requests: 1 });
  });

  it('a Query that matches nothing counts the minimum read unit AWS bills (dynalite reports 0)', async () => {
    const query = (ConsistentRead: boolean) =>
      meter.measure(() =>
        conn.doc.send(
          new QueryCommand({
            TableName: conn.table,
            KeyConditionExpression: 'pk = :p',
            ExpressionAttributeValues: { ':p': 'nothing' },
            ConsistentRead,
          }),
        ),
      );
    expect((await query(false)).total).toMatchObject({ rcu: 0.5, items: 0 });
    expect((await query(true)).total).toMatchObject({ rcu: 1, items: 0 });
  });

  it('a BatchWriteItem counts each item (its ConsumedCapacity is a list)', async () => {
    const items = Array.from({ length: 25 }, (_, i) => ({ ...itemOf(`b${i}`, 1500), pk: 'b' }));
    const { total, byOperation } = await meter.measure(() =>
      conn.doc.send(
        new BatchWriteCommand({ RequestItems: { [conn.table]: items.map((Item) => ({ PutRequest: { Item } })) } }),
      ),
    );
    expect(byOperation.BatchWriteItem).toMatchObject({ calls: 1, requests: 1, items: 25, wcu: 50 });
    expect(total.wcu).toBe(50);
  });

  it('a refused conditional write counts with the 1 WCU floor AWS bills', async () => {
    await put(itemOf('cond', 100));
    await expect(
      meter.measure(() =>
        conn.doc.send(
          new PutCommand({
            TableName: conn.table,
            Item: itemOf('cond', 100),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      ),
    ).rejects.toThrow(/conditional/i);
    expect(meter.snapshot().PutItem).toMatchObject({ conditionFailed: 1 });
  });

  it('operations without ConsumedCapacity are counted as calls and requests only', async () => {
    const { byOperation } = await meter.measure(() =>
      conn.doc.send(new DescribeTableCommand({ TableName: conn.table })),
    );
    expect(byOperation.DescribeTable).toMatchObject({ calls: 1, requests: 1, rcu: 0, wcu: 0, items: 0 });
  });

  it('counts in each measure only the requests its own work made, however they interleave', async () => {
    for (let i = 0; i < 3; i++) await put(itemOf(`mx${i}`, 100));
    const get = (sk: string) => conn.doc.send(new GetCommand({ TableName: conn.table, Key: { pk: 'p', sk } }));
    // Three "reports" at once on the one client: one Get, three Gets in parallel, and two Gets then a Query.
    const work: Array<() => Promise<unknown>> = [
      () => get('mx0'),
      () => Promise.all([get('mx0'), get('mx1'), get('mx2')]),
      async () => {
        await get('mx1');
        await get('mx2');
        await conn.doc.send(
          new QueryCommand({
            TableName: conn.table,
            KeyConditionExpression: 'pk = :p AND begins_with(sk, :c)',
            ExpressionAttributeValues: { ':p': 'p', ':c': 'mx' },
          }),
        );
      },
    ];
    const before = meter.total().calls;
    const measured = await Promise.all(work.map((w) => meter.measure(w)));
    expect(measured.map((m) => m.byOperation.GetItem?.calls ?? 0)).toEqual([1, 3, 2]);
    expect(measured.map((m) => m.byOperation.Query?.items ?? 0)).toEqual([0, 0, 3]);
    expect(measured.map((m) => m.total.requests)).toEqual([1, 3, 3]);
    // The meter itself still counts everything, and a measure inside a measure counts in both.
    expect(meter.total().calls - before).toBe(7);
    const outer = await meter.measure(async () => [await get('mx0'), await meter.measure(() => get('mx1'))]);
    expect(outer.total.calls).toBe(2);
    expect((outer.result[1] as { total: { calls: number } }).total.calls).toBe(1);
  });
});

/**
 * A stand-in HTTP handler answering with canned DynamoDB responses, so the SDK's own retry
 * middleware runs (aws-sdk-client-mock stubs `send` and would bypass the middleware stack).
 */
function cannedHandler(responses: Array<{ status: number; body: unknown }>) {
  const requests: string[] = [];
  return {
    requests,
    handler: {
      metadata: { handlerProtocol: 'http/1.1' },
      async handle(request: HttpRequest) {
        requests.push(
          typeof request.body === 'string' ? request.body : Buffer.from(request.body as Uint8Array).toString(),
        );
        const next = responses.shift();
        if (!next) throw new Error('no canned response left');
        const text = JSON.stringify(next.body);
        const { Readable } = await import('node:stream');
        return {
          response: {
            statusCode: next.status,
            reason: '',
            headers: {
              'content-type': 'application/x-amz-json-1.0',
              'content-length': String(Buffer.byteLength(text)),
            },
            body: Readable.from([Buffer.from(text)]),
          },
        };
      },
      destroy() {},
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
    },
  };
}

const fakeClient = (handler: ReturnType<typeof cannedHandler>['handler'], maxAttempts = 3) =>
  new DynamoDBClient({
    endpoint: 'http://127.0.0.1:9',
    region: 'local',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    maxAttempts,
    requestHandler: handler,
  });

describe('CapacityMeter per attempt', () => {
  it('counts a throttled attempt and its retry as two requests of one call', async () => {
    const canned = cannedHandler([
      {
        status: 400,
        body: {
          __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
          message: 'Rate of requests exceeds the allowed throughput.',
        },
      },
      { status: 200, body: { ConsumedCapacity: { TableName: 't', CapacityUnits: 3 } } },
    ]);
    const client = fakeClient(canned.handler);
    const meter = new CapacityMeter();
    attachCapacityMeter(client.middlewareStack, meter);
    const doc = DynamoDBDocumentClient.from(client);
    await doc.send(new PutCommand({ TableName: 't', Item: { pk: 'a', sk: 'b' } }));
    expect(meter.snapshot().PutItem).toMatchObject({
      calls: 1,
      requests: 2,
      throttled: 1,
      failed: 1,
      wcu: 3,
      items: 1,
    });
    // Both attempts asked for the capacity.
    expect(canned.requests.map((body) => JSON.parse(body).ReturnConsumedCapacity)).toEqual(['TOTAL', 'TOTAL']);
  });

  it('counts every attempt of a call that exhausts its retries', async () => {
    const throttle = {
      status: 400,
      body: { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'slow down' },
    };
    const canned = cannedHandler([throttle, throttle]);
    const client = fakeClient(canned.handler, 2);
    const meter = new CapacityMeter();
    attachCapacityMeter(client.middlewareStack, meter);
    await expect(
      DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName: 't', Key: { pk: 'a', sk: 'b' } })),
    ).rejects.toThrow(/slow down/);
    expect(meter.total()).toMatchObject({ calls: 1, requests: 2, throttled: 2, rcu: 0 });
  });

  it('a client without a meter does not ask for consumed capacity', async () => {
    const canned = cannedHandler([{ status: 200, body: {} }]);
    await DynamoDBDocumentClient.from(fakeClient(canned.handler)).send(
      new PutCommand({ TableName: 't', Item: { pk: 'a', sk: 'b' } }),
    );
    expect(JSON.parse(canned.requests[0]!)).not.toHaveProperty('ReturnConsumedCapacity');
  });
});
