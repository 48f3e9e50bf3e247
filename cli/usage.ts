import * as z from 'zod';

/** Usage errors: bad arguments or options. Exit code 2 with a one-line message. */
export class UsageError extends Error {}

/** The parts of a JSON Schema (draft 2020-12, as `z.toJSONSchema` writes it) that say what a value may be. */
interface ValueSchema {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  properties?: Record<string, ValueSchema>;
}

/** A bound as large as `Number.MAX_SAFE_INTEGER` is no bound a user needs to hear about. */
const bounded = (n: number | undefined): n is number => n !== undefined && Math.abs(n) < Number.MAX_SAFE_INTEGER;

function range(s: ValueSchema): string {
  const min = bounded(s.minimum) ? s.minimum : undefined;
  const max = bounded(s.maximum) ? s.maximum : undefined;
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return '';
}

/**
 * What a schema allows, read from its JSON Schema: a list of choices or a
 * numeric range. Rules tried in order; the first that applies answers.
 * Strings with a pattern or a refinement have no plain-words form here: their
 * zod message says it (`must be a domain name such as example.com`).
 */
const ALLOWED_BY_SCHEMA: ReadonlyArray<(s: ValueSchema) => string | null> = [
  (s) => (s.enum ? `must be one of: ${s.enum.join(', ')}` : null),
  (s) => (s.type === 'integer' ? `must be a whole number${range(s)}` : null),
  (s) => (s.type === 'number' ? `must be a number${range(s)}` : null),
];

/** A size bound in words: `1 character`, `512 characters`, or the number alone for numbers. */
const bound = (n: number, origin: string) => (origin === 'string' ? `${n} character${n === 1 ? '' : 's'}` : String(n));

/** String formats (zod's names) in words. */
const FORMATS: Readonly<Record<string, string>> = {
  email: 'an email address such as ana@example.com',
  url: 'an http:// or https:// address',
  date: 'a date YYYY-MM-DD',
};

/**
 * Zod's own messages ("Too big: expected string to have <=512 characters")
 * by issue code, in the words of the other messages. Custom messages given
 * in a schema (they start with `must`) are kept as they are.
 */
const ALLOWED_BY_ISSUE: Readonly<Partial<Record<z.core.$ZodIssue['code'], (issue: z.core.$ZodIssue) => string>>> = {
  too_small: (i) =>
    `must be at least ${bound(Number((i as z.core.$ZodIssueTooSmall).minimum), (i as z.core.$ZodIssueTooSmall).origin)}`,
  too_big: (i) =>
    `must be at most ${bound(Number((i as z.core.$ZodIssueTooBig).maximum), (i as z.core.$ZodIssueTooBig).origin)}`,
  invalid_format: (i) => {
    const format = (i as z.core.$ZodIssueInvalidStringFormat).format;
    return `must be ${FORMATS[format] ?? `a valid ${format}`}`;
  },
  invalid_value: (i) => `must be one of: ${(i as z.core.$ZodIssueInvalidValue).values.map(String).join(', ')}`,
};

function jsonSchemaOf(schema: z.ZodType): ValueSchema | null {
  try {
    return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as ValueSchema;
  } catch {
    return null;
  }
}

/** The sub-schema at an issue's path (object properties only; CLI inputs are flat). */
function atPath(schema: ValueSchema | null, path: readonly PropertyKey[]): ValueSchema | null {
  let s = schema;
  for (const key of path) s = s?.properties?.[String(key)] ?? null;
  return s;
}

/** How a schema's failure on a value reads: what the value must be. */
function allowed(issue: z.core.$ZodIssue, schema: ValueSchema | null): string {
  if (issue.message.startsWith('must')) return issue.message;
  for (const rule of ALLOWED_BY_SCHEMA) {
    const text = schema && rule(schema);
    if (text) return text;
  }
  return ALLOWED_BY_ISSUE[issue.code]?.(issue) ?? issue.message;
}

/** Where a value came from: `--port`, `<domain>`; `secret` values are not echoed back. */
export interface ValueName {
  name: string;
  secret?: boolean;
}

/**
 * The one place that turns a failed zod parse of a command-line value into a
 * message: it names the option or argument, quotes the value given, and says
 * what is allowed, e.g. `--port "abc" is not valid: must be a whole number
 * from 0 to 65535`, or `--timezone is required: must be an IANA timezone…`.
 */
export function usageMessage(
  field: ValueName,
  value: unknown,
  issue: z.core.$ZodIssue,
  schema: ValueSchema | null,
): string {
  const rule = allowed(issue, schema);
  if (value === undefined) return `${field.name} is required: ${rule}`;
  const shown = field.secret ? '(the value given)' : JSON.stringify(value);
  return `${field.name} ${shown} is not valid: ${rule}`;
}

/**
 * Parses one argument or option value with `schema`.
 * @param field how the user wrote it: `{ name: '--port' }`, `{ name: '<domain>' }`
 * @throws UsageError with `usageMessage`'s one line
 */
export function parseArgs<T>(schema: z.ZodType<T>, value: unknown, field: ValueName | string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = typeof field === 'string' ? { name: field } : field;
  throw new UsageError(usageMessage(name, value, issue, atPath(jsonSchemaOf(schema), issue.path)));
}

/**
 * Parses several values at once with an object schema (a domain schema that
 * checks them together, e.g. a site's settings).
 * @param input the object the schema reads (values may already be converted, e.g. to numbers)
 * @param fields for each key of `input` that came from the command line: its name and the text given
 * @throws UsageError naming the first field that fails, with the text given for it
 */
export function parseFields<T>(
  schema: z.ZodType<T>,
  input: Record<string, unknown>,
  fields: Record<string, ValueName & { given: unknown }>,
): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const key = String(issue.path[0] ?? '');
  const field = fields[key] ?? { name: key || 'argument', given: input[key] };
  throw new UsageError(usageMessage(field, field.given, issue, atPath(jsonSchemaOf(schema), issue.path)));
}
