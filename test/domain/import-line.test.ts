import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ImportLineError,
  importedEventId,
  isImportedEventId,
  parseImportLine,
} from '../../lambdas/domain/import-line.js';

const LINE = '{"n":"pageview","u":"https://example.com/","ts":"2025-06-01T14:00:00Z"}';

describe('importedEventId', () => {
  it('is a version-8 UUID, the same for the same site, text and occurrence', () => {
    const id = importedEventId('example.com', LINE, 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(importedEventId('example.com', LINE, 0)).toBe(id);
    expect(isImportedEventId(id)).toBe(true);
  });

  it.each([
    ['another occurrence of the same text', () => importedEventId('example.com', LINE, 1)],
    ['another site', () => importedEventId('example.org', LINE, 0)],
    ['another text', () => importedEventId('example.com', LINE.replace('14:00', '14:01'), 0)],
  ])('differs for %s', (_name, other) => {
    expect(other()).not.toBe(importedEventId('example.com', LINE, 0));
  });

  it('ignores the whitespace around a line (a CRLF file and an LF file give the same ids)', () => {
    expect(importedEventId('example.com', `  ${LINE}\r`, 0)).toBe(importedEventId('example.com', LINE, 0));
  });

  it('tells imported ids from the random v4 ids of live events', () => {
    for (let i = 0; i < 100; i++) expect(isImportedEventId(randomUUID())).toBe(false);
  });
});

describe('parseImportLine and the clock', () => {
  const at = Date.parse('2025-06-01T14:00:00Z');
  it.each([
    ['a line stamped before the clock', at + 1, true],
    ['a line stamped at the clock', at, true],
    ['a line stamped after the clock', at - 1, false],
    ['no clock given', undefined, true],
  ])('%s', (_case, now, accepted) => {
    const parse = () => parseImportLine(LINE, 3, 'example.com', now);
    if (accepted) expect(parse().request.now).toBe(at);
    else
      expect(parse).toThrow(
        new ImportLineError(3, 'ts: 2025-06-01T14:00:00Z is later than now (an import holds past events)'),
      );
  });
});
