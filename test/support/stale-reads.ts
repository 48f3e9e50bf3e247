import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { PK, SK } from '../../lambdas/adapters/dynamo/table.js';

type Item = Record<string, unknown>;
/** A version an item had until `until` (ms, the stale-read clock): `null` when it did not exist. */
interface Version {
  item: Item | null;
  until: number;
}

export interface StaleReadOptions {
  /** How far back an eventually consistent read may look (ms): the N seconds of the stale-read mode. */
  windowMs: number;
  /** Seed of the choices (which past moment each read sees). */
  seed: number;
  /** The clock writes and reads are stamped with (ms), the test's fake one. */
  clock: () => number;
  /** Every read answers as of the oldest moment it may (a directed test of what staleness breaks), instead of a seeded one. */
  oldest?: boolean;
  /** Sees each read answered stale: the partitions and sort keys it covered that changed since, and how far back it answered (ms). */
  onStale?: (read: { keys: string[]; ageMs: number }) => void;
}

const keyOf = (item: Item) => JSON.stringify([item[PK], item[SK]]);
const skOf = (item: Item) => String(item[SK]);

/**
 * The local twin's stale-read mode (`docs/reliability.md` "Stale reads: the bet of the visit cache"): DynamoDB's eventually consistent reads "may not
 * reflect the results of a recently completed write" and AWS states no bound (Developer Guide,
 * "DynamoDB read consistency"); dynalite always answers with the newest item. Installed on a
 * connection, every GetItem, Query and BatchGetItem sent without `ConsistentRead: true` answers as
 * of a moment chosen (seeded) among the last `windowMs`: each item in the version it had then,
 * items written since absent, items deleted since present again. Strongly consistent reads and
 * writes are untouched; each write records the version it replaces (read strongly just before it).
 *
 * It wraps the document client's `send`, which every store of a connection goes through. A Query
 * with a `FilterExpression`, or a key condition other than `pk = :v` with an optional
 * `=`/`<`/`<=`/`>`/`>=`/`BETWEEN`/`begins_with` on `sk`, gets older versions of the items it returns
 * but no deleted item back.
 *
 * @returns counters of the reads answered stale (tests assert that the mode did something)
 */
