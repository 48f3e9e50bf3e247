/**
 * Records keyed by outside text: goal names, visitor ids, referrer hosts, UTM
 * values, pages, provider and customer ids, metadata keys. A plain `{}` has
 * `Object.prototype` behind it, so such a key reads an inherited member
 * (`constructor`, `toString`, `valueOf`...) and an assignment to `__proto__`
 * replaces the prototype instead of storing a value. A dict has no prototype:
 * every string is a key like any other (`docs/security.md`, "Outside text is
 * never a key into our objects"). `eslint.config.js` refuses the plain forms.
 */
export type Dict<T> = Record<string, T>;

/**
 * A new null-prototype record, holding `from`'s own entries (a record or
 * `[key, value]` pairs; later pairs win).
 */
export function dict<T>(from?: Readonly<Record<string, T>> | Iterable<readonly [string, T]>): Dict<T> {
  const out = Object.create(null) as Dict<T>;
  if (!from) return out;
  const entries = Symbol.iterator in from ? from : Object.entries(from);
  for (const [key, value] of entries as Iterable<readonly [string, T]>) out[key] = value;
  return out;
}

/**
 * JSON text of an object (a stored map: rollup counts, sketches, realtime
 * visitors) as a dict; `JSON.parse` keeps `"__proto__"` as an own key, and
 * the copy drops the prototype that would answer every other name.
 * @throws SyntaxError when `json` is not JSON
 */
export function parseDict<T>(json: string): Dict<T> {
  const parsed: unknown = JSON.parse(json);
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    ? dict(parsed as Record<string, T>)
    : dict<T>();
}

/** `record[key]` when `key` is the record's own property, else undefined: never an inherited member. */
export function own<T>(record: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}
