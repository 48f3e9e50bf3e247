import * as z from 'zod';
import { InvalidEventError, PayloadTooLargeError } from './errors.js';
import { repairProps, strictPropsSchema, type Props } from './props.js';

/** `docs/ingestion.md` "Request": items beyond the 50th in an array are ignored. */
export const MAX_EVENTS_PER_REQUEST = 50;

/**
 * The largest value of each field we size the body ceiling for, in UTF-8
 * bytes as sent. Spec limits where it has them (`n` is at most `pageview`,
 * `v` 64, `s` a DNS name of 253); ours where it has none: URLs (`u`, `r`, `l`)
 * of 2,048, the most of a page path we keep and the practical URL limit of
 * browsers' address bars; a goal name of 1,024 before it is cut to 64 bytes;
 * `w` written as a 24-character number. None of these is enforced per field:
 * a longer value is repaired (cut) or ignored, never a 400.
 */
export const FIELD_BUDGET_BYTES = { n: 8, u: 2048, s: 253, r: 2048, v: 64, w: 24, g: 1024, l: 2048 } as const;
/** JSON encoders may escape `/` as `\/` (PHP's json_encode does): twice the raw bytes. */
const JSON_ESCAPE_FACTOR = 2;
/** Keys, quotes, colons, commas and braces of one event with every field, with room for pretty-printing. */
const EVENT_SYNTAX_BYTES = 128;
/** One event of maximal fields, JSON-encoded (15,162 bytes). */
export const MAX_EVENT_BYTES =
  Object.values(FIELD_BUDGET_BYTES).reduce((sum, b) => sum + b, 0) * JSON_ESCAPE_FACTOR + EVENT_SYNTAX_BYTES;
/**
 * The body ceiling, derived from the event endpoint's limits (`docs/ingestion.md` "Request"): 50 events of maximal
 * fields, their commas and the brackets (758,152 bytes, about 740 KiB). A
 * larger body cannot be a request those limits allow with every event read,
 * and is answered 413 before it is parsed, which bounds the Lambda's parse
 * time and memory (`docs/ingestion.md`).
 */
export const MAX_BODY_BYTES = MAX_EVENTS_PER_REQUEST * (MAX_EVENT_BYTES + 1) + 2;

/** One inbound event (`docs/ingestion.md` "The event's fields") as the enrichment reads it, after parsing and repair. */
export interface InboundEvent {
  n: string;
  u: string;
  s: string;
  r?: string | null;
  v?: string | null;
  w?: number | null;
  g?: string | null;
  l?: string | null;
  /** Custom properties (`lambdas/domain/props.ts`), null for none. */
  p?: Props | null;
}

/**
 * The strict form of an inbound event, with a limit on every field, for
 * callers that report a bad field instead of repairing it (`footfall import`
 * lines). The event endpoint repairs instead: `repairedEventSchema`.
 */
export const inboundEventSchema = z.object({
  n: z.string().max(32),
  u: z
    .string()
    .max(2048)
    .refine((u) => URL.canParse(u) && /^https?:/i.test(u), 'must be an http(s) URL'),
  s: z.string().min(1).max(253),
  r: z.string().max(2048).nullish(),
  v: z.string().max(256).nullish(),
  w: z.number().int().min(0).max(100_000).nullish(),
  g: z.string().max(1024).nullish(),
  l: z.string().max(2048).nullish(),
  p: strictPropsSchema.optional(),
});

/** Widest screen we believe, CSS pixels; wider (1e308) is unknown. */
export const MAX_SCREEN_WIDTH = 100_000;

/**
 * `w` as the event endpoint keeps it (our rule, `docs/ingestion.md` "Repairs"):
 * a finite number is rounded to the nearest integer (1.5 → 2) and kept when
 * it is 1 to 100,000; anything else (negative, 0, 1e308, a string, NaN) is
 * unknown, which makes the device `Unknown`.
 */
export const screenWidthSchema = z
  .number()
  .transform(Math.round)
  .pipe(z.number().int().min(1).max(MAX_SCREEN_WIDTH))
  .nullable()
  .catch(null);

const text = z.string().nullable().catch(null);

/**
 * The event endpoint's repair rules (`docs/ingestion.md` "Repairs", "Silent drops", "Request"): every
 * field of an event object becomes a value the drop and enrichment rules
 * handle, so one odd field never rejects a request.
 * - `n`, `u`, `s` that are not strings become `''`: dropped as
 *   `unknown_type`, `invalid_url`, `unknown_site` (`docs/ingestion.md` "Silent drops");
 * - `r`, `v`, `g`, `l` that are not strings are treated as missing: no
 *   referrer, the daily hash (`v`), a goal without a name (dropped);
 * - `w` by `screenWidthSchema`;
 * - `p` by `repairProps`: what is not a property is dropped, never the event;
 * - over-long strings are kept here and cut where they are used (goal name to
 *   64 bytes, path and link to 2,048 characters).
 */
export const repairedEventSchema = z.object({
  n: z.string().catch(''),
  u: z.string().catch(''),
  s: z.string().catch(''),
  r: text,
  v: text,
  w: screenWidthSchema,
  g: text,
  l: text,
  p: z.unknown().transform(repairProps).optional(),
}) satisfies z.ZodType<InboundEvent, unknown>;

/**
 * An item is an event when it is a JSON object that has the three required
 * fields `n`, `u` and `s` (`docs/ingestion.md` "The event's fields"), whatever their values; an object
 * without them (Plausible's `{"name","url","domain"}`, say) is not, so a
 * request of only such objects is told 400 instead of vanishing.
 */
function isEventObject(item: unknown): item is Record<string, unknown> {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return false;
  const fields = item as Record<string, unknown>;
  return fields.n != null && fields.u != null && fields.s != null;
}

/** What a request body came to: the repaired events, and the items that were not events (dropped, counted). */
export interface ParsedBody {
  events: InboundEvent[];
  /** Items among the first 50 that are not events (not an object, or without `n`, `u`, `s`). */
  notEvents: number;
}

/**
 * Parses a request body into at most 50 repaired inbound events (`docs/ingestion.md` "Request").
 *
 * A body is answered 400 only when it holds no event at all: empty, not JSON,
 * not an object or array, or an object or array with no event among its first
 * 50 items. Unknown fields are ignored, however deeply nested (the ceiling
 * bounds the parse; V8's JSON.parse does not recurse on the stack). Otherwise every event among the
 * first 50 items is repaired field by field (`repairedEventSchema`), items
 * that are not events are counted in `notEvents`, and items past the 50th are
 * not looked at.
 *
 * @param body raw request body (UTF-8 text)
 * @throws PayloadTooLargeError (413) for a body over `MAX_BODY_BYTES`
 * @throws InvalidEventError (400 `invalid event`) with a `detail` for logs
 */
export function parseEventBody(body: string | null | undefined): ParsedBody {
  if (!body) throw new InvalidEventError('empty body');
  // UTF-16 length is at most the UTF-8 length, so a short string needs no byte count.
  if (body.length > MAX_BODY_BYTES || Buffer.byteLength(body, 'utf8') > MAX_BODY_BYTES)
    throw new PayloadTooLargeError(MAX_BODY_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidEventError('body is not JSON');
  }
  const items = Array.isArray(json) ? json.slice(0, MAX_EVENTS_PER_REQUEST) : [json];
  const events = items.filter(isEventObject).map((item) => repairedEventSchema.parse(item));
  if (events.length === 0)
    throw new InvalidEventError(items.length === 0 ? 'empty array' : 'no event: an event is an object with n, u and s');
  return { events, notEvents: items.length - events.length };
}
