import { describe, expect, it } from 'vitest';
import {
  PROPS_LIMITS,
  propsJson,
  propsOf,
  repairProps,
  storedPropsSchema,
  strictPropsSchema,
} from '../../lambdas/domain/props.js';
import { parseEventBody } from '../../lambdas/domain/inbound.js';
import { parseImportLine } from '../../lambdas/domain/import-line.js';

const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));
const plain = (props: Record<string, string> | null) => (props === null ? null : { ...props });

describe('custom properties: Plausible bounds, repaired at the event endpoint', () => {
  // Each row: `p` as sent → the properties the event keeps (null: none).
  it.each<[string, unknown, Record<string, string> | null]>([
    ['a string value', { plan: 'pro' }, { plan: 'pro' }],
    [
      'a number and a boolean, as text',
      { seats: 3, ratio: 1.5, annual: true },
      { seats: '3', ratio: '1.5', annual: 'true' },
    ],
    ['null, empty and blank values dropped', { a: null, b: '', c: '  ', d: 'x' }, { d: 'x' }],
    ['lists and objects dropped', { a: [1], b: { c: 'd' }, e: 'f' }, { e: 'f' }],
    ['NaN and Infinity dropped (JSON cannot send them; a server object can)', { a: NaN, b: Infinity }, null],
    ['a blank key dropped', { ' ': 'x', '': 'y' }, null],
    ['not an object', 'plan=pro', null],
    ['an array', [['plan', 'pro']], null],
    ['null', null, null],
    ['the first 30 of 31', many(31), many(30)],
    ['a key of 300 bytes kept', { ['k'.repeat(300)]: 'v' }, { ['k'.repeat(300)]: 'v' }],
    ['a key of 301 bytes dropped', { ['k'.repeat(301)]: 'v', ok: '1' }, { ok: '1' }],
    ['a value of 2,000 bytes kept', { k: 'v'.repeat(2000) }, { k: 'v'.repeat(2000) }],
    ['a value of 2,000 bytes as 667 × 3-byte characters dropped', { k: '€'.repeat(667), ok: '1' }, { ok: '1' }],
    ['an over-long value does not use up one of the 30', { bad: 'v'.repeat(2001), ...many(30) }, many(30)],
  ])('%s', (_name, raw, expected) => {
    expect(plain(repairProps(raw))).toEqual(expected);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])(
    'keeps the hostile key %s as data: no prototype is touched or read',
    (key) => {
      const props = repairProps(JSON.parse(`{${JSON.stringify(key)}:"x","plan":"pro"}`));
      expect(props).not.toBeNull();
      expect(Object.getPrototypeOf(props)).toBeNull();
      expect(Object.keys(props!)).toEqual([key, 'plan']);
      expect(props![key]).toBe('x');
      // Through the stored JSON and back, the key is still there and still only data.
      const back = propsOf(propsJson(props));
      expect(Object.entries(back)).toEqual([
        [key, 'x'],
        ['plan', 'pro'],
      ]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it('repairs p in an event body and never rejects the event for it', () => {
    const body = JSON.stringify([
      { n: 'goal', g: 'Signup', u: 'https://example.com/', s: 'example.com', p: { plan: 'pro', n: 2 } },
      { n: 'pageview', u: 'https://example.com/', s: 'example.com', p: 'junk' },
      { n: 'pageview', u: 'https://example.com/', s: 'example.com', p: { long: 'x'.repeat(5000) } },
    ]);
    const { events } = parseEventBody(body);
    expect(events.map((e) => plain(e.p ?? null))).toEqual([{ plan: 'pro', n: '2' }, null, null]);
  });
});

describe('custom properties: strict form (footfall import events, the stored column)', () => {
  it.each<[string, unknown, string]>([
    ['a key over 300 bytes', { ['k'.repeat(301)]: 'v' }, 'k'.repeat(301)],
    ['a value over 2,000 bytes', { plan: 'v'.repeat(2001) }, 'plan'],
    ['an object value', { plan: { tier: 'pro' } }, 'plan'],
    ['31 properties', many(31), ''],
    ['not an object', 'plan', ''],
  ])('refuses %s, naming the property', (_name, raw, path) => {
    const result = strictPropsSchema.safeParse(raw);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path.join('.')).toBe(path);
  });

  it('reports the property of an import line by its path', () => {
    const line = JSON.stringify({
      n: 'pageview',
      u: 'https://example.com/',
      s: 'example.com',
      ts: '2026-03-01T10:00:00Z',
      p: { plan: 'x'.repeat(2001) },
    });
    expect(() => parseImportLine(line, 7)).toThrow(
      `line 7: p.plan: a property value has at most ${PROPS_LIMITS.valueBytes} bytes`,
    );
    const good = parseImportLine(line.replace(/"x+"/, '"pro"'), 8);
    expect(plain(good.event.p ?? null)).toEqual({ plan: 'pro' });
  });

  it('holds the stored column to JSON of bounded text properties', () => {
    expect(storedPropsSchema.parse(undefined)).toBeNull();
    expect(storedPropsSchema.parse('{"plan":"pro"}')).toBe('{"plan":"pro"}');
    expect(storedPropsSchema.safeParse('{"plan":').success).toBe(false);
    expect(storedPropsSchema.safeParse(JSON.stringify(many(31))).success).toBe(false);
    expect(propsJson(null)).toBeNull();
    expect(propsJson(repairProps({}))).toBeNull();
  });
});