export function installStaleReads(conn: DynamoConnection, options: StaleReadOptions): { stale: number; reads: number } {
  const history = new Map<string, Version[]>();
  const random = fc.sample(fc.double({ min: 0, max: 1, noNaN: true }), { seed: options.seed, numRuns: 100_000 });
  let draws = 0;
  const stats = { stale: 0, reads: 0 };
  const send = conn.doc.send.bind(conn.doc) as (command: unknown) => Promise<Record<string, unknown>>;

  const prune = (now: number) => {
    for (const [key, versions] of history) {
      const kept = versions.filter((v) => v.until > now - options.windowMs);
      if (kept.length === 0) history.delete(key);
      else history.set(key, kept);
    }
  };
  /** The moment a read sees: one of the recent writes' (just before it) or now, each alike. */
  const moment = (keys: readonly string[]): number => {
    const now = options.clock();
    prune(now);
    const times = [...new Set(keys.flatMap((k) => (history.get(k) ?? []).map((v) => v.until - 1)))];
    const choices = [now, ...times];
    const pick = options.oldest
      ? Math.min(...choices)
      : (choices[Math.floor((random[draws++ % random.length] ?? 0) * choices.length)] ?? now);
    if (pick !== now) {
      stats.stale++;
      options.onStale?.({
        keys: keys.filter((k) => (history.get(k) ?? []).some((v) => v.until > pick)),
        ageMs: now - pick,
      });
    }
    return pick;
  };
  /** The version of `key` at `at`: the oldest recorded one that was still current then, else `current`. */
  const versionAt = (key: string, current: Item | null, at: number): Item | null => {
    const older = (history.get(key) ?? []).filter((v) => v.until > at).sort((a, b) => a.until - b.until)[0];
    return older ? older.item : current;
  };

  const current = async (key: Item): Promise<Item | null> => {
    const got = await send(new GetCommand({ TableName: conn.table, Key: key, ConsistentRead: true }));
    return (got.Item as Item | undefined) ?? null;
  };
  const record = (prior: Array<[string, Item | null]>) => {
    const now = options.clock();
    for (const [key, item] of prior) history.set(key, [...(history.get(key) ?? []), { item, until: now }]);
  };
  const keysOfWrite = (command: unknown): Item[] => {
    if (command instanceof PutCommand) {
      const item = command.input.Item ?? {};
      return [{ [PK]: item[PK], [SK]: item[SK] }];
    }
    if (command instanceof UpdateCommand || command instanceof DeleteCommand) return [command.input.Key ?? {}];
    if (command instanceof BatchWriteCommand)
      return (command.input.RequestItems?.[conn.table] ?? []).map((r) => {
        const item = r.PutRequest?.Item ?? r.DeleteRequest?.Key ?? {};
        return { [PK]: item[PK], [SK]: item[SK] };
      });
    return [];
  };

  conn.doc.send = (async (command: unknown, ...rest: unknown[]) => {
    const writes = keysOfWrite(command);
    if (writes.length > 0) {
      const prior = await Promise.all(writes.map(async (k) => [keyOf(k), await current(k)] as [string, Item | null]));
      const out = await (send as (c: unknown, ...r: unknown[]) => Promise<Record<string, unknown>>)(command, ...rest);
      const unprocessed = new Set(
        (
          (out.UnprocessedItems as Record<string, Array<Record<string, { Item?: Item; Key?: Item }>>> | undefined)?.[
            conn.table
          ] ?? []
        ).map((r) => keyOf(r.PutRequest?.Item ?? r.DeleteRequest?.Key ?? {})),
      );
      record(prior.filter(([key]) => !unprocessed.has(key)));
      return out;
    }
    const out = await (send as (c: unknown, ...r: unknown[]) => Promise<Record<string, unknown>>)(command, ...rest);
    if (command instanceof GetCommand && command.input.ConsistentRead !== true) {
      stats.reads++;
      const key = keyOf(command.input.Key ?? {});
      const item = versionAt(key, (out.Item as Item | undefined) ?? null, moment([key]));
      return { ...out, Item: item ?? undefined };
    }
    if (command instanceof BatchGetCommand) {
      const request = command.input.RequestItems?.[conn.table];
      if (!request || request.ConsistentRead === true) return out;
      stats.reads++;
      const keys = (request.Keys ?? []).map((k) => keyOf(k));
      const at = moment(keys);
      const responses = (out.Responses ?? {}) as Record<string, Item[]>;
      const got = new Map((responses[conn.table] ?? []).map((i) => [keyOf(i), i]));
      const items = keys.flatMap((k) => versionAt(k, got.get(k) ?? null, at) ?? []);
      return { ...out, Responses: { ...responses, [conn.table]: items } };
    }
    if (command instanceof QueryCommand && command.input.ConsistentRead !== true) {
      stats.reads++;
      return staleQuery(command.input, out);
    }
    return out;
  }) as typeof conn.doc.send;

  /** A Query's page as of the chosen moment: its items' versions then, and deleted items of its range back. */
  const staleQuery = (input: QueryCommandInput, out: Record<string, unknown>) => {
    const items = (out.Items ?? []) as Item[];
    const range = keyRange(input);
    const inPage = (sk: string) => {
      if (!range || input.FilterExpression) return false;
      const forward = input.ScanIndexForward !== false;
      const start = input.ExclusiveStartKey ? skOf(input.ExclusiveStartKey) : undefined;
      const last = out.LastEvaluatedKey ? skOf(out.LastEvaluatedKey as Item) : undefined;
      const after = (a: string, b: string) => (forward ? a > b : a < b);
      return range.sk(sk) && (start === undefined || after(sk, start)) && (last === undefined || !after(sk, last));
    };
    const keys = new Set(items.map(keyOf));
    if (range)
      for (const [key, versions] of history) {
        const [pk, sk] = JSON.parse(key) as [unknown, string];
        if (pk === range.pk && !keys.has(key) && versions.some((v) => v.item) && inPage(sk)) keys.add(key);
      }
    const at = moment([...keys]);
    const byKey = new Map(items.map((i) => [keyOf(i), i]));
    const seen = [...keys].flatMap((k): Item[] => {
      const v = versionAt(k, byKey.get(k) ?? null, at);
      return v ? [v] : [];
    });
    seen.sort((a: Item, b: Item) => (skOf(a) < skOf(b) ? -1 : skOf(a) > skOf(b) ? 1 : 0));
    if (input.ScanIndexForward === false) seen.reverse();
    return { ...out, Items: seen, Count: seen.length };
  };

  return stats;
}

/** The partition value and a test on `sk` of a Query's key condition, or null when it is not of a form understood here. */
function keyRange(input: QueryCommandInput): { pk: unknown; sk: (sk: string) => boolean } | null {
  const names = input.ExpressionAttributeNames ?? {};
  const values = input.ExpressionAttributeValues ?? {};
  const expr = (input.KeyConditionExpression ?? '').replace(/#\w+/g, (n) => names[n] ?? n);
  const value = (placeholder: string) => String(values[placeholder]);
  const pkMatch = new RegExp(`(?:^|\\s|\\()${PK}\\s*=\\s*(:\\w+)`).exec(expr);
  if (!pkMatch?.[1]) return null;
  const pk = values[pkMatch[1]];
  const rest = expr
    .replace(pkMatch[0], '')
    .replace(/^\s*AND\s*|\s*AND\s*$/i, '')
    .trim();
  if (rest === '') return { pk, sk: () => true };
  let m = new RegExp(`^${SK}\\s+BETWEEN\\s+(:\\w+)\\s+AND\\s+(:\\w+)$`, 'i').exec(rest);
  if (m?.[1] && m[2]) {
    const [lo, hi] = [value(m[1]), value(m[2])];
    return { pk, sk: (sk) => sk >= lo && sk <= hi };
  }
  m = new RegExp(`^begins_with\\(\\s*${SK}\\s*,\\s*(:\\w+)\\s*\\)$`, 'i').exec(rest);
  if (m?.[1]) {
    const prefix = value(m[1]);
    return { pk, sk: (sk) => sk.startsWith(prefix) };
  }
  m = new RegExp(`^${SK}\\s*(=|<=|>=|<|>)\\s*(:\\w+)$`).exec(rest);
  if (m?.[1] && m[2]) {
    const [op, v] = [m[1], value(m[2])];
    const test = {
      '=': (s: string) => s === v,
      '<': (s: string) => s < v,
      '<=': (s: string) => s <= v,
      '>': (s: string) => s > v,
      '>=': (s: string) => s >= v,
    }[op];
    return test ? { pk, sk: test } : null;
  }
  return null;
}
