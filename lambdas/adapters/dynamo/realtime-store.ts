import { PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { recordExpiry, ttlOf } from './expiry.js';
import { REALTIME_TTL_MS, minuteOf, type RealtimeSlice, type RealtimeVisitor } from '../../domain/realtime.js';
import type { StreamCheckpoint } from '../../ports.js';
import { PARTITIONS } from './items.js';
import { dict, parseDict, type Dict } from '../../domain/dict.js';

/** Partition of a site's realtime items; sort keys start with the UTC minute. */
export const realtimePk = (site: string) => PARTITIONS.realtime.key(site);

const { REALTIME } = PARTITIONS.realtime.items;
/** A realtime item's visitors are split into parts of at most this many bytes of JSON, well under DynamoDB's 400 KB. */
const PART_BYTES = 100_000;

function parts(visitors: Dict<RealtimeVisitor>): Array<Dict<RealtimeVisitor>> {
  const out: Array<Dict<RealtimeVisitor>> = [];
  let part = dict<RealtimeVisitor>();
  let bytes = 0;
  for (const [id, entry] of Object.entries(visitors)) {
    const size = Buffer.byteLength(JSON.stringify([id, entry]));
    if (bytes + size > PART_BYTES && bytes > 0) {
      out.push(part);
      part = dict();
      bytes = 0;
    }
    part[id] = entry;
    bytes += size;
  }
  if (bytes > 0) out.push(part);
  return out;
}

/**
 * Realtime items (`docs/data-model.md`, item REALTIME): per batch, one Put
 * per site-minute (and part) with sort key `<minute>#<shard>#<sequence>#<part>`,
 * so a retried batch overwrites the same items with the same content. They
 * carry the TTL attribute; with `localExpiry` (dynalite has no TTL) each also
 * gets an entry for the local sweeper, written through that connection: the twin's own, since in
 * AWS the TTL needs no write and the function's role has no grant for it.
 */
export class DynamoRealtimeStore {
  constructor(
    private readonly conn: DynamoConnection,
    private readonly options: { localExpiry?: DynamoConnection } = {},
  ) {}

  async write(slices: readonly RealtimeSlice[], checkpoint: StreamCheckpoint): Promise<void> {
    const writes = slices.flatMap((slice) =>
      parts(slice.visitors).map((v, i) => ({
        pk: realtimePk(slice.site),
        sk: REALTIME.key(slice.minute, checkpoint.shard, checkpoint.sequence, i),
        v,
        expires: Date.parse(`${slice.minute}:00Z`) + REALTIME_TTL_MS,
      })),
    );
    await Promise.all(
      writes.map(async (w) => {
        await this.conn.doc.send(
          new PutCommand({
            TableName: this.conn.table,
            Item: { [PK]: w.pk, [SK]: w.sk, type: 'REALTIME', v: JSON.stringify(w.v), ...ttlOf(w.expires) },
          }),
        );
        if (this.options.localExpiry) await recordExpiry(this.options.localExpiry, w.pk, w.sk, w.expires);
      }),
    );
  }

  /** The slices of a site from the minute of `sinceMs` on (one Query, paged at 1 MB). */
  async read(site: string, sinceMs: number): Promise<RealtimeSlice[]> {
    const out: RealtimeSlice[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} >= :from`,
      ExpressionAttributeValues: { ':pk': realtimePk(site), ':from': REALTIME.range.from(minuteOf(sinceMs)) },
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        out.push({
          site,
          minute: String(item[SK]).slice(0, 16),
          visitors: parseDict<RealtimeVisitor>(String(item.v ?? '{}')),
        });
      }
    }
    return out;
  }
}
