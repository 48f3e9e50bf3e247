import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { DynamoVisitStore } from '../../lambdas/adapters/dynamo/visit-store.js';
import { readRollups } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { sessionizeBatch, type SessionizeDeps } from '../../lambdas/services/sessionize.js';
import { DIMENSION_VALUES, NONE, RollupDeltas, exitPageOf } from '../../lambdas/domain/rollup.js';
import { buildVisits, visitEventOf } from '../../lambdas/domain/visit.js';
import type { TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import { memoryTable } from '../support/dynamo.js';
import { trackedEvent } from '../support/events.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 2, 10, 9, 0); // 10:00 in Europe/Berlin
const DAY = '2026-03-10';
const NEW_DIMENSIONS = ['utm_source', 'utm_medium', 'utm_content', 'exit_page'] as const;
type NewDimension = (typeof NEW_DIMENSIONS)[number];

/** One event `minutes` after T0 on visitor a's visit; the id names the minute, the type and the path. */
function ev(minutes: number, overrides: Partial<TrackedEvent> = {}): TrackedEvent {
  return trackedEvent({
    ts: T0 + minutes * MIN,
    event_id: `e${minutes}-${overrides.visitor_id ?? 'a'}-${overrides.type ?? 'pageview'}-${overrides.path ?? '/'}`,
    visitor_id: 'visitor-a',
    ...overrides,
  });
}

const UTM = { utm_source: 'newsletter', utm_medium: 'email', utm_content: 'header-link' };
const HOSTILE = { utm_source: '__proto__', utm_medium: 'constructor', utm_content: 'toString' };

/**
 * Batches of events sessionized in turn, and the day's visits per value of
 * each new dimension afterwards (values at 0 left out; `NONE` is `(none)`).
 */
const CASES: Array<{
  name: string;
  batches: TrackedEvent[][];
  expected: Record<NewDimension, Record<string, number>>;
}> = [
  {
    name: 'UTM fields of the first event, exit page the last page view',
    batches: [[ev(0, { path: '/', ...UTM }), ev(5, { path: '/pricing', utm_source: 'other' })]],
    expected: {
      utm_source: { newsletter: 1 },
      utm_medium: { email: 1 },
      utm_content: { 'header-link': 1 },
      exit_page: { '/pricing': 1 },
    },
  },
  {
    name: 'a visit without UTM is (none); a goal after the last page view leaves the exit page',
    batches: [[ev(0, { path: '/' }), ev(3, { path: '/a' }), ev(4, { type: 'goal', goal: 'Signup', path: '/b' })]],
    expected: {
      utm_source: { [NONE]: 1 },
      utm_medium: { [NONE]: 1 },
      utm_content: { [NONE]: 1 },
      exit_page: { '/a': 1 },
    },
  },
  {
    name: 'a visit of goals only has no exit page',
    batches: [[ev(0, { type: 'goal', goal: 'Signup', path: '/x' })]],
    expected: {
      utm_source: { [NONE]: 1 },
      utm_medium: { [NONE]: 1 },
      utm_content: { [NONE]: 1 },
      exit_page: { [NONE]: 1 },
    },
  },
  {
    name: 'the exit page moves when a later batch extends the visit: −1 for the old one, +1 for the new',
    batches: [
      [ev(0, { path: '/', ...UTM }), ev(5, { path: '/a' })],
      [ev(10, { path: '/b' })],
      [ev(12, { path: '/c' })],
    ],
    expected: {
      utm_source: { newsletter: 1 },
      utm_medium: { email: 1 },
      utm_content: { 'header-link': 1 },
      exit_page: { '/c': 1 },
    },
  },
  {
    name: 'a late event before the last one changes no exit page',
    batches: [[ev(0, { path: '/' }), ev(10, { path: '/end' })], [ev(5, { path: '/middle' })]],
    expected: {
      utm_source: { [NONE]: 1 },
      utm_medium: { [NONE]: 1 },
      utm_content: { [NONE]: 1 },
      exit_page: { '/end': 1 },
    },
  },
  {
    name: 'a late first event brings its UTM fields to the visit',
    batches: [[ev(10, { path: '/b' })], [ev(0, { path: '/a', ...UTM })]],
    expected: {
      utm_source: { newsletter: 1 },
      utm_medium: { email: 1 },
      utm_content: { 'header-link': 1 },
      exit_page: { '/b': 1 },
    },
  },
  {
    name: 'two visits merged by a late event across batches count once, on the last page',
    batches: [[ev(0, { path: '/' }), ev(40, { path: '/z' })], [ev(20, { path: '/late' })]],
    expected: {
      utm_source: { [NONE]: 1 },
      utm_medium: { [NONE]: 1 },
      utm_content: { [NONE]: 1 },
      exit_page: { '/z': 1 },
    },
  },
  {
    name: 'hostile values are values like any other',
    batches: [[ev(0, { path: '/', ...HOSTILE }), ev(1, { path: '/__proto__' })], [ev(2, { path: '/constructor' })]],
    expected: {
      utm_source: { ['__proto__']: 1 },
      utm_medium: { constructor: 1 },
      utm_content: { toString: 1 },
      exit_page: { '/constructor': 1 },
    },
  },
];

describe('the UTM and exit-page dimensions, sessionized against dynalite', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  let deps: SessionizeDeps;
  let seq = 0;

  beforeAll(async () => {
    ({ conn, close } = await memoryTable(
      CASES.map((_, i) => ({ domain: `s${i}.example`, timezone: 'Europe/Berlin' })),
    ));
    deps = {
      sites: new DynamoConfigStore(conn),
      visits: new DynamoVisitStore(conn),
      rollups: new DynamoRollupStore(conn),
    };
  });
  afterAll(async () => close());

  /** The day's and the month's visits per value, values at 0 left out (a value back at 0 stays stored). */
  async function counts(domain: string, metric: NewDimension, granularity: 'D' | 'M') {
    const period = granularity === 'D' ? DAY : DAY.slice(0, 7);
    const items = await readRollups(conn, domain, metric, granularity, period, period);
    const out = new Map<string, number>();
    for (const item of items)
      for (const [value, n] of Object.entries(item.counts)) out.set(value, (out.get(value) ?? 0) + n);
    return Object.fromEntries([...out].filter(([, n]) => n !== 0));
  }

  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s', async (_name, { batches, expected }, i) => {
    const domain = `s${i}.example`;
    for (const batch of batches) {
      const sequence = String(++seq * 100);
      await sessionizeBatch(
        deps,
        { shard: 'shard-1', sequence },
        batch.map((e) => ({ sequenceNumber: sequence, data: Buffer.from(JSON.stringify({ ...e, site: domain })) })),
      );
    }
    for (const d of NEW_DIMENSIONS) {
      expect(await counts(domain, d, 'D'), `${d} by day`).toEqual(expected[d]);
      expect(await counts(domain, d, 'M'), `${d} by month`).toEqual(expected[d]);
    }
  });
});

