import { toSequenceNumber, type LocalStreamRecord } from '../../lambdas/adapters/local-stream.js';
import { encodeEvent, partitionKey } from '../../lambdas/adapters/stream-record.js';
import { archiveDt } from '../../lambdas/domain/archive-schema.js';
import { TRACKED_EVENT_COLUMNS, type TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { trackedEvent } from '../support/events.js';
import { propsJson, repairProps } from '../../lambdas/domain/props.js';

const at = (iso: string) => Date.parse(iso);
const google = { channel: 'Search', source: 'Google', referrer_host: 'www.google.com' };
const hn = { channel: 'Communities', source: 'Hacker News', referrer_host: 'news.ycombinator.com' };
const paid = {
  channel: 'Paid',
  source: 'Google',
  referrer_host: 'www.google.com',
  click_ids: 'gclid',
  utm_medium: 'cpc',
};
const github = 'https://github.com/footfall/footfall';

/**
 * Two sites, UTC days 2026-01-14 and 2026-01-15 (with events at 23:59:59.999Z
 * and 00:00:00.000Z), plus one example.com event in February, outside the
 * named queries' January range. The counts the named-query test expects are
 * worked out from this list in its comments.
 */
export const DATASET: TrackedEvent[] = [
  // visitor-0001 on example.com: lands from Google just before midnight UTC, clicks out just after it.
  trackedEvent({ event_id: 'a1', ts: at('2026-01-14T23:59:59.999Z'), path: '/', ...google }),
  trackedEvent({
    event_id: 'a2',
    ts: at('2026-01-15T00:00:00.000Z'),
    type: 'goal',
    goal: 'Outbound Link: Click',
    link: github,
    channel: 'Direct',
  }),
  trackedEvent({ event_id: 'a3', ts: at('2026-01-15T00:05:00.000Z'), path: '/pricing', channel: 'Direct' }),
  trackedEvent({ event_id: 'a4', ts: at('2026-01-15T00:10:00.000Z'), path: '/', channel: 'Direct' }),
  // A hashed visitor from Hacker News on a phone, with every optional field set.
  trackedEvent({
    event_id: 'b1',
    ts: at('2026-01-15T10:00:00.000Z'),
    visitor_id: 'hash-00000002',
    visitor_kind: 'hash',
    hostname: 'www.example.com',
    path: '/',
    ...hn,
    utm_source: 'hn',
    utm_medium: 'social',
    utm_campaign: 'launch',
    utm_term: 'analytics',
    utm_content: 'show-hn',
    country: 'US',
    language: 'en-US',
    browser: 'Mobile Safari',
    browser_version: '17.2',
    os: 'iOS',
    os_version: '17.2',
    device: 'Mobile',
    screen_width: 390,
    // Custom properties as the endpoint keeps them: a hostile key, quotes and non-ASCII text are data.
    props: propsJson(repairProps(JSON.parse('{"plan":"pro","__proto__":"x","a \\"q\\"":"ü€","seats":3}'))),
  }),
  trackedEvent({
    event_id: 'b2',
    ts: at('2026-01-15T10:01:00.000Z'),
    visitor_id: 'hash-00000002',
    visitor_kind: 'hash',
    type: 'goal',
    goal: 'signup',
    path: '/pricing',
    ...hn,
  }),
  // visitor-0003 from a paid Google ad, with nothing known about the device.
  trackedEvent({
    event_id: 'c1',
    ts: at('2026-01-14T08:00:00.000Z'),
    visitor_id: 'visitor-0003',
    path: '/pricing',
    ...paid,
    country: null,
    language: null,
    browser: null,
    browser_version: null,
    os: null,
    os_version: null,
    device: 'Unknown',
    screen_width: null,
  }),
  trackedEvent({
    event_id: 'c2',
    ts: at('2026-01-14T08:00:30.000Z'),
    visitor_id: 'visitor-0003',
    type: 'goal',
    goal: 'Outbound Link: Click',
    link: github,
    path: '/pricing',
    ...paid,
  }),
  trackedEvent({
    event_id: 'c3',
    ts: at('2026-01-14T08:01:00.000Z'),
    visitor_id: 'visitor-0003',
    type: 'goal',
    goal: 'Outbound Link: Click',
    link: 'https://x.com/footfall',
    path: '/pricing',
    ...paid,
  }),
  // Outside January: no named query (range 2026-01-01 … 2026-01-31) may count it.
  trackedEvent({ event_id: 'd1', ts: at('2026-02-01T00:00:00.000Z'), visitor_id: 'visitor-0004', path: '/' }),
  // The same visitor id on another site: never counted for example.com.
  trackedEvent({
    event_id: 's1',
    site: 'shop.example.org',
    hostname: 'shop.example.org',
    ts: at('2026-01-14T12:00:00.000Z'),
    path: '/',
    ...google,
  }),
  trackedEvent({
    event_id: 's2',
    site: 'shop.example.org',
    hostname: 'shop.example.org',
    ts: at('2026-01-15T00:00:00.000Z'),
    type: 'goal',
    goal: 'signup',
    path: '/checkout',
    ...google,
  }),
];

/** Stream records of `events`, in the shape the poller hands over; sequence numbers start at `firstOffset`. */
export function recordsOf(events: readonly TrackedEvent[], firstOffset = 0): LocalStreamRecord[] {
  return events.map((event, i) => ({
    sequenceNumber: toSequenceNumber(firstOffset + i * 1000),
    partitionKey: partitionKey(event),
    approximateArrivalTimestamp: event.ts,
    data: encodeEvent(event),
  }));
}

/** A record with arbitrary data (bad JSON, not an event, …). */
export function rawRecord(data: string, offset: number): LocalStreamRecord {
  return {
    sequenceNumber: toSequenceNumber(offset),
    partitionKey: 'x',
    approximateArrivalTimestamp: 0,
    data: Buffer.from(data, 'utf8'),
  };
}

/** The row `SELECT * FROM events` should return for `event`: every archive column, then site and dt. */
export function expectedRow(event: TrackedEvent): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const { name } of TRACKED_EVENT_COLUMNS)
    row[name] = name === 'ts' ? new Date(event.ts).toISOString() : event[name];
  row.site = event.site;
  row.dt = archiveDt(event.ts);
  return row;
}

/** `runSql`'s result as row objects. */
export function rowObjects(result: { columns: string[]; rows: unknown[][] }): Record<string, unknown>[] {
  return result.rows.map((row) => Object.fromEntries(result.columns.map((c, i) => [c, row[i]])));
}
