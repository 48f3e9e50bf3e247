import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { RollupDeltas } from '../lambdas/domain/rollup.js';
import type { Visit } from '../lambdas/domain/visit.js';
import type { TrackedEvent } from '../lambdas/domain/tracked-event.js';
import { changeVisits } from '../lambdas/services/sessionize.js';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { itemBytes } from '../lambdas/adapters/dynamo/rollup-reader.js';
import { foldGroup } from '../lambdas/adapters/dynamo/rollup-fold.js';
import { partSk, partType, rollupPk } from '../lambdas/adapters/dynamo/rollup-keys.js';
import { PK, SK } from '../lambdas/adapters/dynamo/table.js';
import { trafficStream } from './traffic.js';
import { buildVisits, pageviewsOf, visitEventOf } from '../lambdas/domain/visit.js';
import {
  assembleVisits,
  visitChunkSk,
  visitorPk,
  visitSk,
  visitToItems,
} from '../lambdas/adapters/dynamo/visit-store.js';

/**
 * Storage DynamoDB bills for one item: its size (attribute names plus values, as `itemBytes`
 * counts them) plus 100 bytes of per-item indexing overhead ("Every item in DynamoDB requires 100
 * bytes of storage overhead for indexing", DynamoDB Developer Guide, "DynamoDB item sizes and
 * formats", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 * Bytes.
 */
export const ITEM_STORAGE_OVERHEAD = 100;

/** Billed storage of one item in bytes: `ITEM_STORAGE_OVERHEAD` plus each attribute's name and value. */
export function storedItemBytes(item: Record<string, unknown>): number {
  let bytes = ITEM_STORAGE_OVERHEAD;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + itemBytes(value);
  return bytes;
}

/** Items and billed bytes by item type. */
export type BytesByType = Record<string, { items: number; bytes: number }>;

/** An item's type: its `type` attribute, else its partition key's prefix (`PL`, `PT`, …). */
const typeOf = (item: Record<string, unknown>): string =>
  typeof item.type === 'string' ? item.type : `${String(item[PK]).split('#')[0]}#`;

/** Adds one item to `into` under its type. */
function count(into: BytesByType, type: string, bytes: number): void {
  const entry = (into[type] ??= { items: 0, bytes: 0 });
  entry.items++;
  entry.bytes += bytes;
}

/**
 * Reads the whole table back (a paged Scan: benchmarks only; no function of the stack scans) and
 * sums each item's billed storage by item type.
 */
export async function tableBytesByType(conn: DynamoConnection): Promise<BytesByType> {
  const out: BytesByType = {};
  for await (const page of paginateScan({ client: conn.doc }, { TableName: conn.table })) {
    for (const item of page.Items ?? []) count(out, typeOf(item), storedItemBytes(item));
  }
  return out;
}

/** Visitors idle this long are done with (a visit ends after 30 minutes without events; arrivals are at most 20 minutes late). */
const IDLE_MS = 2 * 3_600_000;

/**
 * The ROLLUP items a month of traffic leaves, once compacted: `days` days of `trafficStream` at
 * `eventsPerMonth`, sessionized in memory (the visits around each visitor's events, as the
 * sessionizer reads them), every rollup delta of the period folded into the items the compactor
 * writes (`foldGroup`: dimension buckets in parts). Items and billed bytes by rollup metric (`visits`, each dimension,
 * `goal`), and the events they cover.
 */
export function rollupBytesOfPeriod(options: {
  site: string;
  timezone: string;
  eventsPerMonth: number;
  from: number;
  days: number;
  seed?: number;
}): { events: number; byMetric: BytesByType } {
  const { site, timezone } = options;
  const deltas = new RollupDeltas();
  const latest = new Map<string, { visit: Visit; seen: number }>();
  let events = 0;
  let clock = 0;
  const flush = (batch: TrackedEvent[]) => {
    const byVisitor = new Map<string, TrackedEvent[]>();
    for (const e of batch) {
      const list = byVisitor.get(e.visitor_id);
      if (list) list.push(e);
      else byVisitor.set(e.visitor_id, [e]);
      clock = Math.max(clock, e.ts);
    }
    for (const [visitor, evs] of byVisitor) {
      const before = latest.get(visitor);
      const change = changeVisits(site, visitor, before ? [before.visit] : [], evs);
      for (const v of change.before) deltas.addVisit(v, timezone, -1);
      for (const v of change.after) deltas.addVisit(v, timezone, 1);
      for (const e of evs) deltas.addActivity(site, visitor, e.ts, timezone);
      const newest = change.after.reduce<Visit | undefined>((a, v) => (a && a.start > v.start ? a : v), undefined);
      if (newest) latest.set(visitor, { visit: newest, seen: clock });
      else if (before) before.seen = clock;
    }
    for (const [visitor, { seen }] of latest) if (seen < clock - IDLE_MS) latest.delete(visitor);
    events += batch.length;
  };
  let batch: TrackedEvent[] = [];
  const to = options.from + options.days * 86_400_000;
  for (const e of trafficStream({
    site,
    from: options.from,
    to,
    eventsPerMonth: options.eventsPerMonth,
    seed: options.seed ?? 21,
  })) {
    batch.push(e);
    if (batch.length === 2_000) {
      flush(batch);
      batch = [];
    }
  }
  if (batch.length) flush(batch);
  const byMetric: BytesByType = {};
  const position = { sequence: 49650000000000000000000000000000000000000000000000000000n, part: 0 };
  for (const d of deltas.list()) {
    // As the compactor writes it: a dimension bucket in parts of at most ROLLUP_PART_BYTES of values, a `visits` bucket as its counters and its visitor set.
    const { folded } = foldGroup([], [{ shard: 'shardId-000000000000', position, delta: d }]);
    for (const [part, written] of folded.entries()) {
      if (!written) continue;
      const item = {
        [PK]: rollupPk(d.key.site, d.key.metric),
        [SK]: partSk(d.key, part),
        type: partType(d.key.metric, part),
        ...written.attributes,
        seq: written.seq,
        ver: 1,
      };
      count(byMetric, d.key.metric, storedItemBytes(item));
    }
  }
  return { events, byMetric };
}

