import * as z from 'zod';
import { dict, parseDict, type Dict } from './dict.js';

/**
 * Custom properties of an event (`docs/tracking.md`, "Custom properties"):
 * text keys and values the site sends with a page view or a goal
 * (`footfall('Signup', {props: {plan: 'pro'}})`, the inbound field `p`).
 *
 * Bounds and rules are Plausible's (its Events API and ingestion: at most 30
 * properties, keys of at most 300 bytes, values of at most 2,000 bytes;
 * entries whose value is null, empty, a list or an object are dropped;
 * numbers and booleans become their text). One difference, on purpose: where
 * Plausible rejects the whole event for an over-long key or value, the event
 * endpoint drops that property and keeps the event, as it repairs every
 * other field (`docs/ingestion.md`, "Repairs"); `footfall import events`
 * reports it instead (`strictPropsSchema`).
 *
 * Keys are outside text: properties live in null-prototype dicts, so
 * `__proto__` or `constructor` is a key like any other.
 */

/** Plausible's bounds (its Events API reference; `Plausible.Props` and its ingestion request). */
export const PROPS_LIMITS = {
  /** Properties per event; those past the 30th (after dropping empty ones) are ignored. */
  count: 30,
  /** UTF-8 bytes of a key. */
  keyBytes: 300,
  /** UTF-8 bytes of a value. */
  valueBytes: 2000,
} as const;

/** An event's properties: key → value, both text, in a null-prototype dict. */
export type Props = Dict<string>;

/**
 * A property value as text: a string as is, a finite number or a boolean as
 * JavaScript writes it (`42` → `"42"`, `1.5` → `"1.5"`, `true` → `"true"`);
 * null for what Plausible drops (null, lists, objects) and for anything else.
 * Empty and blank-leading-only values (`""`, `"  "`) are dropped too.
 */
function propText(value: unknown): string | null {
  const text =
    typeof value === 'string'
      ? value
      : (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean'
        ? String(value)
        : null;
  return text === null || text.trimStart() === '' ? null : text;
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** What one entry is: kept, dropped silently (Plausible's drops) or too long. */
type EntryVerdict = { kind: 'keep'; value: string } | { kind: 'drop' } | { kind: 'too_long'; message: string };

function judge(key: string, value: unknown): EntryVerdict {
  const text = propText(value);
  if (text === null || key.trimStart() === '') return { kind: 'drop' };
  if (bytes(key) > PROPS_LIMITS.keyBytes)
    return { kind: 'too_long', message: `a property key has at most ${PROPS_LIMITS.keyBytes} bytes` };
  if (bytes(text) > PROPS_LIMITS.valueBytes)
    return { kind: 'too_long', message: `a property value has at most ${PROPS_LIMITS.valueBytes} bytes` };
  return { kind: 'keep', value: text };
}

/** The own entries of a JSON object (`"__proto__"` included, as JSON.parse keeps it); null for anything else. */
function entriesOf(raw: unknown): Array<[string, unknown]> | null {
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw)
    ? Object.entries(raw as Record<string, unknown>)
    : null;
}

/**
 * The event endpoint's repair of `p` (`docs/ingestion.md`, "Repairs"): the
 * properties kept, or null when none is. Not an object → none; dropped
 * entries as `propText`; an over-long key or value → that property dropped;
 * then the first 30 in the order sent.
 */
export function repairProps(raw: unknown): Props | null {
  const entries = entriesOf(raw);
  if (!entries) return null;
  const out = dict<string>();
  let count = 0;
  for (const [key, value] of entries) {
    const verdict = judge(key, value);
    if (verdict.kind !== 'keep') continue;
    out[key] = verdict.value;
    if (++count === PROPS_LIMITS.count) break;
  }
  return count > 0 ? out : null;
}

/**
 * The strict form of `p`, for callers that report a bad field (`footfall
 * import events` lines, the stored event): an object of at most 30
 * properties (after Plausible's silent drops), each key and value within its
 * bounds. An issue's path names the property (`p.plan`). Output: the
 * properties, or null when none is left.
 */
export const strictPropsSchema = z.unknown().transform((raw, ctx): Props | null => {
  if (raw === undefined || raw === null) return null;
  const entries = entriesOf(raw);
  if (!entries) {
    ctx.addIssue({ code: 'custom', message: 'properties are an object of text values' });
    return z.NEVER;
  }
  const out = dict<string>();
  let count = 0;
  for (const [key, value] of entries) {
    if (value !== null && typeof value === 'object') {
      ctx.addIssue({ code: 'custom', path: [key], message: 'a property value is text, a number or a boolean' });
      return z.NEVER;
    }
    const verdict = judge(key, value);
    if (verdict.kind === 'drop') continue;
    if (verdict.kind === 'too_long') {
      ctx.addIssue({ code: 'custom', path: [key], message: verdict.message });
      return z.NEVER;
    }
    if (++count > PROPS_LIMITS.count) {
      ctx.addIssue({ code: 'custom', message: `at most ${PROPS_LIMITS.count} properties` });
      return z.NEVER;
    }
    out[key] = verdict.value;
  }
  return count > 0 ? out : null;
});

/** The stored form of an event's properties (the archive's `props` column): JSON text of the object, null for none. */
export function propsJson(props: Props | null | undefined): string | null {
  return props && Object.keys(props).length > 0 ? JSON.stringify(props) : null;
}

/**
 * The properties of a stored `props` column (JSON text, or null) as a dict.
 * @throws SyntaxError when the text is not JSON
 */
export const propsOf = (json: string | null | undefined): Props => (json ? parseDict<string>(json) : dict<string>());

/**
 * The stored column's schema: null, or JSON text of properties within the
 * bounds (what `propsJson` writes from `repairProps` or `strictPropsSchema`).
 */
export const storedPropsSchema = z
  .string()
  .nullable()
  .default(null)
  .refine((json) => {
    if (json === null) return true;
    try {
      return strictPropsSchema.safeParse(JSON.parse(json)).success;
    } catch {
      return false;
    }
  }, 'props is JSON text of at most 30 text properties within their bounds');
