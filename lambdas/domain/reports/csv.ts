import * as z from 'zod';
import { stringify } from 'csv-stringify/sync';

/**
 * CSV export of report rows (`docs/api.md` "CSV export"): the
 * columns of the JSON row schema, nested objects flattened to dotted names
 * (`touch.channel`), one row per JSON row, written by csv-stringify with
 * RFC 4180 quoting and CRLF line ends.
 */

/** The `format` query parameter of the reports that export CSV. */
export const formatParam = z
  .enum(['json', 'csv'])
  .optional()
  .describe(
    'csv answers text/csv (RFC 4180, same columns as the JSON rows, nested fields as dotted columns); the same as `Accept: text/csv`. Default json',
  );

const unwrap = (schema: z.ZodType): z.ZodType => {
  let s = schema;
  while (s instanceof z.ZodNullable || s instanceof z.ZodOptional || s instanceof z.ZodDefault)
    s = s.unwrap() as z.ZodType;
  return s;
};

/** The columns of a row schema: its fields in order, nested objects as `parent.child`. */
export function csvColumns(schema: z.ZodObject, prefix = ''): string[] {
  return Object.entries(schema.shape).flatMap(([name, field]) => {
    const inner = unwrap(field as z.ZodType);
    return inner instanceof z.ZodObject ? csvColumns(inner, `${prefix}${name}.`) : [`${prefix}${name}`];
  });
}

const valueAt = (row: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
      row,
    );

/**
 * A cell starting with `=`, `+`, `-`, `@`, tab or carriage return is read as
 * a formula by spreadsheets; visitors choose page paths, goal names and
 * referrers, so such text cells get a leading `'` (OWASP, "CSV Injection").
 * Numbers are written as they are.
 */
export const neutralizeFormula = (text: string): string => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);

/**
 * The CSV text of `rows` under the columns of `schema`: a header line, then
 * one line per row; null is an empty cell, booleans `true`/`false`.
 */
export function toCsv(schema: z.ZodObject, rows: readonly unknown[]): string {
  const columns = csvColumns(schema);
  const records = rows.map((row) => columns.map((c) => valueAt(row, c)));
  return stringify([columns, ...records], {
    record_delimiter: 'windows',
    // A lone LF or CR inside a cell is a line break to most readers: quote it too (RFC 4180 §2.6).
    quoted_match: /[\r\n]/,
    cast: { boolean: (b) => String(b), string: neutralizeFormula },
  });
}
