import { gunzipSync, gzipSync } from 'node:zlib';
import * as z from 'zod';
import { FILTERED_VISITS_METHODS, type FilteredVisits } from '../ports.js';

/**
 * The JSON form of a `FilteredVisits` call's arguments and result, as they cross a Lambda invocation
 * (the report and MCP functions invoke the filtered function, `docs/data-model.md` "Filtered reports"):
 * what JSON has no form for is tagged in an object of one `$` key: `{$map: [[k, v], …]}`, `{$set: […]}`,
 * `{$undefined: true}` (an argument left out before one given), `{$number: 'NaN'}` (and `-0`, the infinities) and `{$bigint: '…'}`.
 * A plain object's own keys that begin with `$` get one more `$`, so a goal or property named `$map` is
 * not a tag. Decoded plain objects have no prototype: their keys may be visitors' text.
 * @throws TypeError (encoding) for any other kind of object (a class instance, a function), which would
 *   arrive as something else
 */
export function toWire(value: unknown): unknown {
  if (value === undefined) return { $undefined: true };
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  // JSON writes -0 as 0, and NaN and the infinities as null.
  if (typeof value === 'number')
    return Number.isFinite(value) && !Object.is(value, -0)
      ? value
      : { $number: Object.is(value, -0) ? '-0' : String(value) };
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  if (Array.isArray(value)) return value.map(toWire);
  if (value instanceof Map) return { $map: [...value].map(([k, v]) => [toWire(k), toWire(v)]) };
  if (value instanceof Set) return { $set: [...value].map(toWire) };
  const proto = typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (proto !== Object.prototype && proto !== null)
    throw new TypeError(
      `a filtered call cannot carry ${typeof value === 'object' ? proto?.constructor?.name : typeof value}`,
    );
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, v] of Object.entries(value as object))
    if (v !== undefined) out[key.startsWith('$') ? `$${key}` : key] = toWire(v);
  return out;
}

/** The tags `toWire` writes, by key. */
const TAGS: Readonly<Record<string, (tagged: unknown) => unknown>> = Object.assign(Object.create(null), {
  $undefined: () => undefined,
  $number: (n: unknown) => Number(n),
  $bigint: (n: unknown) => BigInt(String(n)),
  $map: (entries: unknown) =>
    new Map((entries as Array<[unknown, unknown]>).map(([k, v]) => [fromWire(k), fromWire(v)])),
  $set: (items: unknown) => new Set((items as unknown[]).map(fromWire)),
});

/**
 * The value `toWire` encoded (`JSON.parse` of it).
 * @throws TypeError when a tag's content is not what `toWire` writes
 */
export function fromWire(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(fromWire);
  const entries = Object.entries(value);
  const [first] = entries;
  if (entries.length === 1 && first && first[0] in TAGS) return TAGS[first[0]]!(first[1]);
  const out: Record<string, unknown> = Object.create(null);
  for (const [key, v] of entries) out[key.startsWith('$$') ? key.slice(1) : key] = fromWire(v);
  return out;
}

/**
 * Results whose JSON is larger than this are gzipped (`packResult`): a synchronous invocation's
 * response is at most 6 MB, and the visit rows `input` returns for the hourly series of a busy day
 * are more than that as JSON, and about a tenth of it gzipped.
 */
export const PACK_ABOVE_BYTES = 256 * 1024;

/**
 * A method's result as the filtered function returns it: `toWire`'s form, or above `PACK_ABOVE_BYTES` of
 * JSON `{$gzip: <base64 of the gzipped JSON>}` (a key `toWire` never writes at the top: it escapes `$` keys).
 */
export function packResult(result: unknown): unknown {
  const wire = toWire(result);
  const json = JSON.stringify(wire);
  return Buffer.byteLength(json) > PACK_ABOVE_BYTES ? { $gzip: gzipSync(json).toString('base64') } : wire;
}

/** The result `packResult` packed (parsed from the invocation's JSON). */
export function unpackResult(packed: unknown): unknown {
  const gz = packed !== null && typeof packed === 'object' ? (packed as { $gzip?: unknown }).$gzip : undefined;
  return fromWire(typeof gz === 'string' ? JSON.parse(gunzipSync(Buffer.from(gz, 'base64')).toString('utf8')) : packed);
}

/** A method of the filtered engine, as the filtered function is invoked with it. */
export type FilteredMethod = (typeof FILTERED_VISITS_METHODS)[number];

/**
 * The filtered function's event: a method of `FilteredVisits` and its arguments in `toWire`'s form. Its
 * result is the method's result in that form.
 */
export const FilteredCallSchema = z.object({
  method: z.enum(FILTERED_VISITS_METHODS),
  args: z.array(z.unknown()).max(8),
});
export type FilteredCall = z.infer<typeof FilteredCallSchema>;

/**
 * A `FilteredVisits` whose every method is one `invoke` of the filtered function: its arguments encoded
 * (`toWire`), the result unpacked (`unpackResult`).
 * @param invoke runs a call and resolves to its JSON result; rejects as the port's methods reject
 */
export function filteredVisitsByInvoke(invoke: (call: FilteredCall) => Promise<unknown>): FilteredVisits {
  const port: Record<string, unknown> = Object.create(null);
  for (const method of FILTERED_VISITS_METHODS)
    port[method] = async (...args: unknown[]) =>
      unpackResult(await invoke({ method, args: toWire(args) as unknown[] }));
  return port as unknown as FilteredVisits;
}
