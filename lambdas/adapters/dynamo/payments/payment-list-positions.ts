import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { BULK_CONCURRENCY, batchWrite } from '../batch.js';
import { PARTITIONS } from '../items.js';
import { PK, SK } from '../table.js';
import type { Contribution } from '../../../domain/payments/contribution.js';
import type { Listed } from '../../../domain/payments/recompute-plan.js';
import { ignoreCondition, toKey } from './payment-list-items.js';

/**
 * PAYMENT_LIST and PAYMENT_LIST_REFUNDED, the payment list's positions (`docs/data-model.md`,
 * "Payments"). Every key is built from the `site` string the store is given (the site's namespace).
 *
 * - PAYMENT_LIST `PL#<site>#<YYYY-MM>` / `<A|U>#<day>#<ts 13>#<provider:id>`: one per listed
 *   payment (A attributed, U unattributed), holding its contribution (`c`, JSON) and revision
 *   (`rev`); while its recomputes may be unfinished, `pending` and the positions it left (`stale`).
 * - PAYMENT_LIST_REFUNDED `PLR#<site>#<YYYY-MM>` / `<day>#<ts 13>#<provider:id>`: a refunded
 *   payment's copy (`rev` only), so the `refunded` filter reads only them.
 */
export const listPk = (site: string, month: string) => PARTITIONS.paymentList.key(site, month);
export const refundedPk = (site: string, month: string) => PARTITIONS.paymentListRefunded.key(site, month);
const { PAYMENT_LIST } = PARTITIONS.paymentList.items;
const { PAYMENT_LIST_REFUNDED } = PARTITIONS.paymentListRefunded.items;

/** A list position: a table key. */
export interface Position {
  pk: string;
  sk: string;
}

/** Where a contribution is listed: its main item and, when refunded, its copy. */
export function listKeys(
  site: string,
  c: Pick<Contribution, 'day' | 'ts' | 'key' | 'touch_day' | 'refunded'>,
): [main: Position, ...copy: Position[]] {
  const month = c.day.slice(0, 7);
  const keys: [Position, ...Position[]] = [
    { pk: listPk(site, month), sk: PAYMENT_LIST.key(c.touch_day !== null, c.day, c.ts, c.key) },
  ];
  if (c.refunded) keys.push({ pk: refundedPk(site, month), sk: PAYMENT_LIST_REFUNDED.key(c.day, c.ts, c.key) });
  return keys;
}

/** `pk|sk` of a list position, the form a payment keeps of positions to remove (`Payment.unlisted`). */
export const positionId = (k: Position) => `${k.pk}|${k.sk}`;

/** The position a `positionId` names. */
export function parsePosition(id: string): Position {
  const i = id.indexOf('|');
  return { pk: id.slice(0, i), sk: id.slice(i + 1) };
}

/** The local day (`YYYY-MM-DD`) a list position belongs to. */
export const dayOfPosition = (k: Position) =>
  k.pk.startsWith(PARTITIONS.paymentListRefunded.prefix) ? k.sk.slice(0, 10) : k.sk.slice(2, 12);

/** A main list item's contribution. */
const toContribution = (item: Record<string, unknown>): Contribution => JSON.parse(String(item.c)) as Contribution;

/**
 * The items of a contribution's positions (`listKeys`): the main one with `body` (its `c`, and
 * `pending`/`stale` when set), the refunded copy with the revision only.
 */
function listItems(site: string, c: Contribution, body: Record<string, unknown>): Array<Record<string, unknown>> {
  return listKeys(site, c).map((k, i) => ({
    [PK]: k.pk,
    [SK]: k.sk,
    type: i === 0 ? 'PAYMENT_LIST' : 'PAYMENT_LIST_REFUNDED',
    rev: c.rev,
    ...(i === 0 ? body : {}),
  }));
}

/** The payment list's position items of a site's namespace. */
export class PaymentListPositions {
  constructor(private readonly conn: DynamoConnection) {}

