/**
 * `start` of a time-series point (site-local `YYYY-MM-DD`, `YYYY-MM` or
 * `YYYY-MM-DDTHH:00`) as seconds on a UTC axis: the chart draws local times
 * as they are, never shifted into the viewer's timezone.
 */
export function pointSeconds(start: string): number {
  const [date, hour] = start.split('T');
  const [y, m, d] = (date ?? '').split('-').map(Number);
  return Date.UTC(y ?? 1970, (m ?? 1) - 1, d ?? 1, hour ? Number(hour.slice(0, 2)) : 0) / 1000;
}
