import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK, SK } from '../table.js';
import { BULK_CONCURRENCY, batchGet, batchWrite } from '../batch.js';
import { DynamoRecentPaymentMarks } from '../recent-payment-marks.js';
import { visitorPk } from '../visit-store.js';
import type { Payment } from '../../../domain/payments/payment.js';
import { inParallel } from '../../../domain/parallel.js';
import type { PaymentRef } from '../../../ports.js';
import {
  markerItem,
  markerKey,
  timelineRefOf,
  visitorPaymentItem,
  visitorPaymentKey,
  visitorPaymentsPrefix,
} from './payment-items.js';

/** Visitors whose markers a bulk load raises at once. */
const MARKER_CONCURRENCY = 16;

/**
 * How far before its read of the markers a bulk raise looks for raises other writers recorded: the
 * clocks of the functions that record them (Lambda hosts, NTP-synchronised) may be this far apart.
 */
const RAISE_CLOCK_SKEW_MS = 5 * 60_000;

/**
 * Payments on their visitors' timelines (`docs/data-model.md`): each attributed payment's copy in its
 * visitor's partition (VISITOR_PAYMENT, next to the visits, so a timeline reads one partition) and the
 * visitor's payments marker (VISITOR_PAYMENTS: the latest copy's time, which the sessionizer reads
 * with the visits), each raise recorded first as a RECENT_PAYMENT_MARK (`ShardVisitCache`).
 */
export class PaymentTimeline {
  private readonly recentMarks: DynamoRecentPaymentMarks;

  /** @param clock ms since epoch: the time RECENT_PAYMENT_MARK items are recorded at */
  constructor(
    private readonly conn: DynamoConnection,
    private readonly clock: () => number,
  ) {
    this.recentMarks = new DynamoRecentPaymentMarks(conn);
  }

  /**
   * Puts the payment's copy where it now belongs: the copy of `previous` (the payment's visitor and
   * time as stored before) deleted when it moved; a copy already in place left as it is; a new one
   * written after the visitor's marker is raised to its time, so no copy is ever above its marker.
   */
  async place(payment: Payment, previous: { visitor: string | null; ts: number | null } | null): Promise<void> {
    if (previous?.visitor && (previous.visitor !== payment.visitor || previous.ts !== payment.ts)) {
      await this.conn.doc.send(
        new DeleteCommand({
          TableName: this.conn.table,
          Key: visitorPaymentKey({ ...payment, visitor: previous.visitor, ts: previous.ts }),
        }),
      );
    }
    if (!payment.visitor) return;
    // Read before writing: a copy already in place is left as it is. Its key and payment key are all it
    // holds, and they do not change with the payment's revision (the sessionizer's write budget, `docs/benchmarks.md` "Budgets"), so racing
    // writers of a new copy write the same item.
    const { Item: copy } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: visitorPaymentKey(payment), ConsistentRead: true }),
    );
    if (copy) return;
    await this.recentMarks.record(payment.site, payment.visitor, payment.ts ?? 0, this.clock());
    await this.raiseMarker(payment.site, payment.visitor, payment.ts ?? 0);
    await this.conn.doc.send(new PutCommand({ TableName: this.conn.table, Item: visitorPaymentItem(payment) }));
  }

  /**
   * The payments on a visitor's timeline (VISITOR_PAYMENT items in the
   * visitor's partition: those whose `visitor` is this visitor), by provider
   * and canonical id. One Query, paged.
   */
  async visitorPayments(site: string, visitorId: string): Promise<PaymentRef[]> {
    const out: PaymentRef[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :p)`,
      ExpressionAttributeValues: { ':pk': visitorPk(site, visitorId), ':p': visitorPaymentsPrefix() },
      ProjectionExpression: SK,
      Limit: 100,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) out.push(timelineRefOf(String(item[SK])));
    }
    return out;
  }

  /** Deletes the timeline copies of payments as they were, with BatchWriteItem (they moved visitor or time). */
  async bulkDropTimelineCopies(previous: readonly Payment[]): Promise<void> {
    await batchWrite(
      this.conn,
      previous.filter((p) => p.visitor).map((p) => ({ DeleteRequest: { Key: visitorPaymentKey(p) } })),
      BULK_CONCURRENCY,
    );
  }

  /**
   * A bulk load's markers: `latest` holds each visitor's latest loaded payment time (ms). Too many to
   * list as recent raises, so one reset tells the sessionizer to trust no marker it holds
   * (`ShardVisitCache`). Without `raise` they are set with BatchWriteItem (the load holds every
   * payment of its visitors). With `raise` (an import: visitors may have payments outside it) each
   * marker is only raised, in bulk too: the stored markers read (BatchGetItem), those missing or
   * lower put with BatchWriteItem, then every raise another writer recorded since shortly before
   * that read (RECENT_PAYMENT_MARK, recorded before its marker is raised: `place`) raised again with
   * a conditional UpdateItem, so a put that overwrote a concurrent raise is mended. A conditional
   * UpdateItem per visitor cost a single request each (0.16 a payment of the import's mix).
   */
  async bulkMarkers(site: string, latest: ReadonlyMap<string, number>, raise: boolean): Promise<void> {
    if (latest.size === 0) return;
    const readAt = this.clock();
    await this.recentMarks.recordReset(site, readAt);
    const stored = new Map<string, number>();
    if (raise) {
      const visitorOf = new Map([...latest.keys()].map((visitor) => [visitorPk(site, visitor), visitor]));
      const keys = [...latest.keys()].map((visitor) => markerKey(site, visitor));
      for (const item of await batchGet(this.conn, keys, [PK, 'latest']))
        stored.set(visitorOf.get(String(item[PK])) ?? '', Number(item.latest));
    }
    await batchWrite(
      this.conn,
      [...latest]
        .filter(([visitor, ts]) => !(ts <= (stored.get(visitor) ?? Number.NEGATIVE_INFINITY)))
        .map(([visitor, ts]) => ({ PutRequest: { Item: markerItem(site, visitor, ts) } })),
      BULK_CONCURRENCY,
    );
    if (!raise) return;
    const since = await this.recentMarks.since(site, readAt - RAISE_CLOCK_SKEW_MS);
    await inParallel(
      [...since.latest].filter(([visitor]) => latest.has(visitor)),
      MARKER_CONCURRENCY,
      ([visitor, ts]) => this.raiseMarker(site, visitor, ts),
    );
  }

  /**
   * Raises the visitor's payments marker to `ts` (ms) unless it is already there or later: one
   * conditional UpdateItem, a lost condition being the "already later" case. Its RECENT_PAYMENT_MARK,
   * or a reset, is recorded by the caller.
   */
  private async raiseMarker(site: string, visitor: string, ts: number): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: markerKey(site, visitor),
          UpdateExpression: 'SET latest = :ts, #type = :type',
          ConditionExpression: 'attribute_not_exists(latest) OR latest < :ts',
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: { ':ts': ts, ':type': 'VISITOR_PAYMENTS' },
        }),
      )
      .catch((error) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }
}
