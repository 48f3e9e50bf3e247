import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { deserializeSketch, serializeSketch, type VisitorSketch } from '../../domain/visitor-sketch.js';

/**
 * Stored form of the distinct-count sets (visitors of a `visits` rollup,
 * payers of a PAYMENT_CUSTOMERS item): deflated binary, since DynamoDB bills
 * reads and writes by stored bytes and reports read a set per period.
 * HyperLogLog registers of a period with a few thousand members are mostly
 * zeros and small ranks: 2^14 registers deflate to 1.5–7 KB from 1,000 to
 * 1M members (measured), not 16 KB; 1,000 hashed ids to ~10 KB, not 19 KB.
 * Deflate never grows its input by more than a few bytes per 16 KB block,
 * so a packed set stays within the raw set's bound. The payment counters
 * are packed the same way (`payments/payment-counter-codec.ts`).
 */

/** First byte of a packed set before deflating: what the rest is. */
const EXACT = 0;
const REGISTERS = 1;

/** A set as one deflated binary attribute: a tag byte, then the JSON of its sorted ids or its registers. */
export function packSketch(sketch: VisitorSketch): Buffer {
  const stored = serializeSketch(sketch);
  const body =
    'ids' in stored
      ? Buffer.concat([Buffer.of(EXACT), Buffer.from(JSON.stringify(stored.ids))])
      : Buffer.concat([Buffer.of(REGISTERS), stored.hll]);
  return deflateRawSync(body);
}

/** The set `packSketch` packed. @throws Error when the bytes are not a packed set */
export function unpackSketch(packed: Uint8Array): VisitorSketch {
  const body = inflateRawSync(packed);
  if (body[0] === REGISTERS) return deserializeSketch({ hll: body.subarray(1) });
  if (body[0] === EXACT) return deserializeSketch({ ids: JSON.parse(body.subarray(1).toString('utf8')) as string[] });
  throw new Error(`not a packed set (tag ${body[0]})`);
}
