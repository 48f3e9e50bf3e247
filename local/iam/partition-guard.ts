import { dict } from '../../lambdas/domain/dict.js';
import type { FUNCTIONS } from '../../lib/functions.js';
import { PK } from '../../lambdas/adapters/dynamo/table.js';
import { authorizer, tableArn } from './authorizer.js';
import { partitionOf, partitionPattern } from '../../lambdas/adapters/dynamo/items.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';

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

/**
 * One table action a request performs on one partition, with the request's other condition keys:
 * `attributes` (`dynamodb:Attributes`, the top-level attribute names it names) and `returnValues`
 * (`dynamodb:ReturnValues`) when it has them.
 */
export interface PartitionAccess {
  action: string;
  pk: string;
  attributes?: string[];
  returnValues?: string;
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

/** Words of DynamoDB's expression grammar that are not attribute names. */
const EXPRESSION_WORDS = new Set(
  'SET REMOVE ADD DELETE AND OR NOT BETWEEN IN attribute_exists attribute_not_exists attribute_type begins_with contains size if_not_exists list_append'
    .split(' ')
    .map((w) => w.toLowerCase()),
);

/**
 * The top-level attribute names a request names (`dynamodb:Attributes`): its key's or item's
 * attributes, and the first element of every path of its update, condition and projection
 * expressions (`#name` resolved through `ExpressionAttributeNames`).
 */
function attributesOf(input: Input, keyOrItem: unknown): string[] {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const found = new Set(Object.keys((keyOrItem ?? {}) as Input));
  for (const field of ['UpdateExpression', 'ConditionExpression', 'ProjectionExpression'])
    for (const m of String(input[field] ?? '').matchAll(/(?<![:#\w.])(#?[A-Za-z_]\w*)/g)) {
      const token = m[1]!;
      if (token.startsWith('#')) found.add(names[token] ?? token);
      else if (!EXPRESSION_WORDS.has(token.toLowerCase())) found.add(token);
    }
  return [...found];
}

/** The access of a single-item request on `key`, with its attributes and return values. */
const itemAccess = (action: string, input: Input, key: unknown, item: unknown = key): PartitionAccess => ({
  action,
  pk: pkOf(key) ?? '*',
  attributes: attributesOf(input, item),
  ...(typeof input.ReturnValues === 'string' ? { returnValues: input.ReturnValues } : {}),
});

/** The actions the items of a TransactWriteItems authorize, per the DynamoDB developer guide's "Using IAM with DynamoDB transactions". */
const TRANSACT_ACTIONS: ReadonlyArray<[string, string]> = [
  ['Put', 'dynamodb:PutItem'],
  ['Update', 'dynamodb:UpdateItem'],
  ['Delete', 'dynamodb:DeleteItem'],
  ['ConditionCheck', 'dynamodb:ConditionCheckItem'],
];

/**
 * Each table action a DynamoDB request performs and the partition it names, as IAM evaluates
 * `dynamodb:LeadingKeys`: a batch is authorized per item (BatchGetItem and BatchWriteItem's put and
 * delete requests each count as the batch action on their own key, per the DynamoDB developer guide's
 * "Using IAM policy conditions for fine-grained access control"), a transaction per item as the
 * single-item action it performs ("Using IAM with DynamoDB transactions": Put, Update, Delete and Get
 * are authorized as PutItem, UpdateItem, DeleteItem and GetItem, a ConditionCheck as
 * ConditionCheckItem). Requests without a partition (Scan, table operations) return one access with
 * `pk` `*`, whose `dynamodb:LeadingKeys` is absent.
 */
export function requestPartitions(command: string, input: Input): PartitionAccess[] {
  const action = `dynamodb:${command.replace(/Command$/, '')}`;
  switch (command) {
    case 'GetItemCommand':
    case 'DeleteItemCommand':
    case 'UpdateItemCommand':
      return [itemAccess(action, input, input.Key)];
    case 'PutItemCommand':
      return [itemAccess(action, input, input.Item)];
    case 'QueryCommand':
      return [
        {
          action,
          pk: queryPartition(input) ?? '*',
          ...(input.ProjectionExpression ? { attributes: attributesOf(input, {}) } : {}),
        },
      ];
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
    case 'TransactWriteItemsCommand':
      return ((input.TransactItems ?? []) as Input[]).map((item) => {
        const [kind, itemAction] = TRANSACT_ACTIONS.find(([k]) => item[k]) ?? ['', 'dynamodb:TransactWriteItems'];
        const request = (item[kind] ?? {}) as Input;
        return itemAccess(itemAction, request, request.Key ?? request.Item, request.Item ?? request.Key);
      });
    case 'TransactGetItemsCommand':
      return ((input.TransactItems ?? []) as Array<{ Get?: Input }>).map((item) =>
        itemAccess('dynamodb:GetItem', item.Get ?? {}, item.Get?.Key),
      );
    default:
      return [{ action, pk: '*' }];
  }
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

/** The switch that turns the twin's IAM off (`docs/security.md`, "IAM in the local twin"): `FOOTFALL_IAM=off`. */
export const iamEnforced = (env: NodeJS.ProcessEnv = process.env): boolean => env.FOOTFALL_IAM !== 'off';

/**
 * A view of `conn` whose every request is held to the identity policy of function `name` as `cdk
 * synth` produces it (`local/iam/policies.json`, evaluated by `local/iam/authorizer.ts`), as its role
 * would hold it in AWS: a request with any access the policy does not allow fails with
 * `AccessDeniedException` before it is sent, and one on a partition no item type of the registry
 * owns with `UnknownPartitionError`. The view shares the connection's client (closing the connection
 * closes it); `onAccess` sees every allowed access (tests count them). The local twin gives each
 * function's code such a view; with `FOOTFALL_IAM=off` the policy is not evaluated.
 */
export function functionConnection(
  conn: DynamoConnection,
  name: FunctionName,
  onAccess?: (access: PartitionAccess) => void,
): DynamoConnection {
  const authorize = iamEnforced() ? authorizer(name) : null;
  const resource = tableArn(conn.table);
  const check = (command: { constructor: { name: string }; input: unknown }) => {
    const commandName = DOCUMENT_COMMANDS.get(command.constructor.name) ?? command.constructor.name;
    for (const access of requestPartitions(commandName, command.input as Input)) {
      // A key no item type of the registry owns is a store spelling its own prefix (lambdas/adapters/dynamo/items.ts).
      if (access.pk !== '*' && !partitionOf(access.pk))
        throw new UnknownPartitionError(
          `function ${name} sent ${access.action} on partition ${access.pk}, which no item type of lambdas/adapters/dynamo/items.ts owns`,
        );
      const context = dict<string[]>();
      if (access.pk !== '*') context['dynamodb:LeadingKeys'] = [access.pk];
      if (access.attributes) context['dynamodb:Attributes'] = access.attributes;
      if (access.returnValues) context['dynamodb:ReturnValues'] = [access.returnValues];
      if (authorize && !authorize({ action: access.action, resource, context }, partitionPatternOf(access.pk)))
        throw new AccessDeniedException(
          `User: arn:aws:sts::000000000000:assumed-role/${name}Role/${name} is not authorized to perform: ${access.action} on resource: ${resource} (partition ${access.pk}) because no identity-based policy allows the ${access.action} action`,
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

/** The registry pattern of a partition (`PAY#*`), what the decision statistics count by. */
const partitionPatternOf = (pk: string): string => {
  const family = partitionOf(pk);
  return family ? partitionPattern(family) : pk;
};
