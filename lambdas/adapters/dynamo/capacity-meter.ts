import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  DeserializeHandlerArguments,
  DeserializeHandlerOutput,
  HandlerExecutionContext,
  InitializeHandlerArguments,
  MetadataBearer,
  MiddlewareStack,
} from '@smithy/types';

/**
 * What one DynamoDB operation (or all of them) cost, counted at the SDK client.
 *
 * - `calls`: `send()` calls, one per operation however many attempts it took.
 * - `requests`: HTTP attempts, retries included (the middleware runs once per attempt).
 * - `throttled`: attempts answered with a throttling error (`ThrottlingException`,
 *   `ProvisionedThroughputExceededException`, `RequestLimitExceeded`); `failed` counts every
 *   attempt answered with an error, throttles included.
 * - `conditionFailed`: writes refused by their `ConditionExpression`. DynamoDB bills them but does
 *   not report their capacity, so each adds the 1 WCU floor to `wcu` ("If the condition expression
 *   evaluates to false, DynamoDB still consumes write capacity … a minimum of 1", DynamoDB Developer
 *   Guide, "Condition expressions"); the real charge is the existing item's size in KB, rounded up.
 * - `items`: items read (GetItem 0/1, Query/Scan `Count`, BatchGetItem responses) or written
 *   (1 per Put/Update/Delete, BatchWriteItem requests minus unprocessed ones).
 * - `rcu` / `wcu`: read and write capacity units as DynamoDB reports them in `ConsumedCapacity`
 *   (on-demand: RRU / WRU, the same numbers); a GetItem or Query counts at least one read unit.
 * - `bytesSent` / `bytesReceived`: HTTP request body and response body (`Content-Length`) bytes.
 */
export interface CapacityCounts {
  calls: number;
  requests: number;
  throttled: number;
  failed: number;
  conditionFailed: number;
  items: number;
  rcu: number;
  wcu: number;
  bytesSent: number;
  bytesReceived: number;
}

/** Counts per operation name (`GetItem`, `BatchWriteItem`, …). */
export type CapacityByOperation = Record<string, CapacityCounts>;

type Kind = 'read' | 'write' | 'statement';

/**
 * Operations that accept `ReturnConsumedCapacity`, and whether their units are reads or writes
 * (DynamoDB API Reference, each action's request parameters). PartiQL statements are read or write
 * by their verb.
 */
const METERED: Readonly<Record<string, Kind>> = {
  GetItem: 'read',
  Query: 'read',
  Scan: 'read',
  BatchGetItem: 'read',
  TransactGetItems: 'read',
  PutItem: 'write',
  UpdateItem: 'write',
  DeleteItem: 'write',
  BatchWriteItem: 'write',
  TransactWriteItems: 'write',
  ExecuteStatement: 'statement',
  BatchExecuteStatement: 'statement',
  ExecuteTransaction: 'statement',
};

