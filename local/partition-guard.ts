import { FUNCTIONS, type FunctionSpec } from '../lib/functions.js';
import { PK } from '../lambdas/adapters/dynamo/table.js';
import { partitionOf } from '../lambdas/adapters/dynamo/items.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';

/** A function of the stack's registry (`lib/functions.ts`). */
export type FunctionName = keyof typeof FUNCTIONS;

/** DynamoDB's answer when a role's policy does not allow a request (AWS IAM's error name). */
export class AccessDeniedException extends Error {
  override readonly name = 'AccessDeniedException';
  readonly $fault = 'client';
  constructor(message: string) {
    super(message);
  }
}

/** A request named a partition key that matches no partition family of the item registry. */
export class UnknownPartitionError extends Error {
  override readonly name = 'UnknownPartitionError';
}

/** One table action a request performs on one partition. */
export interface PartitionAccess {
  action: string;
  pk: string;
}

/** A key attribute's string value, from a document-client (`'x'`) or a marshalled (`{ S: 'x' }`) input. */
const keyString = (value: unknown): string | null =>
  typeof value === 'string'
    ? value
    : value !== null && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string'
      ? (value as { S: string }).S
      : null;

type Input = Record<string, unknown>;
const pkOf = (key: unknown) => keyString((key as Input | undefined)?.[PK]);

/** The partition a Query's key condition names (`pk = :value`). */
function queryPartition(input: Input): string | null {
  const condition = String(input.KeyConditionExpression ?? '');
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  for (const match of condition.matchAll(/(#?\w+)\s*=\s*(:\w+)/g)) {
    const attribute = match[1]!.startsWith('#') ? names[match[1]!] : match[1];
    if (attribute === PK) return keyString((input.ExpressionAttributeValues as Input | undefined)?.[match[2]!]);
  }
  return null;
}

/**
 * Each table action a DynamoDB request performs and the partition it names, as IAM
 * evaluates `dynamodb:LeadingKeys`: a batch is authorized per item (BatchGetItem and
 * BatchWriteItem's put and delete requests each count as the batch action on their own
 * key, per the DynamoDB developer guide's "Using IAM policy conditions for fine-grained
 * access control"). Requests without a partition (Scan, table operations) return one
 * access with `pk` `*`, which a partition-scoped policy never allows.
 */
export function requestPartitions(command: string, input: Input): PartitionAccess[] {
  const action = `dynamodb:${command.replace(/Command$/, '')}`;
  switch (command) {
    case 'GetItemCommand':
    case 'DeleteItemCommand':
    case 'UpdateItemCommand':
      return [{ action, pk: pkOf(input.Key) ?? '*' }];
    case 'PutItemCommand':
      return [{ action, pk: pkOf(input.Item) ?? '*' }];
    case 'QueryCommand':
      return [{ action, pk: queryPartition(input) ?? '*' }];
    case 'BatchGetItemCommand':
      return Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((request) =>
        (request.Keys ?? []).map((key) => ({ action, pk: pkOf(key) ?? '*' })),
      );
    case 'BatchWriteItemCommand':
      return Object.values(
        (input.RequestItems ?? {}) as Record<
          string,
          Array<{ PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }>
        >,
      ).flatMap((requests) =>
        requests.map((r) => ({ action, pk: pkOf(r.PutRequest?.Item ?? r.DeleteRequest?.Key) ?? '*' })),
      );
    default:
      return [{ action, pk: '*' }];
  }
}

/** Whether an IAM `StringLike` pattern (`*` any characters, `?` one) matches `value`. */
export function stringLike(pattern: string, value: string): boolean {
  const source = [...pattern]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 's').test(value);
}

const READ_ACTIONS = new Set(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']);
const WRITE_ACTIONS = new Set([
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
]);

/**
 * Whether a function's table grant (`FootfallFunction.bindTable`, from its `FUNCTIONS`
 * entry) allows `access`: reads within `readPartitions` and `writePartitions` (table-wide
 * without `readPartitions`), writes within `writePartitions` (table-wide without it), the
 * attribute-scoped update within its partitions, nothing for a function without a table.
 */
export function allowsPartition(spec: FunctionSpec, access: PartitionAccess): boolean {
  const table = spec.table;
  const within = (patterns: readonly string[] | undefined) =>
    patterns === undefined || patterns.some((p) => stringLike(p, access.pk));
  if (access.action === 'dynamodb:UpdateItem' && spec.attributeUpdate?.partitions.some((p) => stringLike(p, access.pk)))
    return true;
  if (!table) return false;
  if (READ_ACTIONS.has(access.action))
    return within(
      spec.readPartitions && [...spec.readPartitions, ...(table === 'read' ? [] : (spec.writePartitions ?? []))],
    );
  if (WRITE_ACTIONS.has(access.action)) return table !== 'read' && within(spec.writePartitions);
  return false;
}

/** The table action of a document-client or low-level command class (`PutCommand`, `QueryCommand`, `PutItemCommand`). */
const DOCUMENT_COMMANDS: ReadonlyMap<string, string> = new Map([
  ['GetCommand', 'GetItemCommand'],
  ['PutCommand', 'PutItemCommand'],
  ['UpdateCommand', 'UpdateItemCommand'],
  ['DeleteCommand', 'DeleteItemCommand'],
  ['BatchGetCommand', 'BatchGetItemCommand'],
  ['BatchWriteCommand', 'BatchWriteItemCommand'],
  ['TransactWriteCommand', 'TransactWriteItemsCommand'],
  ['TransactGetCommand', 'TransactGetItemsCommand'],
]);

/**
 * A view of `conn` whose every request is held to the table grant of function `name`, as
 * its role would hold it in AWS: a request with any access the grant does not allow fails
 * with `AccessDeniedException` before it is sent. The view shares the connection's client
 * (closing the connection closes it); `onAccess` sees every allowed access (tests count
 * them). The local twin gives each function's code such a view.
 */
export function functionConnection(
  conn: DynamoConnection,
  name: FunctionName,
  onAccess?: (access: PartitionAccess) => void,
): DynamoConnection {
  const spec: FunctionSpec = FUNCTIONS[name];
  const check = (command: { constructor: { name: string }; input: unknown }) => {
    const commandName = DOCUMENT_COMMANDS.get(command.constructor.name) ?? command.constructor.name;
    for (const access of requestPartitions(commandName, command.input as Input)) {
      // A key no item type of the registry owns is a store spelling its own prefix (lambdas/adapters/dynamo/items.ts).
      if (access.pk !== '*' && !partitionOf(access.pk))
        throw new UnknownPartitionError(
          `function ${name} sent ${access.action} on partition ${access.pk}, which no item type of lambdas/adapters/dynamo/items.ts owns`,
        );
      if (!allowsPartition(spec, access))
        throw new AccessDeniedException(
          `function ${name} is not authorized to perform ${access.action} on partition ${access.pk} (lib/functions.ts)`,
        );
      onAccess?.(access);
    }
  };
  const doc = new Proxy(conn.doc, {
    get(target, property) {
      if (property !== 'send') {
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (command: Parameters<typeof target.send>[0], ...rest: unknown[]) => {
        // As the SDK does, a refused request is a rejected promise, not a throw.
        try {
          check(command as unknown as { constructor: { name: string }; input: unknown });
        } catch (error) {
          return Promise.reject(error as Error);
        }
        return (target.send as (...args: unknown[]) => unknown)(command, ...rest);
      };
    },
  });
  return { ...conn, doc };
}
