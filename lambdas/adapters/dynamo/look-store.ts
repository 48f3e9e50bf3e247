import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { ttlOf } from './expiry.js';
import { PARTITIONS } from './items.js';
import type { LookLedger, LookMarks, SiteLook } from '../../ports.js';

const LOOKS_PK = PARTITIONS.looks.key();
const { LOOK } = PARTITIONS.looks.items;
/** An item of a site nobody looks at any more (a deleted one) goes after this long (DynamoDB TTL). */
const LOOK_TTL_MS = LOOK.ttlSeconds * 1000;
/** Page size of the operations run's listing: about 100 B an item, so a page is at most 100 KB. */
const LIST_PAGE = 1000;

const numberOr = (value: unknown): number | null => (typeof value === 'number' ? value : null);

function lookOf(item: Record<string, unknown>): SiteLook {
  return { looked: Number(item.looked), wanted: numberOr(item.wanted), refreshed: numberOr(item.refreshed) };
}

/**
 * The LOOK items (`LOOKS` / `<domain>`, `docs/data-model.md`): `looked`, `wanted`, `refreshed` (ms) and the TTL
 * attribute. The report and MCP functions write `looked`, `wanted` and the TTL only, returning nothing (`LOOK_UPDATE` in
 * lib/functions.ts): an idle site is told by a failed condition, not by reading the old item back.
 */
export class DynamoLookStore implements LookMarks, LookLedger {
  constructor(private readonly conn: DynamoConnection) {}

  /** One UpdateItem conditioned on a look after `activeSince`; when it fails, a second one that also sets `wanted`. */
  async look(site: string, now: number, activeSince: number): Promise<boolean> {
    const update = (set: string, condition?: string) =>
      this.conn.doc.send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: { [PK]: LOOKS_PK, [SK]: LOOK.key(site) },
          UpdateExpression: `SET ${set}, expires_at = :e`,
          ...(condition ? { ConditionExpression: condition } : {}),
          ExpressionAttributeValues: {
            ':now': now,
            ':e': ttlOf(now + LOOK_TTL_MS).expires_at,
            ...(condition ? { ':since': activeSince } : {}),
          },
          ReturnValues: 'NONE',
        }),
      );
    try {
      await update('looked = :now', 'looked > :since');
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    await update('looked = :now, wanted = :now');
    return false;
  }

  async get(site: string): Promise<SiteLook | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: { [PK]: LOOKS_PK, [SK]: LOOK.key(site) },
        ConsistentRead: true,
      }),
    );
    return Item ? lookOf(Item) : null;
  }

  async list(): Promise<Map<string, SiteLook>> {
    const out = new Map<string, SiteLook>();
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': LOOKS_PK },
      ConsistentRead: true,
      Limit: LIST_PAGE,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) out.set(String(item[SK]), lookOf(item));
    return out;
  }

  async setRefreshed(site: string, ms: number): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: { [PK]: LOOKS_PK, [SK]: LOOK.key(site) },
          UpdateExpression: 'SET refreshed = :ms',
          // A look's item only: a deleted site's item is not made again.
          ConditionExpression: `attribute_exists(${PK})`,
          ExpressionAttributeValues: { ':ms': ms },
        }),
      )
      .catch((error: unknown) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }
}