  /** The main item at `main` (read consistently), undefined when none. */
  async stored(main: Position): Promise<Listed | undefined> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: toKey(main), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    return {
      rev: Number(Item.rev),
      c: toContribution(Item),
      pending: Boolean(Item.pending),
      stale: (Item.stale as string[] | undefined) ?? [],
    };
  }

  /**
   * Writes a contribution's items, each only over an item of the same or an older revision; with
   * `pending`, the main item is marked until `settle` and carries `stale` (when any).
   * @returns false when a newer revision held a position (what came before stays written)
   */
  async put(site: string, c: Contribution, pending: boolean, stale: readonly string[]): Promise<boolean> {
    const body = { c: JSON.stringify(c), ...(pending ? { pending: 1, ...(stale.length > 0 ? { stale } : {}) } : {}) };
    for (const item of listItems(site, c, body)) {
      try {
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: item,
            ConditionExpression: `attribute_not_exists(${PK}) OR rev <= :rev`,
            ExpressionAttributeValues: { ':rev': c.rev },
          }),
        );
      } catch (error) {
        ignoreCondition(error);
        return false;
      }
    }
    return true;
  }

  /** Deletes a contribution's items that still hold its revision (a newer revision settled meanwhile). */
  async takeBack(site: string, c: Contribution): Promise<void> {
    for (const k of listKeys(site, c))
      await this.conn.doc
        .send(
          new DeleteCommand({
            TableName: this.conn.table,
            Key: toKey(k),
            ConditionExpression: 'rev = :rev',
            ExpressionAttributeValues: { ':rev': c.rev },
          }),
        )
        .catch(ignoreCondition);
  }

  /**
   * Deletes a position.
   * @returns the contribution it held, null for an item without one (a refunded copy), undefined when it was gone
   */
  async remove(position: Position): Promise<Contribution | null | undefined> {
    const { Attributes } = await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: toKey(position), ReturnValues: 'ALL_OLD' }),
    );
    if (!Attributes) return undefined;
    return Attributes.c ? toContribution(Attributes) : null;
  }

  /** Removes a main item's `pending` and `stale`, if it still holds the revision `rev`. */
  async settle(main: Position, rev: number): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: toKey(main),
          UpdateExpression: 'REMOVE pending, stale',
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': rev },
        }),
      )
      .catch(ignoreCondition);
  }

  /**
   * Writes the items of many contributions with BatchWriteItem, unconditionally (a bulk load's
   * payments have no other writer).
   * @returns the BatchWriteItem calls made
   */
  bulkPut(site: string, contributions: readonly Contribution[]): Promise<number> {
    return batchWrite(
      this.conn,
      contributions.flatMap((c) =>
        listItems(site, c, { c: JSON.stringify(c) }).map((Item) => ({ PutRequest: { Item } })),
      ),
      BULK_CONCURRENCY,
    );
  }

  /** Deletes positions with BatchWriteItem. */
  async bulkRemove(positions: readonly Position[]): Promise<void> {
    await batchWrite(
      this.conn,
      positions.map((k) => ({ DeleteRequest: { Key: toKey(k) } })),
      BULK_CONCURRENCY,
    );
  }

  /** The contributions listed on a local day (its A items, then its U items, by sort key), read consistently. */
  async day(site: string, day: string): Promise<Contribution[]> {
    const out: Contribution[] = [];
    for (const attributed of [true, false]) {
      const query = {
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :day)`,
        ExpressionAttributeValues: {
          ':pk': listPk(site, day.slice(0, 7)),
          ':day': PAYMENT_LIST.range.from(attributed, day),
        },
        ConsistentRead: true,
      };
      for await (const page of paginateQuery({ client: this.conn.doc }, query))
        for (const item of page.Items ?? []) out.push(toContribution(item));
    }
    return out;
  }

  /**
   * The contributions listed in a month, by local day (read consistently, one paged Query of the
   * month's partition): each day's in the order of `day` (its A items, then its U items, by sort key).
   */
  async month(site: string, month: string): Promise<Map<string, Contribution[]>> {
    const out = new Map<string, Contribution[]>();
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': listPk(site, month) },
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) {
        const c = toContribution(item);
        const day = out.get(c.day);
        if (day) day.push(c);
        else out.set(c.day, [c]);
      }
    return out;
  }
}
