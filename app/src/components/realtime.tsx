import type { JSX } from 'preact';
import type { Realtime } from '../api.js';
import { formatCount, formatTime, plural } from '../format.js';

/**
 * How often the dashboard asks the realtime report again, ms, while the tab
 * is visible: the view changes at most this long after the API knows
 * (docs/api.md "Realtime"); its price is in docs/cost.md ("A dashboard left
 * open").
 */
export const REALTIME_REFRESH_MS = 5_000;

/**
 * "N current visitors" (an event in the last 5 minutes, docs/api.md
 * "Realtime"): a button that opens and closes the realtime view.
 */
export function RealtimeIndicator(props: {
  data: Realtime | undefined;
  open: boolean;
  toggle(): void;
  /** Whether the page is filtered: realtime is not (`UNFILTERED_REALTIME`), so the indicator says "all". */
  filtered?: boolean;
}): JSX.Element | null {
  const r = props.data;
  if (!r) return null;
  return (
    <button
      type="button"
      class="realtime"
      data-realtime={r.visitors}
      aria-expanded={props.open}
      aria-controls="realtime-view"
      onClick={props.toggle}
      title={props.filtered ? UNFILTERED_REALTIME : undefined}
      data-realtime-unfiltered={props.filtered ? '' : undefined}
    >
      <span class={r.visitors > 0 ? 'realtime-dot live' : 'realtime-dot'} aria-hidden="true" />
      <span aria-live="polite">
        {formatCount(r.visitors)} current {r.visitors === 1 ? 'visitor' : 'visitors'}
        {props.filtered ? ' (all, unfiltered)' : ''}
      </span>
    </button>
  );
}

/**
 * Why realtime ignores the dashboard's filters (`docs/api.md` "Realtime"): its items keep, per current
 * visitor, the referrer and the pages and goals of the last minutes, not the visit's channel, country,
 * device, campaign or properties, so a filtered count could not be exact.
 */
export const UNFILTERED_REALTIME =
  "Current visitors are every visitor on the site, whatever the filters: the live counts do not keep the visits' channel, location, device, campaign or properties to filter by.";

/** The realtime view (Plausible's): current visitors, the pages they are on, where they came from and the goals they completed, as of the API's `as_of`. */
export function RealtimeView(props: { data: Realtime; filtered?: boolean }): JSX.Element {
  const r = props.data;
  return (
    <section class="card realtime-view" id="realtime-view" aria-label="Realtime" data-realtime-view={r.visitors}>
      <header class="card-head">
        <h2>Realtime</h2>
        <span class="muted small">
          {plural(r.visitors, 'visitor')} with an event in the last {Math.round(r.window_seconds / 60)} minutes · as of{' '}
          {formatTime(r.as_of)}
        </span>
      </header>
      {props.filtered ? (
        <p class="muted small" role="note" data-realtime-unfiltered>
          {UNFILTERED_REALTIME}
        </p>
      ) : null}
      <div class="realtime-lists">
        <RealtimeList title="Pages" head="Page" rows={r.pages.map((p) => [p.page, p.visitors])} />
        <RealtimeList
          title="Sources"
          head="Referrer"
          rows={r.referrers.map((x) => [x.referrer ?? 'Direct / none', x.visitors])}
        />
        <RealtimeList title="Goals" head="Goal" rows={r.goals.map((g) => [g.goal, g.visitors])} />
      </div>
    </section>
  );
}

function RealtimeList(props: { title: string; head: string; rows: Array<[string, number]> }): JSX.Element {
  return (
    <div>
      <h3>{props.title}</h3>
      {props.rows.length === 0 ? (
        <p class="muted small">None right now.</p>
      ) : (
        <table class="breakdown" data-realtime-list={props.title.toLowerCase()}>
          <thead>
            <tr>
              <th scope="col">{props.head}</th>
              <th scope="col" class="num">
                Visitors
              </th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map(([label, n]) => (
              <tr key={label} data-key={label}>
                <th scope="row" class="key">
                  <span class="label">{label}</span>
                </th>
                <td class="num" data-col="visitors">
                  {formatCount(n)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