/**
 * Form 0 of VISIT and VISIT_CHUNK items, as `visitItems` wrote them until
 * form 1 (main 86d9ba0): the summary as attributes, event rows
 * `[ts, type, path, goal, link, id]` as a JSON string `ev`, chunks of at most
 * 2,048 bytes of those rows. Items in this form stay in tables until a
 * rebuild, so every reader must keep reading them.
 */
export function form0VisitItems(v: Visit, generation = 0): Array<Record<string, unknown>> {
  const rows = v.events.map((e) => JSON.stringify([e.ts, e.type === 'goal' ? 1 : 0, e.path, e.goal, e.link, e.id]));
  const chunks: string[][] = [];
  let current: string[] = [];
  let bytes = 2;
  for (const row of rows) {
    if (current.length > 0 && bytes + Buffer.byteLength(row) + 1 > 2048) {
      chunks.push(current);
      current = [];
      bytes = 2;
    }
    current.push(row);
    bytes += Buffer.byteLength(row) + 1;
  }
  chunks.push(current);
  const pk = visitorPk(v.site, v.visitor_id);
  const closed = chunks.slice(0, -1).map((c, k) => ({
    pk,
    sk: visitChunkSk(v.start, v.id, generation, k),
    type: 'VISIT_CHUNK',
    ev: `[${c.join(',')}]`,
  }));
  const head = {
    pk,
    sk: visitSk(v.start, v.id),
    type: 'VISIT',
    id: v.id,
    site: v.site,
    visitor_id: v.visitor_id,
    start: v.start,
    end: v.end,
    landing_page: v.landing_page,
    pageviews: pageviewsOf(v),
    attrs: v.attrs,
    events: v.events.length,
    g: generation,
    c: closed.length,
    ev: `[${(chunks[chunks.length - 1] ?? []).join(',')}]`,
  };
  return [head, ...closed];
}

/**
 * VISIT items of the two forms compared on the same visits (`lambdas/adapters/dynamo/visit-codec.ts`):
 * `hours` of `trafficStream` at `eventsPerMonth` with production's ids (`ids`: event and visitor
 * ids as `bench/sessionize.ts` makes them), each visitor's events grouped into visits whole.
 * Billed bytes per event of each form (with the 100-byte item overhead), and the CPU time of form
 * 1: building a visit's items (compact rows, DEFLATE) and reading them back (`assembleVisits`),
 * µs per visit on one core, best of three passes.
 */
export function visitFormsCompared(options: {
  eventsPerMonth: number;
  hours: number;
  ids: { event: (id: string) => string; visitorPrefix: string };
}): { events: number; visits: number; form0: number; form1: number; writeUs: number; readUs: number } {
  const from = Date.UTC(2026, 10, 17, 6);
  const byVisitor = new Map<string, ReturnType<typeof visitEventOf>[]>();
  let events = 0;
  for (const e of trafficStream({
    site: 'shop.example',
    from,
    to: from + options.hours * 3_600_000,
    eventsPerMonth: options.eventsPerMonth,
    seed: 15,
    visitorPrefix: options.ids.visitorPrefix,
  })) {
    const list = byVisitor.get(e.visitor_id) ?? [];
    list.push(visitEventOf({ ...e, event_id: options.ids.event(e.event_id) }));
    byVisitor.set(e.visitor_id, list);
    events++;
  }
  const visits = [...byVisitor].flatMap(([visitor, list]) => buildVisits('shop.example', visitor, list));
  const bytes = (items: Array<Record<string, unknown>>) => items.reduce((n, item) => n + storedItemBytes(item), 0);
  const form0 = visits.reduce((n, v) => n + bytes(form0VisitItems(v)), 0);
  let form1 = 0;
  let writeUs = Infinity;
  let readUs = Infinity;
  for (let pass = 0; pass < 3; pass++) {
    const t0 = process.hrtime.bigint();
    const written = visits.map(visitToItems);
    const t1 = process.hrtime.bigint();
    for (const [i, items] of written.entries()) assembleVisits(items, 'shop.example', (visits[i] as Visit).visitor_id);
    const t2 = process.hrtime.bigint();
    writeUs = Math.min(writeUs, Number(t1 - t0) / 1e3 / visits.length);
    readUs = Math.min(readUs, Number(t2 - t1) / 1e3 / visits.length);
    form1 = written.reduce((n, items) => n + bytes(items), 0);
  }
  return { events, visits: visits.length, form0: form0 / events, form1: form1 / events, writeUs, readUs };
}
