import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PARTITIONS } from '../items.js';
import { PK, SK } from '../table.js';
import type { ListClass } from '../../../domain/payments/contribution.js';
import { listPk, refundedPk } from './payment-list-positions.js';

const { PAYMENT_LIST } = PARTITIONS.paymentList.items;
const { PAYMENT_LIST_REFUNDED } = PARTITIONS.paymentListRefunded.items;

/** A partition and the bounds of the sort keys a page reads in it. */
type Source = [pk: string, from: string, to: string];

/**
 * The list partitions and bounds that serve a class in a month, from local day `lo` to `hi`:
 * `all` merges the attributed (A) and unattributed (U) items, `refunded` reads only the copies.
 */
function sourcesOf(site: string, cls: ListClass, month: string, lo: string, hi: string): Source[] {
  const listed = (attributed: boolean): Source => [
    listPk(site, month),
    PAYMENT_LIST.range.from(attributed, lo),
    PAYMENT_LIST.range.to(attributed, hi),
  ];
  const sources: Record<ListClass, Source[]> = {
    all: [listed(true), listed(false)],
    attributed: [listed(true)],
    unattributed: [listed(false)],
    refunded: [[refundedPk(site, month), PAYMENT_LIST_REFUNDED.range.from(lo), PAYMENT_LIST_REFUNDED.range.to(hi)]],
  };
  return sources[cls];
}

/** Newest first, ties by key descending. */
const newestFirst = (a: { ts: string; key: string }, b: { ts: string; key: string }) =>
  a.ts === b.ts ? (a.key < b.key ? 1 : -1) : a.ts < b.ts ? 1 : -1;

/** `YYYY-MM` of the month before. */
function previousMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/** Pages of the payment list (`docs/api.md`, "Payments"). */
export class PaymentListPage {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * Listed payments of a class from local day `startDay` back to `fromDay`, newest first (ties by
   * key descending), skipping `offset` and returning at most `limit` keys. One Query per month
   * partition and source (`sourcesOf`), each reading at most `offset + limit` keys; months are
   * read newest first until the page is full.
   * @returns payment keys (`provider:id`)
   */
  async page(
    site: string,
    cls: ListClass,
    fromDay: string,
    startDay: string,
    offset: number,
    limit: number,
  ): Promise<string[]> {
    const rows: Array<{ ts: string; key: string }> = [];
    for (
      let month = startDay.slice(0, 7);
      month >= fromDay.slice(0, 7) && rows.length < offset + limit;
      month = previousMonth(month)
    ) {
      const lo = fromDay.slice(0, 7) === month ? fromDay : `${month}-01`;
      const hi = startDay.slice(0, 7) === month ? startDay : `${month}-31`;
      const want = offset + limit - rows.length;
      const read = await Promise.all(
        sourcesOf(site, cls, month, lo, hi).map(([pk, from, to]) => this.readKeys(pk, from, to, want)),
      );
      rows.push(...read.flat().sort(newestFirst).slice(0, want));
    }
    return rows.slice(offset, offset + limit).map((r) => r.key);
  }

  /** Up to `want` list keys of one partition between two bounds (`<prefix><day>#`, `<prefix><day>#~`), newest first. */
  private async readKeys(
    pk: string,
    lo: string,
    hi: string,
    want: number,
  ): Promise<Array<{ ts: string; key: string }>> {
    const out: Array<{ ts: string; key: string }> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const { Items = [], LastEvaluatedKey } = await this.conn.doc.send(
        new QueryCommand({
          TableName: this.conn.table,
          KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :lo AND :hi`,
          ExpressionAttributeValues: { ':pk': pk, ':lo': lo, ':hi': hi },
          ProjectionExpression: SK,
          ScanIndexForward: false,
          Limit: want - out.length,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of Items) {
        // <prefix><day>#<ts 13>#<provider:id>; the lower bound is `<prefix><day>#`.
        const rest = String(item[SK]).slice(lo.length);
        out.push({ ts: rest.slice(0, 13), key: rest.slice(14) });
      }
      start = LastEvaluatedKey;
    } while (start && out.length < want);
    return out;
  }
}