const THROTTLES = new Set(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded']);

const zero = (): CapacityCounts => ({
  calls: 0,
  requests: 0,
  throttled: 0,
  failed: 0,
  conditionFailed: 0,
  items: 0,
  rcu: 0,
  wcu: 0,
  bytesSent: 0,
  bytesReceived: 0,
});

function add(into: CapacityCounts, from: Partial<CapacityCounts>): void {
  for (const key of Object.keys(from) as Array<keyof CapacityCounts>) into[key] += from[key] ?? 0;
}

/** A `measure` under way: requests through clients `parent` is attached to are added to `scoped` too. */
interface Scope {
  parent: CapacityMeter;
  scoped: CapacityMeter;
}

/**
 * The `measure` calls the current async context runs inside, innermost last. An
 * AsyncLocalStorage scope rather than a meter per request-scoped client: a
 * report's reads go through the long-lived connection that every store and
 * the local server share (`DynamoConnection`), so scoping by client would
 * mean a client per request; the async context follows the request instead,
 * through `Promise.all`, paginators and caches of promises made inside it,
 * and two requests measured at the same time never see each other's.
 */
const scopes = new AsyncLocalStorage<readonly Scope[]>();

/**
 * Adds up what DynamoDB requests cost, per operation. Attach it to a client with
 * {@link attachCapacityMeter} (or pass it as `capacityMeter` to `createDynamoConnection`); it is the
 * one way the benchmarks and tests count requests and capacity units. Not used in production
 * unless passed in: a client without it sends no `ReturnConsumedCapacity`.
 */
export class CapacityMeter {
  private readonly byOperation = new Map<string, CapacityCounts>();

  /**
   * Adds `counts` to `operation`'s totals (the middleware calls this; tests may too), and to
   * those of every `measure` of this meter the calling async context runs inside.
   */
  record(operation: string, counts: Partial<CapacityCounts>): void {
    this.add(operation, counts);
    for (const scope of scopes.getStore() ?? []) if (scope.parent === this) scope.scoped.add(operation, counts);
  }

  private add(operation: string, counts: Partial<CapacityCounts>): void {
    let entry = this.byOperation.get(operation);
    if (!entry) this.byOperation.set(operation, (entry = zero()));
    add(entry, counts);
  }

  /** A copy of the counts per operation, operations in name order. */
  snapshot(): CapacityByOperation {
    return Object.fromEntries(
      [...this.byOperation.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([op, c]) => [op, { ...c }]),
    );
  }

  /** The counts of every operation added up. */
  total(): CapacityCounts {
    return totalOf(this.snapshot());
  }

  /** Forgets everything counted so far. */
  reset(): void {
    this.byOperation.clear();
  }

  /**
   * Runs `work` and returns its result with what the requests it made cost (per operation and in
   * total): those `work` and the async work it started sent through clients this meter is attached
   * to, and only those: requests of other work running at the same time, measured or not, are not
   * counted (each `measure` is an async context of its own, `scopes`). A request started before
   * and awaited inside is not counted; one started inside counts even if awaited after.
   */
  async measure<T>(
    work: () => Promise<T>,
  ): Promise<{ result: T; byOperation: CapacityByOperation; total: CapacityCounts }> {
    const scoped = new CapacityMeter();
    const result = await scopes.run([...(scopes.getStore() ?? []), { parent: this, scoped }], work);
    const byOperation = scoped.snapshot();
    return { result, byOperation, total: totalOf(byOperation) };
  }
}

/** The counts of every operation in `counts` added up. */
export function totalOf(counts: CapacityByOperation): CapacityCounts {
  const total = zero();
  for (const c of Object.values(counts)) add(total, c);
  return total;
}

/** `after` minus `before`, per operation (operations with nothing in between are left out). */
export function difference(after: CapacityByOperation, before: CapacityByOperation): CapacityByOperation {
  const out: CapacityByOperation = {};
  for (const [op, a] of Object.entries(after)) {
    const b = before[op] ?? zero();
    const d = zero();
    for (const key of Object.keys(d) as Array<keyof CapacityCounts>) d[key] = a[key] - b[key];
    if (d.calls !== 0 || d.requests !== 0) out[op] = d;
  }
  return out;
}

interface ConsumedCapacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/**
 * The least a single-partition read bills: one read unit of 4 KB, 0.5 RRU eventually consistent and
 * 1 strongly consistent, even when nothing matches (reads round up to the next 4 KB; DynamoDB
 * Developer Guide, "Capacity unit consumption for read operations"). dynalite reports 0 for a Query
 * that matches nothing; AWS reports the minimum, so taking the larger changes nothing against AWS.
 */
const MINIMUM_READ: Readonly<Record<string, true>> = { GetItem: true, Query: true };

/** RCU and WCU of a `ConsumedCapacity` (an object, or a list for batch and transaction calls). */
function unitsOf(
  consumed: ConsumedCapacity | ConsumedCapacity[] | undefined,
  kind: Kind,
  statement: string,
): { rcu: number; wcu: number } {
  const list = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
  const reads = kind === 'read' || (kind === 'statement' && /^\s*select\b/i.test(statement));
  let rcu = 0;
  let wcu = 0;
  for (const c of list) {
    if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
      rcu += c.ReadCapacityUnits ?? 0;
      wcu += c.WriteCapacityUnits ?? 0;
    } else if (reads) rcu += c.CapacityUnits ?? 0;
    else wcu += c.CapacityUnits ?? 0;
  }
  return { rcu, wcu };
}

type Loose = Record<string, unknown>;
const lengthOf = (v: unknown): number => (Array.isArray(v) ? v.length : 0);
const sumLengths = (v: unknown): number =>
  v && typeof v === 'object' ? Object.values(v as Loose).reduce<number>((n, list) => n + lengthOf(list), 0) : 0;

