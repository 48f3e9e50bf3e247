import { describe, expect, it } from 'vitest';
import { normalizeGoalName } from '../../lambdas/domain/goal-name.js';

describe('normalizeGoalName: trimmed, cut to 64 bytes', () => {
  it.each([
    ['signup', 'signup'],
    ['  signup  ', 'signup'],
    ['', null],
    ['   ', null],
    [null, null],
    [undefined, null],
    ['a'.repeat(64), 'a'.repeat(64)],
    ['a'.repeat(65), 'a'.repeat(64)],
    // 21 three-byte characters are 63 bytes; the 22nd would cross 64, so it goes whole.
    ['€'.repeat(30), '€'.repeat(21)],
    // A four-byte emoji straddling byte 64 is dropped, not split.
    [`${'a'.repeat(62)}😀`, 'a'.repeat(62)],
  ])('%j → %j', (input, expected) => {
    const result = normalizeGoalName(input);
    expect(result).toBe(expected);
    if (result) expect(Buffer.byteLength(result)).toBeLessThanOrEqual(64);
  });
});
