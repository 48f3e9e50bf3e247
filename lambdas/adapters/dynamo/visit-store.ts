import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchWrite } from './batch.js';
import { pageviewsOf, type Visit, type VisitAttributes, type VisitEvent } from '../../domain/visit.js';
import type { VisitStore } from '../../ports.js';

/** Partition of one visitor's visits on one site. */
export const visitorPk = (site: string, visitorId: string) => `VIS#${site}#${visitorId}`;
/** Visits sort by start time (13-digit ms), so "visits before a time" is a key range. */
export const visitSk = (start: number, id: string) => `V#${String(start).padStart(13, '0')}#${id}`;
const skUpTo = (ms: number) => `V#${String(Math.max(0, ms)).padStart(13, '0')}#~`;

/** Compact event rows: [ts, type (0 page view, 1 goal), path, goal, link, id]. */
type EventRow = [number, 0 | 1, string, string | null, string | null, string];

/** A visit as a VISIT item (`docs/data-model.md`). */
export function visitToItem(v: Visit): Record<string, unknown> {
  const rows: EventRow[] = v.events.map((e) => [e.ts, e.type === 'goal' ? 1 : 0, e.path, e.goal, e.link, e.id]);
  return {
    [PK]: visitorPk(v.site, v.visitor_id),
    [SK]: visitSk(v.start, v.id),
    type: 'VISIT',
    id: v.id,
    site: v.site,
    visitor_id: v.visitor_id,
    start: v.start,
    end: v.end,
    landing_page: v.landing_page,
    pageviews: pageviewsOf(v),
    attrs: v.attrs,
    ev: JSON.stringify(rows),
  };
}

export function itemToVisit(item: Record<string, unknown>): Visit {
  const attrs = item.attrs as VisitAttributes;
  const rows = JSON.parse(String(item.ev)) as EventRow[];
  const events: VisitEvent[] = rows.map(([ts, type, path, goal, link, id], i) => ({
    id,
    ts,
    type: type === 1 ? 'goal' : 'pageview',
    path,
    goal,
    link,
    ...(i === 0 ? { attrs } : {}),
  }));
  return {
    id: String(item.id),
    site: String(item.site),
    visitor_id: String(item.visitor_id),
    start: Number(item.start),
    end: Number(item.end),
    landing_page: String(item.landing_page),
    attrs,
    events,
  };
}

/** Visits in the single table: one partition per visitor, sorted by start. */
export class DynamoVisitStore implements VisitStore {
  /** Requests made, for the benchmark's request counts. */
  readonly calls = { query: 0, batchWrite: 0 };

  constructor(private readonly conn: DynamoConnection) {}

  async visitsAround(site: string, visitorId: string, fromMs: number, toMs: number): Promise<Visit[]> {
    const visits: Visit[] = [];
    let start: Record<string, unknown> | undefined;
    // Newest first from `toMs` back; visits do not overlap, so the first one
    // ending before `fromMs` means every older one does too.
    for (;;) {
      this.calls.query++;
      const page = await this.conn.doc.send(
        new QueryCommand({
          TableName: this.conn.table,
          // The partition also holds the visitor's payments (P#…): stay within the visits.
          KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
          ExpressionAttributeValues: { ':pk': visitorPk(site, visitorId), ':from': 'V#', ':to': skUpTo(toMs) },
          ScanIndexForward: false,
          Limit: 10,
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      );
      for (const item of page.Items ?? []) {
        if (Number(item.end) < fromMs) return visits.reverse();
        visits.push(itemToVisit(item));
      }
      start = page.LastEvaluatedKey;
      if (!start) return visits.reverse();
    }
  }

  async firstVisit(site: string, visitorId: string): Promise<Visit | null> {
    this.calls.query++;
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :v)`,
        ExpressionAttributeValues: { ':pk': visitorPk(site, visitorId), ':v': 'V#' },
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    return Items[0] ? itemToVisit(Items[0]) : null;
  }

  async writeVisits(put: readonly Visit[], remove: readonly Visit[]): Promise<void> {
    const putItems = put.map(visitToItem);
    const written = new Set(putItems.map((i) => `${i[PK]}|${i[SK]}`));
    const deletes = remove
      .map((v) => ({ [PK]: visitorPk(v.site, v.visitor_id), [SK]: visitSk(v.start, v.id) }))
      .filter((k) => !written.has(`${k[PK]}|${k[SK]}`));
    const unique = new Map(deletes.map((k) => [`${k[PK]}|${k[SK]}`, k]));
    this.calls.batchWrite += await batchWrite(this.conn, [
      ...putItems.map((Item) => ({ PutRequest: { Item } })),
      ...[...unique.values()].map((Key) => ({ DeleteRequest: { Key } })),
    ]);
  }
}
