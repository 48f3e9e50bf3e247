/** `docs/ingestion.md` "The event's fields": goal names are trimmed and cut to 64 bytes. */
export const MAX_GOAL_NAME_BYTES = 64;

/**
 * Trims a goal name and cuts it to at most 64 UTF-8 bytes without splitting a
 * character. Returns null for a missing or blank name (such goals are dropped, `docs/ingestion.md` "Silent drops").
 */
export function normalizeGoalName(name: string | null | undefined): string | null {
  const trimmed = name?.trim();
  if (!trimmed) return null;
  const bytes = Buffer.from(trimmed, 'utf8');
  if (bytes.length <= MAX_GOAL_NAME_BYTES) return trimmed;
  // Back off to a character boundary: UTF-8 continuation bytes are 0b10xxxxxx.
  let end = MAX_GOAL_NAME_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8').trim() || null;
}
