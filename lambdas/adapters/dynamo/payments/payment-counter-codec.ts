import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { emptySketch } from '../../../domain/visitor-sketch.js';
import type { PeriodCustomers, ValueCounters } from '../../../domain/payments/contribution.js';
import { dict, parseDict } from '../../../domain/dict.js';
import { packSketch, unpackSketch } from '../sketch-codec.js';

/**
 * The attributes of a PAYMENT_CUSTOMERS item (`docs/data-model.md`): `cz`,
 * the payers (`packSketch`), and either `tdz`, the deflated JSON of each
 * payer's touch days while exact, or `tz`, the sketch of payers with a touch.
 */
export function packCustomers(c: PeriodCustomers): Record<string, Buffer> {
  return {
    cz: packSketch(c.customers),
    ...(c.touched.kind === 'exact'
      ? { tdz: deflateRawSync(JSON.stringify(c.touched.days)) }
      : { tz: packSketch(c.touched.sketch) }),
  };
}

/** A PAYMENT_CUSTOMERS item's payers (`packCustomers`); an item without `cz` holds none. */
export function unpackCustomers(item: Record<string, unknown>): PeriodCustomers {
  const customers = item.cz instanceof Uint8Array ? unpackSketch(item.cz) : emptySketch();
  if (item.tz instanceof Uint8Array) return { customers, touched: { kind: 'sketch', sketch: unpackSketch(item.tz) } };
  const days =
    item.tdz instanceof Uint8Array ? parseDict<string[]>(inflateRawSync(item.tdz).toString('utf8')) : dict<string[]>();
  return { customers, touched: { kind: 'exact', days } };
}

/**
 * Most bytes `packDimension` adds to its JSON: raw deflate keeps input it
 * cannot shrink in stored blocks of about 16 KiB with a few bytes of header
 * each (32 KiB of random bytes: +10 bytes), so a part cut at
 * `DIMENSION_PART_BYTES` of JSON packs to at most that plus these.
 */
export const PACKED_OVERHEAD_BYTES = 16;

/**
 * A PAYMENT_DIMENSION item's counters as stored (`docs/data-model.md`): `vz`,
 * the deflated JSON of `[payments, net cents, payers]` per value. Payers are 11-character
 * base64url hashes (`customerHash`, 66 bits: not whole bytes, so kept as
 * text), which deflate codes at about 6 bits a character, and a payer
 * credited with several values of the item repeats within deflate's 32 KiB
 * window (a group lists each payer once per dimension): a day's group and its
 * page buckets pack to a fraction of their JSON, measured on the bench site
 * (`docs/data-model.md`, "Distinct payers"). Parts are cut on the JSON's
 * size before packing (`splitDimensionCounters`), so the item bound stays
 * what it was (`PACKED_OVERHEAD_BYTES`).
 */
export function packDimension(values: Readonly<Record<string, ValueCounters>>): { vz: Buffer } {
  return { vz: deflateRawSync(JSON.stringify(values)) };
}

/** The counters of a PAYMENT_DIMENSION item (`packDimension`); an item without `vz` holds none. */
export function unpackDimension(item: Record<string, unknown>): Record<string, ValueCounters> {
  return item.vz instanceof Uint8Array ? parseDict<ValueCounters>(inflateRawSync(item.vz).toString('utf8')) : dict();
}
