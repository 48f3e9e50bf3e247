import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { itemBytes } from '../../lambdas/adapters/dynamo/rollup-reader.js';
import { VISIT_DICTIONARY } from '../../lambdas/adapters/dynamo/visit-codec.js';
import { assembleVisits, CHUNK_BYTES, eventsOfItem, visitToItems } from '../../lambdas/adapters/dynamo/visit-store.js';
import { DEVICES } from '../../lambdas/domain/tracked-event.js';
import {
  buildVisits,
  visitEventOf,
  type Visit,
  type VisitAttributes,
  type VisitEvent,
} from '../../lambdas/domain/visit.js';
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
      props: fc.option(fc.dictionary(text(20), text(40), { minKeys: 1, maxKeys: 3 }), { nil: undefined }),
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
          ...(e.props === undefined ? {} : { props: JSON.stringify(e.props) }),
        };
      });
  });

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);

describe('VISIT items, form 1 (compressed compact rows)', () => {
  it('reads back any visit exactly from its form-1 items', () => {
    console.log(`visit-codec round trip: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    fc.assert(
      fc.property(
        eventsArb,
        fc.constantFrom('visitor-0001', 'h-0123456789abcdef', 'a#b-visitor'),
        (events, visitor) => {
          const visits = buildVisits(SITE, visitor, events);
          const compact = visits.flatMap(visitToItems);
          expect(assembleVisits(compact, SITE, visitor)).toEqual(visits);
          // In any order, and item by item (the bench's scan).
          expect(assembleVisits([...compact].reverse(), SITE, visitor)).toEqual(visits);
          expect(
            compact
              .flatMap(eventsOfItem)
              .map((e) => e.id)
              .sort(),
          ).toEqual(visits.flatMap((v) => v.events.map((e) => e.id)).sort());
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
