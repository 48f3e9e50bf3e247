import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchWrite } from './batch.js';
import type { Visit, VisitEvent } from '../../domain/visit.js';
import { compactRow, decodeChunk, decodeHead, encodeChunk, encodeHead } from './visit-codec.js';
import type { VisitReadOptions, VisitStore, VisitsAndPayments } from '../../ports.js';
import { PARTITIONS } from './items.js';

/** Partition of one visitor's visits on one site. */
export const visitorPk = (site: string, visitorId: string) => PARTITIONS.visitor.key(site, visitorId);
const { VISIT, VISIT_CHUNK, VISITOR_PAYMENTS } = PARTITIONS.visitor.items;
/** Visits sort by start time (13-digit ms), so "visits before a time" is a key range. */
export const visitSk = VISIT.key;
/**
 * A chunk of a visit's events sorts right after its VISIT item (the visit's
 * key is a prefix of it), so every key range over visits also covers their
 * chunks: `<visit sk>#<generation>#<index, 6 digits>`.
 */
export const visitChunkSk = VISIT_CHUNK.key;
/**
 * The visitor's payments marker (VISITOR_PAYMENTS, `docs/data-model.md`):
 * `latest`, the latest time (ms) of any payment whose timeline copy was
 * placed in the partition. It sorts after every visit (`V#…`), so the
 * sessionizer's newest-first Query of the visits reads it first, in the same
 * request (`visitsAndPayments`). Written by `PaymentTimeline`.
 */
export const PAYMENTS_MARK_SK = VISITOR_PAYMENTS.key();

/**
 * Most JSON bytes of event rows in one chunk (form-1 rows before compression,
 * `compactRow`; a chunk holds at least one row, whatever its size). A visit's
 * events are cut greedily, in time order, into chunks of at most this size;
 * every chunk but the last is a VISIT_CHUNK item, written once, and the last
 * stays in the VISIT item, which a batch that only appends events rewrites
 * with the new events. Compressed (`visit-codec.ts`), 2 KB of rows keep the
 * VISIT item of a long visit at 1–2 WRU per rewrite, and a chunk (~30 events
 * with UUID ids) at 1–2 WRU.
 */
export const CHUNK_BYTES = 2048;

/**
 * Cuts a visit's events into chunks of form-1 JSON rows of at most
 * `CHUNK_BYTES`: a function of the visit's events, start and id only, so a
 * visit that gained events at its end keeps every closed chunk as it was.
 */
export function chunkRows(events: readonly VisitEvent[], start: number, visitId: string): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  let bytes = 2;
  for (const e of events) {
    const row = compactRow(e, start, visitId);
    const size = Buffer.byteLength(row) + 1;
    if (current.length > 0 && bytes + size > CHUNK_BYTES) {
      chunks.push(current);
      current = [];
      bytes = 2;
    }
    current.push(row);
    bytes += size;
  }
  chunks.push(current);
  return chunks;
}

/** How a stored visit is laid out: its chunk generation and the number of VISIT_CHUNK items. */
interface Layout {
  generation: number;
  chunks: number;
}

/**
 * A visit as items (`docs/data-model.md`, VISIT and VISIT_CHUNK), form 1
 * (`visit-codec.ts`): the VISIT item (keys, `type`, `end`, the chunk
 * generation `g` and count `c` when not 0, and `z`: attributes and the last
 * chunk of events) and one VISIT_CHUNK item (`z`: its events) per other
 * chunk, under chunk generation `generation`. Used by the store and by bulk
 * loads.
 */
