import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { KinesisStreamEvent } from 'aws-lambda';
import {
  FirehoseClient,
  PutRecordBatchCommand,
  ServiceUnavailableException as FirehoseUnavailable,
  type PutRecordBatchResponseEntry,
} from '@aws-sdk/client-firehose';
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoBatchMarkers } from '../../lambdas/adapters/dynamo/batch-marker-store.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { FirehoseEventStream } from '../../lambdas/adapters/firehose-stream.js';
import { LocalEventStream, toSequenceNumber, type LocalStreamRecord } from '../../lambdas/adapters/local-stream.js';
import { partitionKey } from '../../lambdas/adapters/stream-record.js';
import { SiteRateLimiter } from '../../lambdas/domain/rate-limit.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { rng } from '../../local/demo/workload.js';
import { createEventHandler } from '../../lambdas/handlers/event.js';
import { createSessionizeHandler } from '../../lambdas/handlers/sessionize.js';
import { httpApiEvent, localContext } from '../../local/api-gateway.js';
import { sessionizeConsumer } from '../../local/consumers.js';
import { toKinesisEvent } from '../../local/kinesis-event.js';
import { LocalStreamPoller } from '../../local/stream-poller.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { CHROME_UA, site, trackedEvent } from '../support/events.js';
import { LONG, report } from './support.js';
import { liveCounts } from '../support/comparable-items.js';

/**
 * Faults in the AWS adapters (`docs/reliability.md` "The checks"):
 * (a) Firehose throttling and partly failed PutRecordBatch calls at the event
 *     endpoint, in either delivery stream: retried once, else 503 `try again` —
 *     never a 202 for an event not written;
 * (b) DynamoDB throttling, conditional failures, lost acknowledgements and
 *     unprocessed batch items in the sessionizer: the batch is reported failed
 *     (`batchItemFailures`) and its retries end exactly as a clean run does,
 *     also when the retry, through the local event source mapping, carries
 *     more records than the attempt that failed.
 * (c) Athena failures in `rebuild` are covered by `test/rebuild/` (see
 *     `docs/reliability.md`).
 */

const silent = () => ({
  logger: new Logger({ serviceName: 'faults', logLevel: 'SILENT' }),
  metrics: new Metrics({ namespace: 'Faults', serviceName: 'faults' }),
});

const eventRequest = (body: string) =>
  httpApiEvent({
    method: 'POST',
    path: '/api/event',
    headers: { 'user-agent': CHROME_UA, 'content-type': 'text/plain' },
    body,
    sourceIp: '198.51.100.7',
  });