/** Items an operation read or wrote, from its input and output (see {@link CapacityCounts}). */
const ITEMS: Readonly<Record<string, (input: Loose, output: Loose) => number>> = {
  GetItem: (_i, o) => (o.Item ? 1 : 0),
  Query: (_i, o) => Number(o.Count ?? lengthOf(o.Items)),
  Scan: (_i, o) => Number(o.Count ?? lengthOf(o.Items)),
  BatchGetItem: (_i, o) => sumLengths(o.Responses),
  TransactGetItems: (_i, o) => lengthOf(o.Responses),
  PutItem: () => 1,
  UpdateItem: () => 1,
  DeleteItem: () => 1,
  BatchWriteItem: (i, o) => sumLengths(i.RequestItems) - sumLengths(o.UnprocessedItems),
  TransactWriteItems: (i) => lengthOf(i.TransactItems),
  ExecuteStatement: (_i, o) => lengthOf(o.Items),
  BatchExecuteStatement: (_i, o) => lengthOf(o.Responses),
  ExecuteTransaction: (_i, o) => lengthOf(o.Responses),
};

function bodyBytes(body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return 0;
}

function headerBytes(headers: Record<string, string> | undefined): number {
  if (!headers) return 0;
  const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-length');
  return entry ? Number(entry[1]) || 0 : 0;
}

const operationOf = (context: HandlerExecutionContext): string =>
  String(context.commandName ?? 'Unknown').replace(/Command$/, '');

/**
 * Adds two middlewares to a DynamoDB client's stack (shared by a `DynamoDBDocumentClient` made
 * `from` it):
 * - at `initialize`, once per call: sets `ReturnConsumedCapacity: 'TOTAL'` on every operation that
 *   accepts it (keeping `INDEXES` if asked for) and counts the call;
 * - at `deserialize`, which the SDK runs once per attempt (its retry middleware sits in
 *   `finalizeRequest`, before it): counts the request, its bytes, and the capacity, items and errors
 *   of its answer.
 */
export function attachCapacityMeter(stack: MiddlewareStack<object, MetadataBearer>, meter: CapacityMeter): void {
  stack.add(
    (next, context) => async (args: InitializeHandlerArguments<object>) => {
      const operation = operationOf(context);
      meter.record(operation, { calls: 1 });
      if (!(operation in METERED)) return next(args);
      const input = args.input as Loose;
      const wanted = input.ReturnConsumedCapacity === 'INDEXES' ? 'INDEXES' : 'TOTAL';
      return next({ ...args, input: { ...input, ReturnConsumedCapacity: wanted } });
    },
    { step: 'initialize', name: 'capacityMeterInitialize', priority: 'high', override: true },
  );
  stack.add(
    (next, context) => async (args: DeserializeHandlerArguments<object>) => {
      const operation = operationOf(context);
      const kind = METERED[operation];
      const input = args.input as Loose;
      const request = args.request as { body?: unknown } | undefined;
      const sent = bodyBytes(request?.body);
      let result: DeserializeHandlerOutput<MetadataBearer>;
      try {
        result = await next(args);
      } catch (error) {
        const name = (error as Error).name;
        const response = (error as { $response?: { headers?: Record<string, string> } }).$response;
        const conditionFailed = name === 'ConditionalCheckFailedException' ? 1 : 0;
        meter.record(operation, {
          requests: 1,
          failed: 1,
          throttled: THROTTLES.has(name) ? 1 : 0,
          conditionFailed,
          wcu: conditionFailed,
          bytesSent: sent,
          bytesReceived: headerBytes(response?.headers),
        });
        throw error;
      }
      const output = result.output as unknown as Loose;
      const response = result.response as { headers?: Record<string, string> } | undefined;
      const units = kind
        ? unitsOf(output.ConsumedCapacity as ConsumedCapacity | undefined, kind, String(input.Statement ?? ''))
        : { rcu: 0, wcu: 0 };
      if (MINIMUM_READ[operation]) units.rcu = Math.max(units.rcu, input.ConsistentRead === true ? 1 : 0.5);
      meter.record(operation, {
        requests: 1,
        items: ITEMS[operation]?.(input, output) ?? 0,
        ...units,
        bytesSent: sent,
        bytesReceived: headerBytes(response?.headers),
      });
      return result;
    },
    { step: 'deserialize', name: 'capacityMeterAttempt', priority: 'high', override: true },
  );
}
