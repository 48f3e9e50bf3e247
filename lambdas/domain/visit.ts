import type { Device, TrackedEvent } from './tracked-event.js';

/** A visit ends after 30 minutes without an event (`docs/architecture.md` "Visits"). */
export const VISIT_GAP_MS = 30 * 60 * 1000;
/** The goal name of outbound link clicks (`docs/tracking.md` "Outbound links"); the visit's exit link is the last one. */
export const OUTBOUND_GOAL = 'Outbound Link: Click';

/** What a visit takes from its first event (`docs/architecture.md` "Visits"). */
export interface VisitAttributes {
  channel: string;
  referrer_host: string | null;
  source: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  country: string | null;
  device: Device;
  browser: string | null;
  os: string | null;
  language: string | null;
}

/** One event as a visit keeps it. `attrs` is kept for the visit's first event only. */
export interface VisitEvent {
  id: string;
  /** ms since epoch, UTC */
  ts: number;
  type: 'pageview' | 'goal';
  path: string;
  goal: string | null;
  link: string | null;
  attrs?: VisitAttributes;
  /** The event's custom properties, the archive's `props` JSON text; absent when it has none. */
  props?: string;
}

/** A visit: one visitor's events on one site with gaps under 30 minutes. */
export interface Visit {
  id: string;
  site: string;
  visitor_id: string;
  /** First and last event time, ms since epoch. */
  start: number;
  end: number;
  /** Path of the first event. */
  landing_page: string;
  attrs: VisitAttributes;
  /** Events in time order (ties by id), each once. */
  events: VisitEvent[];
}

/** The attributes a visit takes from an enriched event. */
export function attributesOf(e: TrackedEvent): VisitAttributes {
  return {
    channel: e.channel,
    referrer_host: e.referrer_host,
    source: e.source,
    utm_source: e.utm_source,
    utm_medium: e.utm_medium,
    utm_campaign: e.utm_campaign,
    utm_term: e.utm_term,
    utm_content: e.utm_content,
    country: e.country,
    device: e.device,
    browser: e.browser,
    os: e.os,
    language: e.language,
  };
}

/** An enriched event as a visit keeps it. */
export function visitEventOf(e: TrackedEvent): VisitEvent {
  return {
    id: e.event_id,
    ts: e.ts,
    type: e.type,
    path: e.path,
    goal: e.goal,
    link: e.link,
    attrs: attributesOf(e),
    ...(e.props === null ? {} : { props: e.props }),
  };
}

/**
 * A visit's id is its first event's id: unique (a random UUID given at
 * ingestion) and a function of the visit's events, so recomputing the same
 * visit (a retried batch) gives the same id.
 */
export const visitId = (firstEventId: string): string => firstEventId;

const byTime = (a: VisitEvent, b: VisitEvent) => a.ts - b.ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Groups one visitor's events into visits (gaps under `VISIT_GAP_MS`).
 *
 * Events may come in any order and more than once (the same `id` is kept
 * once), so late and replayed events land in the right visit. Each visit takes
 * its attributes from its first event; callers keep `attrs` on every event
 * that could be first (new events and the first event of stored visits).
 *
 * @param events events of one visitor on one site
 * @returns visits in time order
 */
export function buildVisits(site: string, visitorId: string, events: readonly VisitEvent[]): Visit[] {
  const unique = new Map<string, VisitEvent>();
  for (const e of events) {
    const seen = unique.get(e.id);
    if (!seen || (!seen.attrs && e.attrs)) unique.set(e.id, e);
  }
  const sorted = [...unique.values()].sort(byTime);
  const visits: Visit[] = [];
  let group: VisitEvent[] = [];
  const close = () => {
    const first = group[0];
    if (!first) return;
    const attrs = group.find((e) => e.attrs)?.attrs;
    if (!attrs) throw new Error(`visit of ${visitorId} has no event with attributes`);
    visits.push({
      id: visitId(first.id),
      site,
      visitor_id: visitorId,
      start: first.ts,
      end: group[group.length - 1]?.ts ?? first.ts,
      landing_page: first.path,
      attrs,
      // Only the first event keeps its attributes: they are what the visit shows.
      events: group.map((e, i) => (i === 0 ? e : stripAttrs(e))),
    });
    group = [];
  };
  for (const e of sorted) {
    const last = group[group.length - 1];
    if (last && e.ts - last.ts >= VISIT_GAP_MS) close();
    group.push(e);
  }
  close();
  return visits;
}

function stripAttrs(e: VisitEvent): VisitEvent {
  if (!e.attrs) return e;
  const { attrs: _attrs, ...rest } = e;
  return rest;
}

/** Page views of a visit. */
export const pageviewsOf = (visit: Visit): number =>
  visit.events.reduce((n, e) => n + (e.type === 'pageview' ? 1 : 0), 0);

/** True when two computations of a visit are the same (same id and the same events). */
export function sameVisit(a: Visit, b: Visit): boolean {
  return (
    a.id === b.id &&
    a.start === b.start &&
    a.end === b.end &&
    a.events.length === b.events.length &&
    a.events.every((e, i) => e.id === b.events[i]?.id)
  );
}