describe('(a) the event endpoint on Firehose that throttles or partly fails', () => {
  const firehose = mockClient(FirehoseClient);
  afterAll(() => firehose.restore());
  const handler = createEventHandler({
    ...silent(),
    clock: () => Date.UTC(2026, 10, 21, 12),
    sites: { getSite: async (d) => (d === 'example.com' ? site({ rate_limit: 1_000_000 }) : null) },
    salts: { saltFor: async () => 'salt' },
    stream: new FirehoseEventStream(
      new FirehoseClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
      'footfall-ingest',
    ),
    limiter: new SiteRateLimiter(),
  });
  const body = (n: number) =>
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({ n: 'pageview', u: `https://example.com/k${i}`, s: 'example.com' })),
    );
  const post = (n: number) => handler(eventRequest(body(n)), localContext('event'));
  /** The paths of a record: JSON lines in the ingest stream. */
  const pathsIn = (data: Uint8Array | undefined) =>
    Buffer.from(data ?? [])
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).path as string);
  const ingestCalls = () =>
    firehose
      .commandCalls(PutRecordBatchCommand)
      .map((c) => c.args[0].input)
      .filter((input) => input.DeliveryStreamName === 'footfall-ingest');
  const throttled = () => new FirehoseUnavailable({ message: 'Slow down.', $metadata: {} });

  it('PutRecordBatch throttled (the call fails): 503 "try again", with CORS', async () => {
    firehose.reset();
    firehose.on(PutRecordBatchCommand).rejects(throttled());
    const res = await post(3);
    expect(res).toMatchObject({ statusCode: 503, body: 'try again' });
    expect(res.headers?.['Access-Control-Allow-Origin'] ?? res.headers?.['access-control-allow-origin']).toBe('*');
  });

  it('the record failed twice: 503 (the client retries; at least once)', async () => {
    firehose.reset();
    firehose.on(PutRecordBatchCommand).callsFake((input: { Records: unknown[] }) => ({
      FailedPutCount: input.Records.length,
      RequestResponses: input.Records.map((): PutRecordBatchResponseEntry => ({
        ErrorCode: 'ServiceUnavailableException',
      })),
    }));
    expect(await post(5)).toMatchObject({ statusCode: 503, body: 'try again' });
    expect(ingestCalls()).toHaveLength(2);
    expect(firehose.commandCalls(PutRecordBatchCommand)).toHaveLength(2); // nothing to the archive: the sessionizer feeds it
  });

  it('the record failed once, then accepted: 202 with every event sent', async () => {
    firehose.reset();
    firehose
      .on(PutRecordBatchCommand, { DeliveryStreamName: 'footfall-ingest' })
      .resolvesOnce({ FailedPutCount: 1, RequestResponses: [{ ErrorCode: 'ServiceUnavailableException' }] })
      .resolves({ FailedPutCount: 0, RequestResponses: [{ RecordId: '1' }] });
    expect(await post(50)).toMatchObject({ statusCode: 202, body: '' });
    const calls = ingestCalls();
    expect(calls).toHaveLength(2);
    const [first, second] = calls.map((c) => (c.Records ?? []).flatMap((r) => pathsIn(r.Data)));
    expect(first).toHaveLength(50);
    expect(second).toEqual(first);
  });

  it('any pattern of failures of the ingest stream: 202 exactly when it took every event, else 503', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }),
        fc.boolean(),
        async (n, ingestFails, callThrows) => {
          firehose.reset();
          const written = new Set<string>();
          let calls = 0;
          firehose.on(PutRecordBatchCommand).callsFake((input: { Records: Array<{ Data: Uint8Array }> }) => {
            const call = calls++;
            if (callThrows && call === 1) throw throttled();
            const responses = input.Records.map((r, i): PutRecordBatchResponseEntry => {
              // One record a request: its call and its retry.
              if (ingestFails[call]) return { ErrorCode: 'ServiceUnavailableException' };
              for (const path of pathsIn(r.Data)) written.add(path);
              return { RecordId: String(i) };
            });
            return { FailedPutCount: responses.filter((r) => r.ErrorCode).length, RequestResponses: responses };
          });
          const res = await post(n);
          runs++;
          if (res.statusCode === 202) expect(written.size).toBe(n);
          else {
            expect(res).toMatchObject({ statusCode: 503, body: 'try again' });
            expect(written.size).toBeLessThan(n);
          }
        },
      ),
      { numRuns: LONG ? 2_000 : 200 },
    );
    await report('firehose-faults', { runs });
  });
});

// (b) ---------------------------------------------------------------------

const T0 = Date.UTC(2026, 2, 28, 22, 50); // 23:50 in Berlin, on the night the clocks go forward

/** Four batches over two sites and twelve visitors: new visits, late events that merge visits, goals, a second day. */
function batches(): TrackedEvent[][] {
  const random = rng(7);
  let n = 0;
  const event = (minutes: number, visitor: number, overrides: Partial<TrackedEvent> = {}) =>
    trackedEvent({
      event_id: `e${n++}`,
      site: visitor % 3 === 0 ? 'other.org' : 'example.com',
      hostname: visitor % 3 === 0 ? 'other.org' : 'example.com',
      ts: T0 + minutes * 60_000,
      visitor_id: `visitor-${String(visitor).padStart(4, '0')}`,
      path: ['/', '/pricing', '/blog', '/docs'][Math.floor(random() * 4)] ?? '/',
      channel: ['Direct', 'Search', 'AI', 'Communities'][Math.floor(random() * 4)] ?? 'Direct',
      country: ['DE', 'US', 'FR'][Math.floor(random() * 3)] ?? 'DE',
      ...overrides,
    });
  const out: TrackedEvent[][] = [];
  for (let b = 0; b < 4; b++) {
    const list: TrackedEvent[] = [];
    for (let i = 0; i < 30; i++) {
      const visitor = Math.floor(random() * 12);
      // Batch 2 carries late events from before batch 1's, which merge or re-attribute visits.
      const minutes =
        b === 2 ? Math.floor(random() * 60) - 20 : b * 40 + Math.floor(random() * 40) + (b === 3 ? 24 * 60 : 0);
      list.push(
        event(
          minutes,
          visitor,
          random() < 0.15
            ? { type: 'goal', goal: random() < 0.5 ? 'Signup' : 'Outbound Link: Click', link: 'https://x.org/' }
            : {},
        ),
      );
    }
    out.push(list);
  }
  return out;
}

