import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, MAX_EVENT_BYTES, FIELD_BUDGET_BYTES, parseEventBody } from '../../lambdas/domain/inbound.js';
import { InvalidEventError, PayloadTooLargeError } from '../../lambdas/domain/errors.js';

const ok = { n: 'pageview', u: 'https://example.com/a', s: 'example.com' };
const repaired = { r: null, v: null, w: null, g: null, l: null };

describe('parseEventBody: the event endpoint body, its repairs and limits', () => {
  it('accepts one event, filling the optional fields with null', () => {
    expect(parseEventBody(JSON.stringify(ok))).toEqual({ events: [{ ...ok, ...repaired }], notEvents: 0 });
  });

  it('accepts an array and ignores items past the 50th, even invalid ones', () => {
    const body = [
      ...Array.from({ length: 50 }, (_, i) => ({ ...ok, u: `https://example.com/${i}` })),
      { bogus: true },
      42,
    ];
    const { events, notEvents } = parseEventBody(JSON.stringify(body));
    expect(events).toHaveLength(50);
    expect(events[49]?.u).toBe('https://example.com/49');
    expect(notEvents).toBe(0);
  });

  it('keeps optional fields and allows null for r and v', () => {
    const full = { ...ok, n: 'goal', g: 'signup', r: null, v: null, w: 390, l: 'https://other.org/' };
    expect(parseEventBody(JSON.stringify(full)).events).toEqual([full]);
  });

  // Each row: the field as sent → what the drop and enrichment rules are handed (`docs/ingestion.md` "Repairs").
  it.each([
    ['n another string', { n: 'custom' }, { n: 'custom' }],
    ['n a number (dropped as unknown_type later)', { n: 5 }, { n: '' }],
    ['n an object', { n: { a: 1 } }, { n: '' }],
    ['u not a string', { u: 5 }, { u: '' }],
    ['u not a URL (dropped as invalid_url later)', { u: 'not a url' }, { u: 'not a url' }],
    [
      'u over 2,048 characters (path cut later)',
      { u: `https://example.com/${'a'.repeat(3000)}` },
      { u: `https://example.com/${'a'.repeat(3000)}` },
    ],
    ['s over 253 characters (no such site later)', { s: 'a'.repeat(300) }, { s: 'a'.repeat(300) }],
    ['s a number', { s: 7 }, { s: '' }],
    ['r a number', { r: 42 }, { r: null }],
    ['v of 300 characters (daily hash later)', { v: 'v'.repeat(300) }, { v: 'v'.repeat(300) }],
    ['v a number', { v: 12345678 }, { v: null }],
    ['w 390', { w: 390 }, { w: 390 }],
    ['w 1.5 (rounded)', { w: 1.5 }, { w: 2 }],
    ['w 1023.4 (rounded)', { w: 1023.4 }, { w: 1023 }],
    ['w −5 (unknown)', { w: -5 }, { w: null }],
    ['w 0 (unknown)', { w: 0 }, { w: null }],
    ['w 1e308 (unknown)', { w: 1e308 }, { w: null }],
    ['w 100,001 (unknown)', { w: 100_001 }, { w: null }],
    ['w a numeric string (unknown)', { w: '390' }, { w: null }],
    [
      'g of 2,000 characters (cut to 64 bytes later)',
      { n: 'goal', g: 'x'.repeat(2000) },
      { n: 'goal', g: 'x'.repeat(2000) },
    ],
    ['g a number (goal without a name later)', { n: 'goal', g: 404 }, { n: 'goal', g: null }],
    ['l an array', { l: ['x'] }, { l: null }],
    ['an unknown field, deeply nested', { x: JSON.parse(`${'['.repeat(1000)}${']'.repeat(1000)}`) as unknown }, {}],
  ])('repairs %s', (_name, fields, expected) => {
    const [event] = parseEventBody(JSON.stringify({ ...ok, ...fields })).events;
    expect(event).toEqual({ ...ok, ...repaired, ...expected });
  });

  it('keeps the events of an array and counts the items that are not events', () => {
    const { events, notEvents } = parseEventBody(
      JSON.stringify([ok, 42, null, 'x', [ok], { n: 'pageview', url: 'https://example.com/' }, { ...ok, u: 5 }]),
    );
    expect(events).toEqual([
      { ...ok, ...repaired },
      { ...ok, ...repaired, u: '' },
    ]);
    expect(notEvents).toBe(5);
  });

  it.each([
    ['empty body', ''],
    ['not JSON', '{nope'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['null', 'null'],
    ['empty array', '[]'],
    ['array of strings', '["a"]'],
    ['missing u', JSON.stringify({ n: 'pageview', s: 'example.com' })],
    ['missing s', JSON.stringify({ n: 'pageview', u: 'https://example.com/' })],
    ['n null', JSON.stringify({ ...ok, n: null })],
    [
      "Plausible's field names",
      JSON.stringify({ name: 'pageview', url: 'https://example.com/', domain: 'example.com' }),
    ],
    ['an array of objects without n, u, s', JSON.stringify([{ a: 1 }, { b: 2 }])],
  ])('rejects %s with 400 invalid event: the body holds no event', (_name, body) => {
    expect(() => parseEventBody(body)).toThrow(InvalidEventError);
    try {
      parseEventBody(body);
    } catch (error) {
      expect((error as InvalidEventError).status).toBe(400);
      expect((error as InvalidEventError).message).toBe('invalid event');
    }
  });

  it('derives the body ceiling from 50 events of maximal fields, and 50 such events fit', () => {
    expect(MAX_EVENT_BYTES).toBe(15_162);
    expect(MAX_BODY_BYTES).toBe(758_152);
    // Every field at its budget, written by an encoder that escapes every "/" (PHP's json_encode).
    const slashes = (n: number) => '/'.repeat(n);
    const maximal = {
      n: 'pageview',
      u: `https://example.com${slashes(FIELD_BUDGET_BYTES.u - 19)}`,
      s: `${'a'.repeat(FIELD_BUDGET_BYTES.s - 12)}.example.com`,
      r: `https://other.org${slashes(FIELD_BUDGET_BYTES.r - 17)}`,
      v: 'v'.repeat(FIELD_BUDGET_BYTES.v),
      w: -1.234567890123456e-300, // 23 characters, near the 24 budgeted
      g: slashes(FIELD_BUDGET_BYTES.g),
      l: `https://other.org${slashes(FIELD_BUDGET_BYTES.l - 17)}`,
    };
    const body = JSON.stringify(
      Array.from({ length: 50 }, () => maximal),
      null,
      2,
    ).replaceAll('/', '\\/');
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES);
    expect(parseEventBody(body).events).toHaveLength(50);
  });

  it('accepts 10,000 small events under the ceiling, reading the first 50', () => {
    const body = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ ...ok, u: `https://example.com/${i}` })));
    expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024);
    expect(parseEventBody(body).events.map((e) => e.u)).toEqual(
      Array.from({ length: 50 }, (_, i) => `https://example.com/${i}`),
    );
  });

  it('answers a body over the ceiling with 413 before parsing it', () => {
    const body = JSON.stringify({ ...ok, pad: 'x'.repeat(MAX_BODY_BYTES) });
    expect(() => parseEventBody(body)).toThrow(PayloadTooLargeError);
    // Counted in UTF-8 bytes: 3-byte characters reach the ceiling at a third of the length.
    expect(() => parseEventBody(JSON.stringify({ ...ok, g: '€'.repeat(Math.ceil(MAX_BODY_BYTES / 3)) }))).toThrow(
      PayloadTooLargeError,
    );
  });
});
