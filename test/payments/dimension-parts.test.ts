import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeleteCommand, PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { PaymentListStore } from '../../lambdas/adapters/dynamo/payments/payment-list-store.js';
import { listKeys } from '../../lambdas/adapters/dynamo/payments/payment-list-positions.js';
import { PaymentListRecompute } from '../../lambdas/adapters/dynamo/payments/payment-list-recompute.js';
import { itemBytes } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import {
  DIMENSION_PART_BYTES,
  PACKED_OVERHEAD_BYTES,
  packDimension,
  splitDimensionCounters,
  unpackDimension,
} from '../../lambdas/adapters/dynamo/payments/payment-counter-codec.js';
import { valueTotals, type Contribution, type ValueCounters } from '../../lambdas/domain/payments/contribution.js';
import { PAYMENT_DIMENSIONS, type PaymentDimension } from '../../lambdas/domain/rollup.js';
import { ALL_SLOTS } from '../../lambdas/adapters/dynamo/payments/dimension-slots.js';
import { memoryTable, scanAll } from '../support/dynamo.js';

const SITE = 'parts.test';
const DAYS = ['2026-05-03', '2026-05-04'];

/** A payment credited to a visit whose landing page (and page) is its own, 90 characters long: every value distinct. */
function contribution(i: number, day = DAYS[i % DAYS.length] ?? '2026-05-03'): Contribution {
  const page = `/landing/${String(i).padStart(6, '0')}/${'x'.repeat(74)}`;
  const dims = Object.fromEntries(PAYMENT_DIMENSIONS.map((d) => [d, []])) as unknown as Record<
    PaymentDimension,
    string[]
  >;
  dims.landing_page = [page];
  dims.page = [page, '/pricing'];
  dims.channel = [i % 2 ? 'Search' : 'Direct'];
  const ts = Date.parse(`${day}T12:00:00Z`) + i;
  return {
    key: `stripe:pi_${i}`,
    rev: 1,
    ts,
    day,
    hour: `${day}T12`,
    cents: 1000 + i,
    customer: `c${String(i % 1500).padStart(10, '0')}`,
    touch_day: day,
    failed: false,
    refunded: false,
    dims,
  };
}

/** Payments, cents and payers per value of a dimension over a month, computed directly. */
function expected(
  contributions: readonly Contribution[],
  d: PaymentDimension,
): Record<string, [number, number, number]> {
  const out: Record<string, [number, number, Set<string>]> = {};
  for (const c of contributions)
    for (const v of c.dims?.[d] ?? []) {
      const row = (out[v] ??= [0, 0, new Set()]);
      row[0]++;
      row[1] += c.cents;
      row[2].add(c.customer);
    }
  return Object.fromEntries(Object.entries(out).map(([v, [n, cents, payers]]) => [v, [n, cents, payers.size]]));
}

async function read(
  list: PaymentListStore,
  d: PaymentDimension,
  g: 'D' | 'M',
  from: string,
  to: string,
): Promise<Record<string, [number, number, number]>> {
  const items = await list.dimension(SITE, d, g, from, to, true);
  const seen = new Set<string>();
  for (const item of items)
    for (const v of Object.keys(item.values)) {
      // Each value in exactly one part of its bucket and period.
      expect(seen.has(`${item.period}|${v}`), v).toBe(false);
      seen.add(`${item.period}|${v}`);
    }
  return Object.fromEntries(
    [...valueTotals(items.map((i) => i.values))].map(([v, t]) => [v, [t.payments, t.cents, t.payers]]),
  );
}

/** The table's PAYMENT_DIMENSION items as read, binary attributes as bytes (`scanAll` gives them in base64). */
async function dimensionItems(conn: DynamoConnection): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const page of paginateScan({ client: conn.doc }, { TableName: conn.table }))
    out.push(...(page.Items ?? []).filter((i) => i.type === 'PAYMENT_DIMENSION'));
  return out;
}

