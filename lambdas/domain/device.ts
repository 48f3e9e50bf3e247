import type { Device } from './tracked-event.js';

/**
 * Screen-width classes of `docs/ingestion.md` "The event's fields" (`w`): below 768 CSS px `Mobile`, below
 * 1024 `Tablet`, otherwise `Desktop`. Checked in order; the first `below`
 * bound the width is under wins.
 */
export const DEVICE_WIDTHS: ReadonlyArray<{ below: number; device: Device }> = [
  { below: 768, device: 'Mobile' },
  { below: 1024, device: 'Tablet' },
  { below: Infinity, device: 'Desktop' },
];

/**
 * Device class from the screen width `w` in CSS pixels (`docs/ingestion.md` "The event's fields").
 * Missing → `Unknown`. A value that is no width at all (negative, NaN,
 * ±Infinity) is also `Unknown` rather than a guess; 0 is a width below 768
 * and so, by the letter of the rule, `Mobile`.
 */
export function deviceFromWidth(w: number | null | undefined): Device {
  if (w === null || w === undefined || !Number.isFinite(w) || w < 0) return 'Unknown';
  return DEVICE_WIDTHS.find(({ below }) => w < below)?.device ?? 'Desktop';
}