export function visitItems(
  v: Visit,
  generation = 0,
): { head: Record<string, unknown>; chunks: Array<Record<string, unknown>> } {
  const all = chunkRows(v.events, v.start, v.id);
  const tail = all[all.length - 1] ?? [];
  const pk = visitorPk(v.site, v.visitor_id);
  const chunks = all.slice(0, -1).map((rows, k) => ({
    [PK]: pk,
    [SK]: visitChunkSk(v.start, v.id, generation, k),
    type: 'VISIT_CHUNK',
    z: encodeChunk(rows),
  }));
  // The landing page is the first event's path: stated only when the first event is in a chunk (or, never from buildVisits, differs).
  const landing = chunks.length > 0 || v.events[0]?.path !== v.landing_page ? v.landing_page : null;
  const head: Record<string, unknown> = {
    [PK]: pk,
    [SK]: visitSk(v.start, v.id),
    type: 'VISIT',
    end: v.end,
    z: encodeHead(v.attrs, tail, landing),
  };
  if (generation !== 0) head.g = generation;
  if (chunks.length !== 0) head.c = chunks.length;
  return { head, chunks };
}

/** Every item of a visit, VISIT item first (bulk loads). */
export const visitToItems = (v: Visit): Array<Record<string, unknown>> => {
  const { head, chunks } = visitItems(v);
  return [head, ...chunks];
};

/** The stored layout of visits read by a store, so that a rewrite knows which chunks exist. */
const layouts = new WeakMap<Visit, Layout>();

/**
 * Visits of `visitorId` on `site` (the strings the partition key was built
 * from) from VISIT and VISIT_CHUNK items of its partition, in any order. A visit takes its VISIT item's chunk generation and count; a
 * chunk that is missing (a visit being deleted after a merge: its chunks go
 * first) leaves its events out, which is harmless because a visit is only
 * deleted once the visit that took its events is written.
 */
export function assembleVisits(
  items: ReadonlyArray<Record<string, unknown>>,
  site: string,
  visitorId: string,
): Visit[] {
  const chunks = new Map<string, Record<string, unknown>>();
  for (const item of items) if (item.type === 'VISIT_CHUNK') chunks.set(String(item[SK]), item);
  const visits: Visit[] = [];
  const heads = items.filter((i) => i.type === 'VISIT').sort((a, b) => (String(a[SK]) < String(b[SK]) ? -1 : 1));
  for (const item of heads) {
    const sk = String(item[SK]);
    const head = decodeHead(item, sk);
    const layout: Layout = { generation: Number(item.g ?? 0), chunks: Number(item.c ?? 0) };
    const events: VisitEvent[] = [];
    for (let k = 0; k < layout.chunks; k++) {
      const chunk = chunks.get(visitChunkSk(head.start, head.id, layout.generation, k));
      if (chunk !== undefined) events.push(...decodeChunk(chunk, head.start, head.id));
    }
    events.push(...head.events);
    if (events[0]) events[0] = { ...events[0], attrs: head.attrs };
    const visit: Visit = {
      id: head.id,
      site,
      visitor_id: visitorId,
      start: head.start,
      end: head.end,
      landing_page: head.landingPage ?? events[0]?.path ?? '',
      attrs: head.attrs,
      events,
    };
    layouts.set(visit, layout);
    visits.push(visit);
  }
  return visits;
}

/**
 * The events stored in one VISIT or VISIT_CHUNK item, read
 * without its visit's other items (a table scan that accounts for every
 * event, `bench/load.ts`): the visit's start and id come from the item's
 * sort key. A chunk's events have no attributes.
 */
