import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEvent } from '../../lambdas/adapters/stream-record.js';
import { LocalArchiveDelivery, LocalArchiveDeliveryPoller, deaggregateJson } from '../../local/archive-delivery.js';
import { createArchiveConsumer } from '../../local/archive.js';
import { runSql } from '../../local/sql.js';
import { DATASET } from './dataset.js';

const texts = (out: Buffer[] | string) => (typeof out === 'string' ? out : out.map((b) => b.toString()));

describe("deaggregateJson (Firehose's JSON multi-record deaggregation)", () => {
  it('splits objects on one line or newline-delimited, braces and quotes inside strings included', () => {
    expect(texts(deaggregateJson(Buffer.from('{"a":1}{"a":2}')))).toEqual(['{"a":1}', '{"a":2}']);
    expect(texts(deaggregateJson(Buffer.from('{"a":1}\n{"a":2}\n')))).toEqual(['{"a":1}', '{"a":2}']);
    const tricky = '{"p":"/}{\\"x","q":[{"r":"]"}]}';
    expect(texts(deaggregateJson(Buffer.from(`${tricky}\r\n ${tricky}`)))).toEqual([tricky, tricky]);
  });

  it('refuses what Firehose does not deaggregate: an array, a bare value, a cut-off object, more than 500 objects', () => {
    expect(deaggregateJson(Buffer.from('[{"a":1},{"a":2}]'))).toMatch(/not JSON objects/);
    expect(deaggregateJson(Buffer.from('{"a":1} 7'))).toMatch(/not JSON objects/);
    expect(deaggregateJson(Buffer.from('{"a":"}'))).toMatch(/cut off/);
    expect(deaggregateJson(Buffer.from('{}\n'.repeat(501)))).toMatch(/501 JSON objects/);
    expect(deaggregateJson(Buffer.from('{}\n'.repeat(500)))).toHaveLength(500);
  });

  it('gives back every object of any JSON-lines record, in order (property)', () => {
    const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
    console.log(`deaggregateJson: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { minLength: 1, maxLength: 50 }),
        fc.constantFrom('', '\n'),
        (objects, separator) => {
          const lines = objects.map((o) => JSON.stringify(o));
          const out = deaggregateJson(Buffer.from(lines.join(separator) + separator));
          expect(typeof out === 'string' ? out : out.map((b) => JSON.parse(b.toString()))).toEqual(
            lines.map((l) => JSON.parse(l)),
          );
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});

describe('the local archive delivery → Parquet', () => {
  let dir = '';
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('archives forwarded events once, even when the same object is forwarded again before or after its conversion', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ff-archive-delivery-'));
    const deliveryDir = join(dir, 'delivery');
    const archiveDir = join(dir, 'archive');
    const delivery = new LocalArchiveDelivery(deliveryDir);
    const consumer = createArchiveConsumer(archiveDir);
    const poller = new LocalArchiveDeliveryPoller(deliveryDir, (records, name) => consumer(records, name));
    const lines = DATASET.map(encodeEvent);
    try {
      await delivery.put(lines);
      await delivery.put(lines); // a retried forward before the conversion: the same call, the same file
      expect(await readdir(deliveryDir)).toHaveLength(1);
      expect(await poller.drain()).toBe(DATASET.length);
      await delivery.put(lines); // and after it: the same Parquet names again
      expect(await poller.drain()).toBe(DATASET.length);
      const count = await runSql(archiveDir, 'SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM events');
      expect(count.rows).toEqual([[DATASET.length, DATASET.length]]);
      expect(await poller.pending()).toEqual([]);
    } finally {
      await consumer.close();
    }
  });

  it('packs 1,200 events into records of ≤ 500 and refuses a call beyond PutRecordBatch limits', async () => {
    const deliveryDir = join(dir, 'packed');
    const delivery = new LocalArchiveDelivery(deliveryDir);
    const lines = Array.from({ length: 1_200 }, (_, i) => Buffer.from(JSON.stringify({ i })));
    await delivery.put(lines);
    const poller = new LocalArchiveDeliveryPoller(deliveryDir, async () => null);
    const [file] = await poller.pending();
    expect((await poller.read(file!)).map((r) => JSON.parse(r.data.toString()).i)).toEqual(lines.map((_, i) => i));
    await expect(delivery.putRecordBatch(Array.from({ length: 501 }, () => Buffer.from('{}')))).rejects.toThrow(
      /ValidationException/,
    );
    await expect(delivery.putRecordBatch([Buffer.alloc(1000 * 1024 + 1, 0x20)])).rejects.toThrow(/ValidationException/);
  });
});
