import { GetCommand, PutCommand, QueryCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchWrite } from './batch.js';
import { readPendingParts } from './rollup-reader.js';
import { rollupPk } from './rollup-keys.js';
import { rollupLogPk } from './rollup-log.js';
import { visitorPk } from './visit-store.js';
import { payerPk } from './payments/payer-items.js';
import { memberPk } from './payments/cohort-member-items.js';
import { cohortPk } from './payments/cohort-items.js';
import { PaymentListStore, counterPartitions } from './payments/payment-list-store.js';
import { ROLLUP_METRICS } from '../../domain/rollup.js';
import { PROVIDERS } from '../../domain/payments/facts.js';
import { recentMarksPk } from './recent-payment-marks.js';
import { PARTITIONS } from './items.js';
import { realtimePk } from './realtime-store.js';
import type { RebuildCheckpoint, RebuildStore } from '../../ports.js';

/**
 * Every partition of a data namespace that is not keyed by visitor: the
 * rollups, payments, aliases, customers, payment counters and pending credits
 * (`docs/data-model.md`; the payment list's month partitions come from
 * `PaymentListStore.listPartitions`). A new item type derived for a site whose partition
 * key is not a visitor's must be listed here, or a retired generation's copy
 * of it is never deleted (test/rebuild/rebuild.test.ts scans the table for leftovers).
 */
export function namespacePartitions(ns: string): string[] {
  return [
    ...ROLLUP_METRICS.map((metric) => rollupPk(ns, metric)),
    // The rollup delta log: pending deltas and per-shard log states.
    rollupLogPk(ns),
    // Payment counters per dimension and goal, and the legacy per-payment rollups; one empty Query each at worst.
    ...counterPartitions(ns),
    PARTITIONS.payment.key(ns),
    PARTITIONS.customer.key(ns),
    // Retention: payers' payments and states, cohort members, cohorts (`payments/payer-items.ts`, `cohort-member-items.ts`, `cohort-items.ts`).
    payerPk(ns),
    memberPk(ns),
    cohortPk(ns),
    PARTITIONS.paymentPending.key(ns),
    recentMarksPk(ns),
    ...PROVIDERS.map((provider) => PARTITIONS.paymentAlias.key(ns, provider)),
    // Realtime slices expire by TTL in AWS, but dynalite keeps them and a deleted site keeps none.
    realtimePk(ns),
  ];
}

/** Where a rebuild of one generation got to: the last batch whose visits and rollups are written. */
export const rebuildCheckpointSchema = z.object({
  generation: z.number().int().min(1),
  /** RFC 3339: when the rebuild of this generation began. */
  started: z.string(),
  /** Batches of the archive sessionized so far (their sequence numbers are 1..batches). */
  batches: z.number().int().min(0),
  /** Events sessionized so far. */
  events: z.number().int().min(0),
  /** The last event sessionized (archive order: ts, then event id), or null before the first batch. */
  after: z.object({ ts: z.number(), id: z.string() }).nullable(),
}) satisfies z.ZodType<RebuildCheckpoint>;

const { REBUILD } = PARTITIONS.rebuild.items;
export const rebuildStateKey = (domain: string) => ({ [PK]: PARTITIONS.rebuild.key(domain), [SK]: REBUILD.key() });
const checkpointKey = (domain: string, generation: number) => ({
  [PK]: PARTITIONS.rebuild.key(domain),
  [SK]: REBUILD.forms.generation(generation),
});

/** Deletes every item of a partition, page by page (1 MB Query pages, 25-item batch deletes); resolves with the count. */
export async function deletePartition(conn: DynamoConnection, pk: string): Promise<number> {
  let deleted = 0;
  const query = {
    TableName: conn.table,
    KeyConditionExpression: `${PK} = :pk`,
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: `${PK}, ${SK}`,
  };
  for await (const page of paginateQuery({ client: conn.doc }, query)) {
    const keys = page.Items ?? [];
    await batchWrite(
      conn,
      keys.map((Key) => ({ DeleteRequest: { Key } })),
    );
    deleted += keys.length;
  }
  return deleted;
}

/** The highest generation a rebuild ever began for the domain (its REBUILD state), 0 when none. */
export async function lastRebuildGeneration(conn: DynamoConnection, domain: string): Promise<number> {
  const { Item } = await conn.doc.send(
    new GetCommand({ TableName: conn.table, Key: rebuildStateKey(domain), ConsistentRead: true }),
  );
  return typeof Item?.last_generation === 'number' ? Item.last_generation : 0;
}