export function eventsOfItem(item: Record<string, unknown>): VisitEvent[] {
  const sk = String(item[SK]);
  if (item.type === 'VISIT') return decodeHead(item, sk).events;
  return decodeChunk(item, Number(sk.slice(2, 15)), sk.slice(16).replace(/#\d+#\d{6}$/, ''));
}

const sameIds = (a: readonly VisitEvent[], b: readonly VisitEvent[], n: number) => {
  for (let i = 0; i < n; i++) if (a[i]?.id !== b[i]?.id) return false;
  return true;
};

/** Visits in the single table: one partition per visitor, sorted by start, long visits in chunks. */
export class DynamoVisitStore implements VisitStore {
  /** Requests made, for the benchmark's request counts. */
  readonly calls = { query: 0, batchWrite: 0 };

  constructor(private readonly conn: DynamoConnection) {}

  private async query(
    input: Omit<QueryCommandInput, 'TableName'>,
    consistent = true,
  ): Promise<{ items: Array<Record<string, unknown>>; next?: Record<string, unknown> }> {
    this.calls.query++;
    const page = await this.conn.doc.send(
      new QueryCommand({ TableName: this.conn.table, ConsistentRead: consistent, ...input }),
    );
    return { items: page.Items ?? [], next: page.LastEvaluatedKey };
  }

  async visitsAround(site: string, visitorId: string, fromMs: number, toMs: number): Promise<Visit[]> {
    return (await this.around(site, visitorId, fromMs, toMs, false, true)).visits;
  }

  /**
   * `visitsAround`, and the visitor's payments marker (`PAYMENTS_MARK_SK`)
   * read by the same Query: it starts at the top of the partition instead
   * of at `toMs`. Visits starting after `toMs` are skipped; when the first
   * page holds only such visits (events imported long after newer ones were
   * sessionized), one more Query starts at `toMs`, so an import of old
   * events never reads the visitor's whole later history.
   *
   * @returns the visits, `latestPayment`: the marker's time (ms), null when the partition has none, and `later`: whether a visit starting after `toMs` was passed over
   */
  async visitsAndPayments(
    site: string,
    visitorId: string,
    fromMs: number,
    toMs: number,
    options: VisitReadOptions = {},
  ): Promise<VisitsAndPayments> {
    return this.around(site, visitorId, fromMs, toMs, true, options.consistent ?? true);
  }

  private async around(
    site: string,
    visitorId: string,
    fromMs: number,
    toMs: number,
    withMark: boolean,
    consistent: boolean,
  ): Promise<VisitsAndPayments> {
    const items: Array<Record<string, unknown>> = [];
    const upTo = VISIT.range.upTo(toMs);
    let latestPayment: number | null = null;
    let later = false;
    let start: Record<string, unknown> | undefined;
    let top = withMark;
    let first = true;
    // Newest first from `toMs` back (or from the marker, above every visit);
    // visits do not overlap, so the first one ending before `fromMs` means
    // every older one does too. A visit's chunks come before its VISIT item
    // in this order. The first page is small: most batches need the
    // visitor's latest visit only (and the marker).
    for (;;) {
      const { items: got, next } = await this.query(
        {
          // The partition also holds the visitor's payments (P#…): stay within the visits (and the marker).
          KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
          ExpressionAttributeValues: {
            ':pk': visitorPk(site, visitorId),
            ':from': VISIT.range.first(),
            ':to': top ? PAYMENTS_MARK_SK : upTo,
          },
          ScanIndexForward: false,
          Limit: first ? (top ? 5 : 4) : 100,
          ExclusiveStartKey: start,
        },
        consistent,
      );
      for (const item of got) {
        const sk = String(item[SK]);
        if (sk === PAYMENTS_MARK_SK) latestPayment = Number(item.latest);
        else if (sk > upTo) later = true;
        else if (item.type === 'VISIT' && Number(item.end) < fromMs)
          return { visits: assembleVisits(items, site, visitorId), latestPayment, later };
        else items.push(item);
      }
      start = next;
      if (!start) return { visits: assembleVisits(items, site, visitorId), latestPayment, later };
      // Still above `toMs`: start again from it (a small first page again) rather than page through every later visit.
      first = top && String(start[SK]) > upTo;
      if (first) start = undefined;
      top = false;
    }
  }

  async firstVisit(site: string, visitorId: string): Promise<Visit | null> {
    const { items } = await this.query({
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :v)`,
      ExpressionAttributeValues: { ':pk': visitorPk(site, visitorId), ':v': VISIT.range.first() },
      Limit: 1,
    });
    const head = items[0];
    if (!head) return null;
    const all = [head];
    if (Number(head.c ?? 0) > 0) {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await this.query({
          KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :chunks)`,
          ExpressionAttributeValues: {
            ':pk': visitorPk(site, visitorId),
            ':chunks': VISIT_CHUNK.range.of(String(head[SK]), Number(head.g ?? 0)),
          },
          ExclusiveStartKey: start,
        });
        all.push(...page.items);
        start = page.next;
      } while (start);
    }
    return assembleVisits(all, site, visitorId)[0] ?? null;
  }

  /**
   * Writes `put` and deletes `remove`, in an order that keeps every visit
   * readable whole if the process dies between two requests: new chunks
   * first, then VISIT items (which name their chunk generation and count),
   * then chunks no VISIT item names any more, then the VISIT items of visits
   * merged away. A visit that only gained events at its end writes its new
   * chunks and its VISIT item; any other change writes all its chunks under
   * the next generation. Idempotent.
   */
  async writeVisits(put: readonly Visit[], remove: readonly Visit[]): Promise<void> {
    const key = (v: Visit) => `${visitorPk(v.site, v.visitor_id)}|${visitSk(v.start, v.id)}`;
    const old = new Map(remove.map((v) => [key(v), v]));
    const chunkPuts: Array<Record<string, unknown>> = [];
    const headPuts: Array<Record<string, unknown>> = [];
    const chunkDeletes: Array<Record<string, string>> = [];
    const headDeletes = new Map<string, Record<string, string>>();
    const dropChunks = (v: Visit, layout: Layout | undefined) => {
      for (let k = 0; k < (layout?.chunks ?? 0); k++)
        chunkDeletes.push({
          [PK]: visitorPk(v.site, v.visitor_id),
          [SK]: visitChunkSk(v.start, v.id, layout?.generation ?? 0, k),
        });
    };
    const written = new Set<string>();
    const laidOut: Array<[Visit, Layout]> = [];
    for (const v of put) {
      written.add(key(v));
      const before = old.get(key(v));
      const layout = before ? layouts.get(before) : undefined;
      const appended =
        before !== undefined &&
        layout !== undefined &&
        before.events.length <= v.events.length &&
        sameIds(before.events, v.events, before.events.length);
      const generation = layout === undefined ? 0 : appended ? layout.generation : layout.generation + 1;
      const { head, chunks } = visitItems(v, generation);
      // Appended: the chunks the stored visit had are unchanged (chunking is greedy in time order).
      for (const chunk of appended ? chunks.slice(layout.chunks) : chunks) chunkPuts.push(chunk);
      headPuts.push(head);
      laidOut.push([v, { generation, chunks: chunks.length }]);
      if (layout && !appended) dropChunks(v, layout);
    }
    for (const v of remove) {
      if (written.has(key(v))) continue;
      dropChunks(v, layouts.get(v));
      headDeletes.set(key(v), { [PK]: visitorPk(v.site, v.visitor_id), [SK]: visitSk(v.start, v.id) });
    }
    // New chunks before the VISIT items that name them; the rest in one list, in order.
    if (chunkPuts.length > 0)
      this.calls.batchWrite += await batchWrite(
        this.conn,
        chunkPuts.map((Item) => ({ PutRequest: { Item } })),
      );
    this.calls.batchWrite += await batchWrite(this.conn, [
      ...headPuts.map((Item) => ({ PutRequest: { Item } })),
      ...chunkDeletes.map((Key) => ({ DeleteRequest: { Key } })),
      ...[...headDeletes.values()].map((Key) => ({ DeleteRequest: { Key } })),
    ]);
    // The visits written are now stored as laid out: a caller that keeps them (`ShardVisitCache`) can rewrite them later as if read.
    for (const [v, layout] of laidOut) layouts.set(v, layout);
  }
}
