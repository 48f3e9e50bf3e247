import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { emptySketch } from '../../../domain/visitor-sketch.js';
import {
  UNATTRIBUTED_KEY,
  type GroupRows,
  type PeriodCustomers,
  type ValueCounters,
} from '../../../domain/payments/contribution.js';
import type { PaymentDimension } from '../../../domain/rollup.js';
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

/**
 * Most bytes of one PAYMENT_DIMENSION item's `v` JSON. A bucket's values are
 * free-form (pages, referrers, campaigns: whatever the tracker was sent), so
 * a bucket of a period can hold any number of them: its counters are cut
 * into parts of at most this many bytes (`splitDimensionCounters`), one item
 * each. One value's entry is at most about 20 KB (a 2,048-character path
 * escaped as JSON, ≤ 12 KB, plus ≤ `EXACT_LIMIT` payer ids of 14 bytes), so
 * every part holds at least one value and stays within the bound.
 */
export const DIMENSION_PART_BYTES = 32 * 1024;

/**
 * A bucket's counters cut, in value order, into parts whose JSON is at most
 * `maxBytes` each (a part always holds at least one value). Each value is in
 * exactly one part; the parts' union is `values`. Always at least one part
 * (an empty bucket is one empty part).
 */
export function splitDimensionCounters(
  values: Readonly<Record<string, ValueCounters>>,
  maxBytes = DIMENSION_PART_BYTES,
): Array<Record<string, ValueCounters>> {
  const parts: Array<Record<string, ValueCounters>> = [];
  let part = dict<ValueCounters>();
  let bytes = 2;
  let size = 0;
  for (const [value, counters] of Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    // "key":[…], — the entry as JSON.stringify writes it.
    const entry = Buffer.byteLength(JSON.stringify(value)) + Buffer.byteLength(JSON.stringify(counters)) + 2;
    if (size > 0 && bytes + entry > maxBytes) {
      parts.push(part);
      part = dict();
      bytes = 2;
      size = 0;
    }
    part[value] = counters;
    bytes += entry;
    size++;
  }
  parts.push(part);
  return parts;
}

/**
 * A group as one item's `v`: `<dimension>#<value>` keys (no dimension name
 * holds a `#`) and the Unattributed row under `UNATTRIBUTED_KEY`. Each
 * dimension keeps the payer exactness it was packed with.
 */
export function flattenGroup(g: GroupRows): Record<string, ValueCounters> {
  const out = dict(g.unattributed);
  for (const [d, values] of Object.entries(g.dims))
    for (const [value, counters] of Object.entries(values ?? {})) out[`${d}#${value}`] = counters;
  return out;
}

/** The inverse of `flattenGroup` (parts merged first). */
export function unflattenGroup(flat: Readonly<Record<string, ValueCounters>>): GroupRows {
  const out: GroupRows = { dims: {}, unattributed: dict() };
  for (const [key, counters] of Object.entries(flat)) {
    if (key === UNATTRIBUTED_KEY) {
      out.unattributed[key] = counters;
      continue;
    }
    const i = key.indexOf('#');
    const d = key.slice(0, i) as PaymentDimension;
    (out.dims[d] ??= dict())[key.slice(i + 1)] = counters;
  }
  return out;
}
