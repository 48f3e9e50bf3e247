import { createHash } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoReportStore } from '../../lambdas/adapters/dynamo/report-store.js';
import { DynamoRollupStore } from '../../lambdas/adapters/dynamo/rollup-store.js';
import { itemBytes } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { VISIT_DICTIONARY, decodeHead } from '../../lambdas/adapters/dynamo/visit-codec.js';
import {
  assembleVisits,
  CHUNK_BYTES,
  DynamoVisitStore,
  eventsOfItem,
  visitToItems,
} from '../../lambdas/adapters/dynamo/visit-store.js';
import { DEVICES, type TrackedEvent } from '../../lambdas/domain/tracked-event.js';
import {
  buildVisits,
  visitEventOf,
  type Visit,
  type VisitAttributes,
  type VisitEvent,
} from '../../lambdas/domain/visit.js';
import { sessionizeBatch } from '../../lambdas/services/sessionize.js';
import { memoryTable, scanAll } from '../support/dynamo.js';
import { form0VisitItems } from '../../bench/storage.js';
import { trackedEvent } from '../support/events.js';

const SITE = 'example.com';

const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
/** Any text, '#', quotes and non-ASCII included (ids and paths are free text up to the schema's limits). */
const text = (max: number) =>
  fc.string({
    unit: fc.constantFrom('a', 'Z', '0', '#', '/', '"', '\\', 'é', '😀', '-', ' '),
    minLength: 1,
    maxLength: max,
  });
const attrsArb: fc.Arbitrary<VisitAttributes> = fc.record({
  channel: fc.constantFrom('Direct', 'Search', 'Referral', 'Paid'),
  referrer_host: nullable(text(30)),
  source: nullable(text(20)),
  utm_source: nullable(text(20)),
  utm_medium: nullable(text(20)),
  utm_campaign: nullable(text(20)),
  utm_term: nullable(text(20)),
  utm_content: nullable(text(20)),
  country: nullable(fc.constantFrom('DE', 'US', 'JP')),
  device: fc.constantFrom(...DEVICES),
  browser: nullable(text(12)),
  os: nullable(text(12)),
  language: nullable(fc.constantFrom('en', 'de', 'pt-BR')),
});
/** One visitor's events: ids unique, times close enough to make long visits, sometimes long paths (chunks). */
const eventsArb = fc
  .array(
    fc.record({
      id: text(64),
      dt: fc.integer({ min: 0, max: 40 * 60_000 }),
      goal: nullable(text(40)),
      path: fc.oneof(text(40), text(600)),
      link: nullable(text(80)),
      attrs: attrsArb,
    }),
    { minLength: 1, maxLength: 120 },
  )
  .map((list) => {
    let ts = Date.UTC(2026, 2, 1);
    const seen = new Set<string>();
    return list
      .filter((e) => !seen.has(e.id) && seen.add(e.id))
      .map((e): VisitEvent => {
        ts += e.dt;
        return {
          id: e.id,
          ts,
          type: e.goal === null ? 'pageview' : 'goal',
          path: e.path,
          goal: e.goal,
          link: e.link,
          attrs: e.attrs,
        };
      });
  });

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);