const BATCHES = batches();

/** The Kinesis event of a batch, as the event source mapping of shard `shard` would deliver it. */
function kinesisEvent(
  events: readonly TrackedEvent[],
  firstSequence: number,
  shard = 'shardId-000000000000',
): KinesisStreamEvent {
  const records: LocalStreamRecord[] = events.map((e, i) => ({
    sequenceNumber: toSequenceNumber(firstSequence + i),
    partitionKey: partitionKey(e),
    approximateArrivalTimestamp: e.ts,
    data: Buffer.from(JSON.stringify(e)),
  }));
  const event = toKinesisEvent(records);
  for (const r of event.Records) r.eventID = `${shard}:${r.kinesis.sequenceNumber}`;
  return event;
}

const SITES = [
  { domain: 'example.com', timezone: 'Europe/Berlin' },
  { domain: 'other.org', timezone: 'UTC' },
];

/**
 * A table scan (`scanAll`) with the JSON-encoded rollup fields in a canonical
 * order: dimension counts and sketch ids are sets, built in whatever order the
 * deltas arrived.
 */
async function snapshot(conn: DynamoConnection, omit: readonly string[]): Promise<Record<string, unknown>[]> {
  const sortedObject = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  return (await scanAll(conn, omit)).map((item) => ({
    ...item,
    ...(typeof item.counts === 'string'
      ? { counts: sortedObject(liveCounts(JSON.parse(item.counts) as Record<string, number>)) }
      : {}),
    ...(typeof item.ids === 'string' ? { ids: (JSON.parse(item.ids) as string[]).sort() } : {}),
  }));
}

/**
 * Folds every site's pending rollup deltas (the scheduled function's work),
 * retrying a compaction that fails until it succeeds when `retry` is set.
 * @returns the failed compaction attempts
 */
async function compactAll(conn: DynamoConnection, retry = false): Promise<number> {
  let failed = 0;
  for (const { domain } of SITES) {
    for (;;) {
      try {
        await new DynamoRollupStore(conn).compact(domain);
        break;
      } catch (error) {
        if (!retry) throw error;
        failed++;
        expect(failed).toBeLessThan(1000);
      }
    }
  }
  return failed;
}

function sessionizer(conn: DynamoConnection, rollups = new DynamoRollupStore(conn)) {
  return createSessionizeHandler({
    ...silent(),
    sites: new DynamoConfigStore(conn),
    visits: new DynamoVisitStore(conn),
    rollups,
    markers: new DynamoBatchMarkers(conn),
  });
}

type Fault = 'throughput' | 'throttling' | 'conflict' | 'lost-ack' | 'unprocessed';

/**
 * Wraps the connection's `send` (above the SDK, i.e. after its own retries are
 * spent) to fail some calls: ProvisionedThroughputExceededException or
 * ThrottlingException before the call; a ConditionalCheckFailedException on a
 * conditional put, as a racing writer would cause; the call made but its answer
 * lost (a timeout after the write); BatchWriteItem/BatchGetItem that process
 * only half and return the rest unprocessed.
 */