describe('PAYMENT_DIMENSION parts: a bucket of any number of free-form values stays within its item bound', () => {
  it('cuts counters into parts of at most the bound, each value in one part, in value order', () => {
    const values: Record<string, ValueCounters> = {};
    for (let i = 0; i < 5000; i++)
      values[`/p/${i}/${'é'.repeat(i % 50)}`] = [i, i * 100, i % 3 ? i : ['aaaaaaaaaaa', 'bbbbbbbbbbb']];
    const parts = splitDimensionCounters(values, 4096);
    expect(parts.length).toBeGreaterThan(10);
    for (const p of parts) expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThanOrEqual(4096);
    expect(Object.assign({}, ...parts)).toEqual(values);
    expect(parts.flatMap((p) => Object.keys(p))).toEqual(Object.keys(values).sort());
    expect(splitDimensionCounters({})).toEqual([{}]);
    // A value larger than the bound is a part of its own.
    expect(splitDimensionCounters({ a: [1, 1, 1], ['b'.repeat(100)]: [1, 1, 1], c: [1, 1, 1] }, 50)).toHaveLength(3);
  });

  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let list: PaymentListStore;
  const loaded = Array.from({ length: 4000 }, (_, i) => contribution(i));

  beforeAll(async () => {
    ({ conn, close } = await memoryTable([{ domain: SITE, timezone: 'UTC' }], { maxAttempts: 3 }));
    list = new PaymentListStore(conn);
    await list.bulkLoad(SITE, loaded);
  }, 120_000);
  afterAll(async () => close());

  it('loads 4,000 payments of distinct 90-character landing pages: every item within the bound, every value counted once', async () => {
    const items = (await scanAll(conn)).filter((i) => i.type === 'PAYMENT_DIMENSION');
    const landing = items.filter((i) => String(i.pk).endsWith('#landing_page'));
    // 2,000 values of ~120 bytes a day in 4 buckets: several parts each (a single item would be ~60 KB, the month's ~120 KB).
    expect(landing.length).toBeGreaterThanOrEqual(2 * 4 * 2 + 4 * 4);
    for (const item of items)
      expect(itemBytes(item), `${item.pk} ${item.sk}`).toBeLessThanOrEqual(DIMENSION_PART_BYTES + 1024);
    for (const d of ['landing_page', 'page', 'channel'] as const) {
      expect(await read(list, d, 'M', '2026-05', '2026-05')).toEqual(expected(loaded, d));
      expect(await read(list, d, 'D', DAYS[0] ?? '', DAYS[1] ?? '')).toEqual(expected(loaded, d));
    }
  });

  it('writes `vz` only (`packDimension`): each part ≤ DIMENSION_PART_BYTES of JSON, packed within PACKED_OVERHEAD_BYTES more, as read back', async () => {
    const items = await dimensionItems(conn);
    expect(items.filter((i) => String(i.sk).split('#').length === 5).length).toBeGreaterThan(10);
    let [json, packed] = [0, 0];
    for (const item of items) {
      const at = `${String(item.pk)} ${String(item.sk)}`;
      expect(item.v, at).toBeUndefined();
      expect(item.vz, at).toBeInstanceOf(Uint8Array);
      const raw = Buffer.byteLength(JSON.stringify(unpackDimension(item)));
      expect(raw, at).toBeLessThanOrEqual(DIMENSION_PART_BYTES);
      expect((item.vz as Uint8Array).length, at).toBeLessThanOrEqual(raw + PACKED_OVERHEAD_BYTES);
      // Keys (≤ ~100 bytes), type, src, p, g, i.
      expect(itemBytes(item), at).toBeLessThanOrEqual(DIMENSION_PART_BYTES + PACKED_OVERHEAD_BYTES + 256);
      json += raw;
      packed += (item.vz as Uint8Array).length;
    }
    expect(packed).toBeLessThan(json / 2);
  });

  it('a recompute that needs fewer parts deletes the old ones; a crash between part and bucket writes leaves nothing a reader counts', async () => {
    // Half the payments of the first day leave (refund-free removal, as a payment moving away does).
    const gone = loaded.filter((c, i) => c.day === DAYS[0] && i % 4 === 0);
    for (const c of gone)
      for (const k of listKeys(SITE, c))
        await conn.doc.send(new DeleteCommand({ TableName: conn.table, Key: { pk: k.pk, sk: k.sk } }));
    const kept = loaded.filter((c) => !gone.includes(c));
    // A crash after a recompute wrote its parts but not its bucket item: an orphan part no bucket item names.
    const orphan = {
      pk: `PD#${SITE}#landing_page`,
      sk: `D#${DAYS[0]}#0#0000000000#001`,
      type: 'PAYMENT_DIMENSION',
      ...packDimension({ '/ghost': [5, 500, 1] }),
      src: 0,
    };
    await conn.doc.send(new PutCommand({ TableName: conn.table, Item: orphan }));
    expect(await read(list, 'landing_page', 'D', DAYS[0] ?? '', DAYS[0] ?? '')).not.toHaveProperty('/ghost');
    const recompute = new PaymentListRecompute(conn);
    await recompute.recomputeDay(SITE, DAYS[0] ?? '', new Set(ALL_SLOTS));
    await recompute.recomputeMonth(SITE, '2026-05', new Set(ALL_SLOTS));
    const items = (await scanAll(conn)).filter((i) => i.type === 'PAYMENT_DIMENSION');
    expect(items.some((i) => i.sk === orphan.sk)).toBe(false);
    // Every part left is named by its bucket item.
    const bases = new Map(items.filter((i) => String(i.sk).split('#').length === 3).map((i) => [`${i.pk}|${i.sk}`, i]));
    for (const part of items.filter((i) => String(i.sk).split('#').length === 5)) {
      const [g, period, bucket, src] = String(part.sk).split('#');
      expect(Number(bases.get(`${part.pk}|${g}#${period}#${bucket}`)?.src), String(part.sk)).toBe(Number(src));
    }
    for (const d of ['landing_page', 'page'] as const) {
      expect(await read(list, d, 'M', '2026-05', '2026-05')).toEqual(expected(kept, d));
      expect(await read(list, d, 'D', DAYS[0] ?? '', DAYS[1] ?? '')).toEqual(expected(kept, d));
    }
  });
});
