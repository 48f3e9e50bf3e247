import { describe, expect, it } from 'vitest';
import { hashVisitor, isValidVisitorId, newSalt, resolveVisitor, saltDay } from '../../lambdas/domain/visitor.js';

const BASE = {
  salt: 'c2FsdC1vZi10aGUtZGF5',
  site: 'example.com',
  ip: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/127.0',
};

describe('isValidVisitorId: 8 to 64 letters, digits or dashes', () => {
  it.each<[unknown, boolean]>([
    ['abcdefgh', true],
    ['a1B2-c3D4', true],
    ['01234567-89ab-cdef-0123-456789abcdef', true],
    ['x'.repeat(64), true],
    ['--------', true],
    ['abcdefg', false],
    ['x'.repeat(65), false],
    ['abc_defgh', false],
    ['abc defgh', false],
    ['abcdéfgh', false],
    ['abcdefgh\n', false],
    ['', false],
    [null, false],
    [undefined, false],
    [12345678, false],
    [{ id: 'abcdefgh' }, false],
  ])('%j → %s', (v, valid) => {
    expect(isValidVisitorId(v)).toBe(valid);
  });
});

describe('saltDay', () => {
  it.each<[string, string]>([
    ['2024-03-09T00:00:00.000Z', '2024-03-09'],
    ['2024-03-09T23:59:59.999Z', '2024-03-09'],
    ['2024-03-10T00:00:00.000Z', '2024-03-10'],
    ['2024-12-31T23:59:59.999Z', '2024-12-31'],
    ['2025-01-01T00:00:00.000Z', '2025-01-01'],
    ['2024-02-29T12:00:00.000Z', '2024-02-29'],
  ])('%s → %s (UTC, whatever the local zone)', (iso, day) => {
    expect(saltDay(Date.parse(iso))).toBe(day);
  });
});

describe('hashVisitor', () => {
  it('is a valid visitor id: h- and 32 hex digits', () => {
    const id = hashVisitor(BASE);
    expect(id).toMatch(/^h-[0-9a-f]{32}$/);
    expect(isValidVisitorId(id)).toBe(true);
  });

  it('gives the same hash for the same inputs', () => {
    expect(hashVisitor({ ...BASE })).toBe(hashVisitor(BASE));
  });

  it.each<[string, Partial<typeof BASE>]>([
    ['salt', { salt: 'another-salt' }],
    ['site', { site: 'example.org' }],
    ['ip', { ip: '203.0.113.8' }],
    ['userAgent', { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' }],
  ])('changes with the %s', (_field, change) => {
    expect(hashVisitor({ ...BASE, ...change })).not.toBe(hashVisitor(BASE));
  });

  it.each<[string, typeof BASE, typeof BASE]>([
    ['site/ip', { ...BASE, site: 'a.com', ip: '1.2.3.4' }, { ...BASE, site: 'a.com1', ip: '.2.3.4' }],
    ['salt/site', { ...BASE, salt: 's', site: 'xa.com' }, { ...BASE, salt: 'sx', site: 'a.com' }],
    ['ip/userAgent', { ...BASE, ip: '::1', userAgent: 'ab' }, { ...BASE, ip: '::1a', userAgent: 'b' }],
  ])('keeps the parts apart: moving bytes across %s changes the hash', (_parts, left, right) => {
    expect(hashVisitor(left)).not.toBe(hashVisitor(right));
  });
});

describe('resolveVisitor', () => {
  it.each<[string, unknown, 'id' | 'hash']>([
    ['a valid v', 'Abc123-xyz', 'id'],
    ['a too short v', 'abc', 'hash'],
    ['a v with an underscore', 'abc_defgh', 'hash'],
    ['null', null, 'hash'],
    ['missing', undefined, 'hash'],
    ['a number', 1234567890, 'hash'],
  ])('%s → %s', (_label, v, kind) => {
    const visitor = resolveVisitor({ ...BASE, v });
    expect(visitor.visitor_kind).toBe(kind);
    expect(visitor.visitor_id).toBe(kind === 'id' ? v : hashVisitor(BASE));
  });
});

describe('salt rotation at 00:00 UTC', () => {
  /** One salt per UTC day, as the salt store keeps them. */
  const salts = new Map<string, string>();
  const saltFor = (day: string) => salts.get(day) ?? salts.set(day, newSalt()).get(day)!;
  const visitorAt = (iso: string) => {
    const salt = saltFor(saltDay(Date.parse(iso)));
    return resolveVisitor({ ...BASE, salt, v: undefined }).visitor_id;
  };

  it('gives the last millisecond of a day and the first of the next different days and different hashes', () => {
    const before = '2024-06-30T23:59:59.999Z';
    const after = '2024-07-01T00:00:00.000Z';
    expect(saltDay(Date.parse(before))).toBe('2024-06-30');
    expect(saltDay(Date.parse(after))).toBe('2024-07-01');
    expect(visitorAt(before)).not.toBe(visitorAt(after));
  });

  it('gives two events of the same UTC day the same hash', () => {
    expect(visitorAt('2024-07-01T00:00:00.000Z')).toBe(visitorAt('2024-07-01T23:59:59.999Z'));
  });
});

describe('newSalt', () => {
  it('is 32 random bytes in base64url', () => {
    const salt = newSalt();
    expect(salt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(salt, 'base64url')).toHaveLength(32);
    expect(newSalt()).not.toBe(salt);
  });
});