function injectFaults(
  conn: DynamoConnection,
  random: () => number,
  rate: number,
): { counts: Record<Fault, number>; disarm(): void } {
  const send = conn.doc.send.bind(conn.doc) as (command: unknown) => Promise<Record<string, unknown>>;
  const counts: Record<Fault, number> = { throughput: 0, throttling: 0, conflict: 0, 'lost-ack': 0, unprocessed: 0 };
  const meta = { $metadata: { httpStatusCode: 400 } };
  conn.doc.send = (async (command: unknown) => {
    if (random() >= rate) return send(command);
    const isWrite = command instanceof PutCommand || command instanceof BatchWriteCommand;
    const options: Fault[] = ['throughput', 'throttling'];
    if (command instanceof PutCommand && command.input.ConditionExpression) options.push('conflict');
    if (isWrite) options.push('lost-ack');
    if (command instanceof BatchWriteCommand || command instanceof BatchGetCommand) options.push('unprocessed');
    // Batch calls are few: give their own fault, half of what is left unprocessed, an even chance.
    const batch = options.includes('unprocessed') && random() < 0.5;
    const fault = batch ? 'unprocessed' : (options[Math.floor(random() * options.length)] as Fault);
    counts[fault]++;
    switch (fault) {
      case 'throughput':
        throw new ProvisionedThroughputExceededException({
          message: 'The level of configured provisioned throughput for the table was exceeded',
          ...meta,
        });
      case 'throttling':
        throw new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput', ...meta });
      case 'conflict':
        throw new ConditionalCheckFailedException({ message: 'The conditional request failed', ...meta });
      case 'lost-ack':
        await send(command);
        throw new ThrottlingException({ message: 'socket hang up after the write', ...meta });
      case 'unprocessed': {
        if (command instanceof BatchWriteCommand) {
          const [table, requests = []] = Object.entries(command.input.RequestItems ?? {})[0] ?? [];
          const half = Math.ceil(requests.length / 2);
          await send(new BatchWriteCommand({ RequestItems: { [table ?? '']: requests.slice(0, half) } }));
          return { UnprocessedItems: requests.length > half ? { [table ?? '']: requests.slice(half) } : {} };
        }
        const input = (command as BatchGetCommand).input;
        const [table, request] = Object.entries(input.RequestItems ?? {})[0] ?? [];
        const keys = request?.Keys ?? [];
        const half = Math.ceil(keys.length / 2);
        const got = await send(
          new BatchGetCommand({ RequestItems: { [table ?? '']: { ...request, Keys: keys.slice(0, half) } } }),
        );
        return {
          ...got,
          UnprocessedKeys: keys.length > half ? { [table ?? '']: { ...request, Keys: keys.slice(half) } } : {},
        };
      }
    }
  }) as typeof conn.doc.send;
  return { counts, disarm: () => void (conn.doc.send = send as typeof conn.doc.send) };
}

describe('(b) the sessionizer on DynamoDB that throttles, conflicts and loses answers', () => {
  it('reports each failed batch in batchItemFailures; retrying until success ends exactly as a clean run', async () => {
    const clean = await memoryTable(SITES);
    const handle = sessionizer(clean.conn);
    for (const [b, events] of BATCHES.entries()) {
      expect(await handle(kinesisEvent(events, b * 100))).toEqual({ batchItemFailures: [] });
      await compactAll(clean.conn);
    }
    // `ver` counts successful folds of an item; a fold whose answer was lost is redone as a new version.
    const expected = await snapshot(clean.conn, ['created', 'ver']);
    await clean.close();
    expect(expected.filter((i) => i.type === 'VISIT').length).toBeGreaterThan(10);

    const seeds = LONG ? 200 : 12;
    const totals: Record<string, number> = { failedDeliveries: 0 };
    for (let seed = 1; seed <= seeds; seed++) {
      const db = await memoryTable(SITES);
      const random = rng(seed);
      const faults = injectFaults(db.conn, random, 0.01 + (seed % 4) * 0.01);
      const handler = sessionizer(db.conn);
      // The event source mapping: deliver the batch until the handler reports no failure.
      const deliver = async (event: KinesisStreamEvent, label: string) => {
        for (let attempts = 1; ; attempts++) {
          const { batchItemFailures } = await handler(event);
          if (batchItemFailures.length === 0) return;
          // The whole batch is reported, from its first record.
          expect(batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.kinesis.sequenceNumber }]);
          totals.failedDeliveries = (totals.failedDeliveries ?? 0) + 1;
          expect(attempts, label).toBeLessThan(200);
        }
      };
      for (const [b, events] of BATCHES.entries()) {
        const event = kinesisEvent(events, b * 100);
        await deliver(event, `seed ${seed}, batch ${b}`);
        // At least once: the same batch delivered again after its success changes nothing.
        await deliver(event, `seed ${seed}, batch ${b} again`);
        // The scheduled compaction, under the same faults (its conditional folds are where conflicts can happen), run until it succeeds.
        totals.failedCompactions = (totals.failedCompactions ?? 0) + (await compactAll(db.conn, true));
      }
      faults.disarm();
      for (const [k, v] of Object.entries(faults.counts)) totals[k] = (totals[k] ?? 0) + v;
      expect(await snapshot(db.conn, ['created', 'ver']), `seed ${seed}`).toEqual(expected);
      await db.close();
    }
    await report('sessionizer-dynamodb-faults', { seeds, ...totals });
    expect(totals.failedDeliveries).toBeGreaterThan(seeds);
    expect(totals.conflict).toBeGreaterThan(0);
    expect(totals['lost-ack']).toBeGreaterThan(0);
    expect(totals.unprocessed).toBeGreaterThan(0);
  });

  it('two shards sessionizing and compacting the same rollups at once (real conditional-write races) end as one after the other', async () => {
    // Visitors are split over two shards by partition key, as Kinesis would; both shards share the sites' rollup items.
    const shardOf = (e: TrackedEvent) =>
      Number(e.visitor_id.slice(-4)) % 2 === 0 ? 'shardId-000000000000' : 'shardId-000000000001';
    const perShard = (shard: string) => BATCHES.map((events) => events.filter((e) => shardOf(e) === shard));
    const shards = ['shardId-000000000000', 'shardId-000000000001'];

    const sequential = await memoryTable(SITES);
    for (const shard of shards) {
      const handler = sessionizer(sequential.conn);
      for (const [b, events] of perShard(shard).entries())
        expect(await handler(kinesisEvent(events, b * 100, shard))).toEqual({ batchItemFailures: [] });
    }
    await compactAll(sequential.conn);
    const expected = await snapshot(sequential.conn, ['created', 'ver']);
    await sequential.close();

    const rounds = LONG ? 40 : 5;
    let conflicts = 0;
    for (let round = 0; round < rounds; round++) {
      const db = await memoryTable(SITES);
      const stores = shards.map(() => new DynamoRollupStore(db.conn));
      await Promise.all(
        shards.map(async (shard, s) => {
          const handler = sessionizer(db.conn, stores[s]);
          // Each shard's process also compacts after each of its batches: two compactors fold the same items at once.
          for (const [b, events] of perShard(shard).entries()) {
            expect(await handler(kinesisEvent(events, b * 100, shard))).toEqual({ batchItemFailures: [] });
            for (const { domain } of SITES) await stores[s]?.compact(domain);
          }
        }),
      );
      await compactAll(db.conn);
      conflicts += stores.reduce((sum, s) => sum + s.calls.conflicts, 0);
      expect(await snapshot(db.conn, ['created', 'ver'])).toEqual(expected);
      await db.close();
    }
    await report('sessionizer-shard-races', { rounds, conditionalConflicts: conflicts });
    expect(conflicts).toBeGreaterThan(0);
  });
});

