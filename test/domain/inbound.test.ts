import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES, parseEventBody } from '../../lambdas/domain/inbound.js';
import { InvalidEventError } from '../../lambdas/domain/errors.js';

const ok = { n: 'pageview', u: 'https://example.com/a', s: 'example.com' };

describe('parseEventBody (spec §2.9, §4.3)', () => {
  it('accepts one event', () => {
    expect(parseEventBody(JSON.stringify(ok))).toEqual([ok]);
  });

  it('accepts an array and ignores items past the 50th, even invalid ones', () => {
    const body = [...Array.from({ length: 50 }, (_, i) => ({ ...ok, u: `https://example.com/${i}` })), { bogus: true }];
    const events = parseEventBody(JSON.stringify(body));
    expect(events).toHaveLength(50);
    expect(events[49]?.u).toBe('https://example.com/49');
  });

  it('keeps optional fields and allows null for r and v', () => {
    const full = { ...ok, n: 'goal', g: 'signup', r: null, v: null, w: 390, l: 'https://other.org/' };
    expect(parseEventBody(JSON.stringify(full))).toEqual([full]);
  });

  it('passes unknown n and missing goal names on to the drop rules', () => {
    expect(parseEventBody(JSON.stringify({ ...ok, n: 'custom' }))[0]?.n).toBe('custom');
    expect(parseEventBody(JSON.stringify({ ...ok, n: 'goal' }))[0]?.g).toBeUndefined();
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
    ['u not a URL', JSON.stringify({ ...ok, u: 'not a url' })],
    ['u not http', JSON.stringify({ ...ok, u: 'javascript:alert(1)' })],
    ['u too long', JSON.stringify({ ...ok, u: `https://example.com/${'a'.repeat(2100)}` })],
    ['s too long', JSON.stringify({ ...ok, s: 'a'.repeat(254) })],
    ['n not a string', JSON.stringify({ ...ok, n: 1 })],
    ['w negative', JSON.stringify({ ...ok, w: -1 })],
    ['w fractional', JSON.stringify({ ...ok, w: 1.5 })],
    ['w a string', JSON.stringify({ ...ok, w: '390' })],
    ['g too long', JSON.stringify({ ...ok, n: 'goal', g: 'x'.repeat(1025) })],
    ['one bad item in an array', JSON.stringify([ok, { ...ok, u: 5 }])],
    ['deeply nested', JSON.stringify([{ ...ok, r: null, x: [[[[[[[[[[1]]]]]]]]]] }])],
    ['over the body limit', JSON.stringify({ ...ok, pad: 'x'.repeat(MAX_BODY_BYTES) })],
  ])('rejects %s with 400 invalid event', (_name, body) => {
    expect(() => parseEventBody(body)).toThrow(InvalidEventError);
    try {
      parseEventBody(body);
    } catch (error) {
      expect((error as InvalidEventError).status).toBe(400);
      expect((error as InvalidEventError).message).toBe('invalid event');
    }
  });
});