describe('exitPageOf and the deltas of a grown visit', () => {
  const visitOf = (events: TrackedEvent[]) => {
    const [visit] = buildVisits('example.com', 'visitor-a', events.map(visitEventOf));
    if (!visit) throw new Error('no visit');
    return visit;
  };

  it('takes back the old exit page and counts the new one, leaving the other dimensions unchanged', () => {
    const before = visitOf([ev(0, { path: '/', ...UTM }), ev(5, { path: '/a' })]);
    const after = visitOf([ev(0, { path: '/', ...UTM }), ev(5, { path: '/a' }), ev(6, { path: '/b' })]);
    expect([exitPageOf(before), exitPageOf(after)]).toEqual(['/a', '/b']);
    const deltas = new RollupDeltas();
    deltas.addVisit(before, 'UTC', -1);
    deltas.addVisit(after, 'UTC', 1);
    const days = deltas.list().filter((d) => d.key.granularity === 'D' && d.key.metric !== 'visits');
    const changed = days.flatMap((d) =>
      [...d.values].filter(([, n]) => n !== 0).map(([v, n]) => `${d.key.metric}:${v}:${n}`),
    );
    expect(changed.sort()).toEqual(['exit_page:/a:-1', 'exit_page:/b:1', 'page:/b:1']);
  });

  it('reads the UTM fields from the visit attributes', () => {
    const visit = visitOf([ev(0, { path: '/', ...HOSTILE })]);
    expect(NEW_DIMENSIONS.map((d) => DIMENSION_VALUES[d](visit))).toEqual([
      ['__proto__'],
      ['constructor'],
      ['toString'],
      ['/'],
    ]);
  });
});