describe('(b) a failed batch retried through the local event source mapping after the stream grew', () => {
  let dir = '';
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('a batch that failed after its rollups were written, retried with more records: every rollup counts each event once', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ff-rel-poller-'));
    const [first = [], second = []] = BATCHES;
    const stream = await LocalEventStream.open(dir);
    await stream.put(first);

    const db = await memoryTable(SITES);
    const send = db.conn.doc.send.bind(db.conn.doc) as (command: unknown) => Promise<unknown>;
    let crashed = false;
    // The process dies (here: the call throws) at the first visits write, after every rollup of the batch is in.
    db.conn.doc.send = (async (command: unknown) => {
      if (!crashed && command instanceof BatchWriteCommand) {
        crashed = true;
        throw new Error('crash');
      }
      return send(command);
    }) as typeof db.conn.doc.send;
    await expect(new LocalStreamPoller(dir, 'sessionize', sessionizeConsumer(db.conn, dir)).drain()).rejects.toThrow(
      /failed; it will be retried/,
    );

    // Meanwhile more events arrive; a new poller (a restarted process) hands out the failed batch's records and the new ones at once.
    await stream.put(second);
    await stream.close();
    expect(await new LocalStreamPoller(dir, 'sessionize', sessionizeConsumer(db.conn, dir)).drain()).toBe(
      first.length + second.length,
    );

    const clean = await memoryTable(SITES);
    expect(await new LocalStreamPoller(dir, 'clean', sessionizeConsumer(clean.conn, dir)).drain()).toBe(
      first.length + second.length,
    );
    // Batch boundaries differ between the two runs, so the per-shard sequence numbers, versions and batch markers do
    // too, and so does the ingest journal (the failed object and the larger one after it, against one object).
    await compactAll(db.conn);
    await compactAll(clean.conn);
    const bookkeeping = (i: Record<string, unknown>) =>
      i.type === 'BATCH_MARKER' ||
      i.type === 'ROLLUP_LOG_STATE' ||
      String(i.type ?? '').startsWith('INGEST') ||
      (i.pk === 'EXPIRING' && i.item_pk === 'INGEST');
    const withoutMarkers = (items: Record<string, unknown>[]) => items.filter((i) => !bookkeeping(i));
    expect(withoutMarkers(await snapshot(db.conn, ['created', 'seq', 'ver']))).toEqual(
      withoutMarkers(await snapshot(clean.conn, ['created', 'seq', 'ver'])),
    );
    await db.close();
    await clean.close();
  });
});