/**
 * What `footfall rebuild` keeps besides the generation fields of the SITE
 * item (`docs/rebuild.md`): the highest generation number ever begun (so a
 * number is never reused, even after an abandoned rebuild), a checkpoint per
 * generation being built (to resume after a crash), and the deletion of a
 * retired generation's items. Items REBUILD, one partition per site, each
 * under 1 KB.
 */
export class DynamoRebuildStore implements RebuildStore {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * A new generation number for the site, above every one begun before
   * (`floor`: the site's live or retired generation). One conditional-free
   * ADD: two concurrent rebuilds get different numbers, and the SITE item's
   * conditional write lets only one of them build.
   */
  async nextGeneration(domain: string, floor: number): Promise<number> {
    const { Attributes } = await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: rebuildStateKey(domain),
        UpdateExpression: 'SET last_generation = if_not_exists(last_generation, :floor) + :one, #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':floor': floor, ':one': 1, ':type': 'REBUILD' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const next = Number(Attributes?.last_generation);
    // A number below the floor was left by a state item older than the site's generations (never in practice): skip past it.
    return next > floor ? next : this.nextGeneration(domain, floor);
  }

  /**
   * The first site-local day with a visit in the namespace (its first daily
   * `visits` rollup), or null: what a rebuild derives from the archive and
   * would lose if the archive starts later. Payments do not count: they are
   * copied, not derived from the archive. One Query of one item, and the
   * pending rollup deltas (`docs/data-model.md`, "Rollups: a delta log, compacted").
   */
  async firstVisitDay(ns: string): Promise<string | null> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :d)`,
        ExpressionAttributeValues: {
          ':pk': rollupPk(ns, 'visits'),
          ':d': PARTITIONS.rollup.items.ROLLUP.range.granularity('D'),
        },
        ProjectionExpression: SK,
        Limit: 1,
      }),
    );
    const folded = Items[0] ? (String(Items[0][SK]).split('#')[1] ?? null) : null;
    // Visits whose rollup deltas are not compacted yet count too.
    const logged = (await readPendingParts(this.conn, ns)).flatMap((p) =>
      p.deltas.filter((d) => d.key.metric === 'visits' && d.key.granularity === 'D').map((d) => d.key.period),
    );
    return [folded, ...logged].filter((d): d is string => d !== null).sort()[0] ?? null;
  }

  /** The checkpoint of a generation being built, or null before its first batch. */
  async checkpoint(domain: string, generation: number): Promise<RebuildCheckpoint | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: checkpointKey(domain, generation), ConsistentRead: true }),
    );
    return Item ? rebuildCheckpointSchema.parse(Item) : null;
  }

  async saveCheckpoint(domain: string, checkpoint: RebuildCheckpoint): Promise<void> {
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...checkpointKey(domain, checkpoint.generation), type: 'REBUILD', ...checkpoint },
      }),
    );
  }

  async deleteCheckpoint(domain: string, generation: number): Promise<void> {
    await batchWrite(this.conn, [{ DeleteRequest: { Key: checkpointKey(domain, generation) } }]);
  }

  /**
   * The visitors with a VISITOR_PAYMENT copy in the namespace: the `visitor`
   * of its PAYMENT items (a payment's visitor may have no event in the archive).
   */
  async paymentVisitors(ns: string): Promise<string[]> {
    const visitors = new Set<string>();
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': PARTITIONS.payment.key(ns) },
      ProjectionExpression: 'visitor',
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) if (typeof item.visitor === 'string') visitors.add(item.visitor);
    }
    return [...visitors];
  }

  /**
   * Deletes every item of the data namespace `ns`: the partitions of
   * `namespacePartitions`, and the visit partitions of `visitors` (pages of
   * visitor ids: everyone with an archived event, plus `paymentVisitors`).
   * A visitor met twice costs one more empty Query, so pages need not be
   * distinct from each other. Safe to repeat after a crash.
   * @returns items deleted
   */
  async deleteNamespace(
    ns: string,
    visitors: AsyncIterable<readonly string[]>,
    onProgress?: (deleted: number) => void | Promise<void>,
  ): Promise<number> {
    let deleted = 0;
    for await (const page of visitors) {
      for (const visitor of new Set(page)) deleted += await deletePartition(this.conn, visitorPk(ns, visitor));
      await onProgress?.(deleted);
    }
    // The payment list's month partitions are found from the month counters, so before those go.
    for (const pk of [...(await new PaymentListStore(this.conn).listPartitions(ns)), ...namespacePartitions(ns)]) {
      deleted += await deletePartition(this.conn, pk);
      await onProgress?.(deleted);
    }
    return deleted;
  }
}