describe('VISIT items, form 1 (compressed compact rows) and form 0 (JSON rows)', () => {
  it('reads utm_content as null from items written before it was kept, in either form', () => {
    const sk = `V#${String(Date.UTC(2026, 2, 10)).padStart(13, '0')}#visit-1`;
    // Form 1 then: the 12 attributes up to `language`, the last one set so no trailing null hides the length.
    const before = ['Search', 'google.com', 'Google', 'google', 'cpc', 'spring', 'shoes', 'DE', 'Desktop', 'Chrome'];
    const z = deflateRawSync(JSON.stringify([[...before, 'macOS', 'de'], [[0, 0, '/']]]), {
      dictionary: VISIT_DICTIONARY,
    });
    expect(decodeHead({ end: 0, z }, sk).attrs).toMatchObject({
      utm_campaign: 'spring',
      language: 'de',
      utm_content: null,
    });
    const items = form0VisitItems(buildVisits(SITE, 'visitor-0001', [visitEventOf(trackedEvent({}))])[0] as Visit);
    const head = items.find((i) => 'attrs' in i);
    const { utm_content: _gone, ...attrs } = (head as { attrs: VisitAttributes }).attrs;
    const form0 = decodeHead({ ...head, attrs }, String((head as { sk: string }).sk));
    expect(form0.attrs.utm_content).toBeNull();
    expect(Object.keys(form0.attrs).sort()).toEqual(Object.keys((head as { attrs: VisitAttributes }).attrs).sort());
  });

  it('reads back any visit exactly from its form-1 items, and from its form-0 items', () => {
    console.log(`visit-codec round trip: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    fc.assert(
      fc.property(
        eventsArb,
        fc.constantFrom('visitor-0001', 'h-0123456789abcdef', 'a#b-visitor'),
        (events, visitor) => {
          const visits = buildVisits(SITE, visitor, events);
          const compact = visits.flatMap(visitToItems);
          const legacy = visits.flatMap((v) => form0VisitItems(v));
          expect(assembleVisits(compact, SITE, visitor)).toEqual(visits);
          expect(assembleVisits(legacy, SITE, visitor)).toEqual(visits);
          // In any order, mixed forms, and item by item (the bench's scan).
          expect(assembleVisits([...compact].reverse(), SITE, visitor)).toEqual(visits);
          const mixed = visits.flatMap((v, i) => (i % 2 === 0 ? visitToItems(v) : form0VisitItems(v)));
          expect(assembleVisits(mixed, SITE, visitor)).toEqual(visits);
          for (const items of [compact, legacy]) {
            expect(
              items
                .flatMap(eventsOfItem)
                .map((e) => e.id)
                .sort(),
            ).toEqual(visits.flatMap((v) => v.events.map((e) => e.id)).sort());
          }
          // Chunk bound: form-1 chunks are at most CHUNK_BYTES of rows, compressed (DEFLATE adds at most a few bytes to incompressible data).
          for (const item of compact)
            if (item.type === 'VISIT_CHUNK') expect(itemBytes(item)).toBeLessThanOrEqual(CHUNK_BYTES * 1.5 + 200);
        },
      ),
      { seed, numRuns: 150, endOnFailure: true },
    );
  });

  it('keeps the landing page of a visit whose first event is in a chunk', () => {
    const events = Array.from({ length: 200 }, (_, i): VisitEvent => ({
      id: `e-${i}`,
      ts: 1_000 + i * 1000,
      type: 'pageview',
      path: `/landing-${i}-${'x'.repeat(30)}`,
      goal: null,
      link: null,
      attrs: i === 0 ? visitEventOf(trackedEvent()).attrs : undefined,
    }));
    const [visit] = buildVisits(SITE, 'v-long', events);
    const items = visitToItems(visit as Visit);
    expect(items.length).toBeGreaterThan(3);
    // The VISIT item alone (a reader that meets it before its chunks, or after they are deleted) still names the landing page.
    expect(assembleVisits([items[0] as Record<string, unknown>], SITE, 'v-long')[0]?.landing_page).toBe(
      '/landing-0-' + 'x'.repeat(30),
    );
  });

  it('stores a typical visit in under half the bytes of form 0', () => {
    const first = trackedEvent({
      event_id: 'a3f1c6e2-5b7d-4e8a-9c0b-1d2e3f4a5b6c',
      channel: 'Search',
      referrer_host: 'google.com',
      path: '/pricing',
    });
    const second = trackedEvent({
      event_id: '0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f',
      ts: first.ts + 95_000,
      path: '/signup',
      type: 'goal',
      goal: 'Signup',
    });
    const [visit] = buildVisits(SITE, 'visitor-0001', [first, second].map(visitEventOf));
    const size = (items: Array<Record<string, unknown>>) =>
      items.reduce(
        (n, i) => n + Object.entries(i).reduce((m, [k, v]) => m + Buffer.byteLength(k) + itemBytes(v), 100),
        0,
      );
    const compact = size(visitToItems(visit as Visit));
    const legacy = size(form0VisitItems(visit as Visit));
    expect(compact).toBeLessThan(legacy / 2 + 100);
  });

  it('keeps its preset dictionary for ever (items written with it are read with it)', () => {
    expect(createHash('sha256').update(VISIT_DICTIONARY).digest('hex')).toBe(PINNED_DICTIONARY_HASH);
  });
});

/** sha256 of `VISIT_DICTIONARY` as first shipped: a change breaks every form-1 item already stored. */
const PINNED_DICTIONARY_HASH = 'aed9ddfa7f9651599b4f106e1866934d571ff898b57507aa9018c68ee27a19c2';

describe('a table holding form-0 visits', () => {
  let conn: DynamoConnection;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ conn, close } = await memoryTable([{ domain: SITE, timezone: 'Europe/Berlin' }]));
  });
  afterEach(async () => close());

  const put = async (items: Array<Record<string, unknown>>) => {
    for (let i = 0; i < items.length; i += 25)
      await conn.doc.send(
        new BatchWriteCommand({
          RequestItems: { [conn.table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
  };
  const stream = (visitor: string, count: number, from = 0): TrackedEvent[] =>
    Array.from({ length: count }, (_, i) =>
      trackedEvent({
        event_id: `${visitor}-${String(from + i).padStart(5, '0')}-${'u'.repeat(24)}`,
        visitor_id: visitor,
        ts: Date.UTC(2026, 2, 10, 9) + (from + i) * 20_000,
        path: `/p/${from + i}`,
      }),
    );

  it('reads them through every reader, and a batch that extends one rewrites it in form 1 without losing an event', async () => {
    const events = stream('visitor-long', 150);
    const [visit] = buildVisits(SITE, 'visitor-long', events.map(visitEventOf));
    const old = form0VisitItems(visit as Visit);
    expect(old.length).toBeGreaterThan(3);
    await put(old);
    const visits = new DynamoVisitStore(conn);
    expect(await visits.visitsAround(SITE, 'visitor-long', 0, Number.MAX_SAFE_INTEGER)).toEqual([visit]);
    expect(await visits.firstVisit(SITE, 'visitor-long')).toEqual(visit);
    expect((await new DynamoReportStore(conn).visitor(SITE, 'visitor-long')).visits).toEqual([visit]);

    // The sessionizer appends 10 events to the form-0 visit.
    const more = stream('visitor-long', 10, 150);
    await sessionizeBatch(
      { sites: new DynamoConfigStore(conn), visits, rollups: new DynamoRollupStore(conn) },
      { shard: 'shard-1', sequence: '100' },
      more.map((e) => ({ sequenceNumber: '100', data: Buffer.from(JSON.stringify(e)) })),
    );
    const [after, ...rest] = await visits.visitsAround(SITE, 'visitor-long', 0, Number.MAX_SAFE_INTEGER);
    expect(rest).toEqual([]);
    expect(after?.events.map((e) => e.id)).toEqual([...events, ...more].map((e) => e.event_id));
    expect(after?.landing_page).toBe('/p/0');
    // Every item of the visit is form 1 now: the form-0 chunks are gone.
    const items = (await scanAll(conn)).filter((i) => i.type === 'VISIT' || i.type === 'VISIT_CHUNK');
    expect(items.every((i) => i.z !== undefined && i.ev === undefined)).toBe(true);
  });
});
