import * as z from 'zod';
import { InvalidEventError } from './errors.js';

/** Spec §4.3/§8: items beyond the 50th in an array are ignored. */
export const MAX_EVENTS_PER_REQUEST = 50;
/** Bodies above this many bytes are rejected with 400 before parsing (our choice, `docs/api.md`). */
export const MAX_BODY_BYTES = 64 * 1024;
/** Deepest JSON nesting we accept; a valid body needs 2 (array of objects). */
const MAX_JSON_DEPTH = 8;

/**
 * One inbound event (spec §2.9) with a limit on every field. A field over its
 * limit makes the request a 400; values the spec tells us to drop silently
 * (unknown `n`, goal without `g`, invalid `v`) pass the schema and are handled
 * by the ingestion rules.
 */
export const inboundEventSchema = z.object({
  n: z.string().max(32),
  u: z.string().max(2048).refine((u) => URL.canParse(u) && /^https?:/i.test(u), 'must be an http(s) URL'),
  s: z.string().min(1).max(253),
  r: z.string().max(2048).nullish(),
  v: z.string().max(256).nullish(),
  w: z.number().int().min(0).max(100_000).nullish(),
  g: z.string().max(1024).nullish(),
  l: z.string().max(2048).nullish(),
});

export type InboundEvent = z.infer<typeof inboundEventSchema>;

function jsonDepth(value: unknown, depth = 0): number {
  if (depth > MAX_JSON_DEPTH || value === null || typeof value !== 'object') return depth;
  let max = depth;
  for (const child of Object.values(value)) {
    max = Math.max(max, jsonDepth(child, depth + 1));
    if (max > MAX_JSON_DEPTH) break;
  }
  return max;
}

/**
 * Parses a request body into at most 50 inbound events (spec §4.3).
 *
 * The request is accepted or rejected whole: a body that is not JSON, not an
 * object or array of objects, an empty array, or any of the first 50 items
 * failing `inboundEventSchema` throws. Items past the 50th are not looked at.
 *
 * @param body raw request body (UTF-8 text)
 * @throws InvalidEventError (400 `invalid event`) with a `detail` for logs
 */
export function parseEventBody(body: string | null | undefined): InboundEvent[] {
  if (!body) throw new InvalidEventError('empty body');
  if (Buffer.byteLength(body, 'utf8') > MAX_BODY_BYTES) throw new InvalidEventError('body too large');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidEventError('body is not JSON');
  }
  const items = Array.isArray(json) ? json.slice(0, MAX_EVENTS_PER_REQUEST) : [json];
  if (items.length === 0) throw new InvalidEventError('empty array');
  if (jsonDepth(items) > MAX_JSON_DEPTH) throw new InvalidEventError('JSON nested too deeply');
  return items.map((item, index) => {
    const parsed = inboundEventSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidEventError(`item ${index}: ${issue?.path.join('.') || 'event'} ${issue?.message ?? 'invalid'}`);
    }
    return parsed.data;
  });
}
