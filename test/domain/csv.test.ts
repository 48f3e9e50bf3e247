import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { csvColumns, neutralizeFormula, toCsv } from '../../lambdas/domain/reports/csv.js';
import { paymentRowSchema } from '../../lambdas/domain/reports/schemas.js';

const schema = z.object({
  name: z.string(),
  n: z.number().nullable(),
  ok: z.boolean(),
  nested: z.object({ a: z.string(), b: z.number() }).nullable(),
});

describe('CSV export (RFC 4180)', () => {
  it('takes the columns of the row schema, nested objects as dotted names', () => {
    expect(csvColumns(schema)).toEqual(['name', 'n', 'ok', 'nested.a', 'nested.b']);
    expect(csvColumns(paymentRowSchema)).toContain('first_touch.source');
  });

  it.each<[string, unknown, string]>([
    ['plain text', { name: 'Signup', n: 1, ok: true, nested: { a: 'x', b: 2 } }, 'Signup,1,true,x,2'],
    ['null and a null object: empty cells', { name: 'a', n: null, ok: false, nested: null }, 'a,,false,,'],
    ['a comma: quoted', { name: 'a,b', n: 0, ok: false, nested: null }, '"a,b",0,false,,'],
    ['a quote: doubled inside quotes', { name: 'say "hi"', n: 0, ok: false, nested: null }, '"say ""hi""",0,false,,'],
    ['a line break: quoted', { name: 'a\nb', n: 0, ok: false, nested: null }, '"a\nb",0,false,,'],
    ['a formula: neutralized', { name: '=1+2', n: -5, ok: false, nested: null }, "'=1+2,-5,false,,"],
    ['non-ASCII as UTF-8 text', { name: 'Zürich 日本', n: 1.5, ok: true, nested: null }, 'Zürich 日本,1.5,true,,'],
  ])('%s', (_, row, line) => {
    expect(toCsv(schema, [row])).toBe(`name,n,ok,nested.a,nested.b\r\n${line}\r\n`);
  });

  it('writes only the header for no rows', () => {
    expect(toCsv(schema, [])).toBe('name,n,ok,nested.a,nested.b\r\n');
  });

  it.each([
    ['=SUM(A1)', "'=SUM(A1)"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@x', "'@x"],
    ['\tx', "'\tx"],
    ['/pricing', '/pricing'],
    ['a=b', 'a=b'],
  ])('neutralizeFormula(%j) = %j', (input, output) => {
    expect(neutralizeFormula(input)).toBe(output);
  });
});
