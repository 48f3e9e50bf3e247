import { DeleteCommand, GetCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK, SK } from '../table.js';
import type { PayerSummary } from '../../../domain/reports/cohorts.js';
import { dayMembers, memberItem, memberKey, memberPk, monthMembers, summaryOf } from './cohort-member-items.js';
import { ignoreCondition } from './payer-store.js';
import { addDays } from '../../../domain/range.js';

/** Members read per Query page (≤ 1 KB each, about 200 B): a report's read is paged, never one unbounded answer. */
const MEMBER_PAGE = 1000;

/**
 * The cohort member items (`cohort-member-items.ts`): each payer's summary on its first day. A
 * member is written and deleted only over one computed from an older payer counter (`src`), so
 * of two racing recomputes of a payer the one that read later wins. Reads are consistent.
 */
export class CohortMemberStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** The stored summary JSON (`m`) of a payer's member on a day, or null. */
  async storedSummary(site: string, day: string, payer: string): Promise<string | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: memberKey(site, day, payer), ConsistentRead: true }),
    );
    return (Item?.m as string | undefined) ?? null;
  }

  /** Writes a payer's member on its summary's day, unless one computed from counter `src` or later is there. */
  async put(site: string, payer: string, summary: PayerSummary, src: number): Promise<void> {
    await this.conn.doc
      .send(
        new PutCommand({
          TableName: this.conn.table,
          Item: memberItem(site, payer, summary, src),
          ConditionExpression: `attribute_not_exists(${PK}) OR src < :src`,
          ExpressionAttributeValues: { ':src': src },
        }),
      )
      .catch(ignoreCondition);
  }

  /** Deletes a payer's member on a day it left, if computed from a counter before `src`. */
  async deleteBefore(site: string, day: string, payer: string, src: number): Promise<void> {
    await this.conn.doc
      .send(
        new DeleteCommand({
          TableName: this.conn.table,
          Key: memberKey(site, day, payer),
          ConditionExpression: 'src < :src',
          ExpressionAttributeValues: { ':src': src },
        }),
      )
      .catch(ignoreCondition);
  }

  /** The summaries of the payers whose first payment is on a local day (one paged Query). */
  async ofDay(site: string, day: string): Promise<PayerSummary[]> {
    const out: PayerSummary[] = [];
    for await (const page of paginateQuery({ client: this.conn.doc }, this.query(site, ':day', dayMembers(day))))
      for (const item of page.Items ?? []) out.push(summaryOf(item));
    return out;
  }

  /** The summaries of the payers whose first payment is in a month, by local day (`ofDay`'s order, one paged Query). */
  async ofMonth(site: string, month: string): Promise<Map<string, PayerSummary[]>> {
    const out = new Map<string, PayerSummary[]>();
    for await (const page of paginateQuery({ client: this.conn.doc }, this.query(site, ':month', monthMembers(month))))
      for (const item of page.Items ?? []) {
        const summary = summaryOf(item);
        const day = out.get(summary.day);
        if (day) day.push(summary);
        else out.set(summary.day, [summary]);
      }
    return out;
  }

  /**
   * The payers (`customerKey`) and summaries of the members whose first payment is on a local day `from`..`to`
   * (filtered retention, `docs/api.md` "Filters"): one paged Query of the sort keys from `<from>#` to the
   * day after `to` (no member's key is that prefix alone), eventually consistent like every report read.
   */
  async between(site: string, from: string, to: string): Promise<Array<{ payer: string; summary: PayerSummary }>> {
    const out: Array<{ payer: string; summary: PayerSummary }> = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :lo AND :hi`,
      ExpressionAttributeValues: { ':pk': memberPk(site), ':lo': dayMembers(from), ':hi': dayMembers(addDays(to, 1)) },
      ProjectionExpression: `${SK}, m`,
    };
    for await (const page of paginateQuery({ client: this.conn.doc, pageSize: MEMBER_PAGE }, query))
      for (const item of page.Items ?? []) {
        const sk = String(item[SK]);
        out.push({ payer: sk.slice(sk.indexOf('#') + 1), summary: summaryOf(item) });
      }
    return out;
  }

  /** A consistent Query of the members whose key starts with `prefix` (named `name` in the request). */
  private query(site: string, name: ':day' | ':month', prefix: string) {
    return {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, ${name})`,
      ExpressionAttributeValues: { ':pk': memberPk(site), [name]: prefix },
      ConsistentRead: true,
    };
  }
}
