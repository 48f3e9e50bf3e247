import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { api } from '../api.js';
import { formatCount } from '../format.js';
import { useData } from '../use-data.js';

/** How often the indicator asks again, ms: realtime is itself up to the sessionizer's batching window late (docs/api.md "Realtime"). */
export const REALTIME_REFRESH_MS = 30_000;

/**
 * "N current visitors" (an event in the last 5 minutes, docs/api.md
 * "Realtime"), asked again every `REALTIME_REFRESH_MS` while the page is
 * open; its title lists their top pages and referrers.
 */
export function RealtimeIndicator(props: { domain: string }): JSX.Element | null {
  const data = useData(() => api.realtime(props.domain), props.domain);
  const { reload } = data;
  useEffect(() => {
    const timer = setInterval(reload, REALTIME_REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);
  if (!data.data) return null;
  const r = data.data;
  const title = [
    'Visitors with an event in the last 5 minutes',
    ...r.pages.map((p) => `${p.page}: ${formatCount(p.visitors)}`),
    ...r.referrers.map((x) => `from ${x.referrer ?? 'Direct / none'}: ${formatCount(x.visitors)}`),
  ].join('\n');
  return (
    <span class="realtime" data-realtime={r.visitors} title={title} aria-live="polite">
      <span class={r.visitors > 0 ? 'realtime-dot live' : 'realtime-dot'} aria-hidden="true" />
      {formatCount(r.visitors)} current {r.visitors === 1 ? 'visitor' : 'visitors'}
    </span>
  );
}
