import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { VisitAttributes, VisitEvent } from '../../domain/visit.js';

/**
 * How a visit's events and attributes are stored in its VISIT and
 * VISIT_CHUNK items (`docs/data-model.md`, "Visits and their events").
 *
 * Form 1, the only form a layout-3 generation holds (form 0, plain JSON in
 * `ev`, is no longer read: `docs/data-model.md`, "Versions of the stored
 * data: the policy"): `z`, a Binary attribute holding the raw DEFLATE
 * stream (RFC 1951, Node's zlib, with the fixed preset dictionary
 * `VISIT_DICTIONARY`) of compact JSON. Nothing that the item's keys or its
 * events already say is stored again: the site and visitor are the
 * partition key's, the visit id and start are the sort key's, the landing
 * page is the first event's path, the counts are the events'. Only `end`
 * stays an attribute (the sessionizer's newest-first Query stops on it
 * without decoding). Less than half of form 0's bytes for the bench's traffic
 * (`npm run bench -- --only sessionize`, "stored at …"; `docs/benchmarks.md`).
 *
 * Form-1 JSON: a VISIT item holds `[attributes, rows]`, or `[attributes,
 * rows, landing page]` when the visit has chunks (its first event is in
 * chunk 0, so the VISIT item alone still gives the landing page); a
 * VISIT_CHUNK holds `rows`. `attributes` are the values of `ATTRIBUTE_ORDER`
 * in that order; a row is `[ts − visit start (ms), type (0 page view, 1
 * goal), path, id, goal, link, props]`, with `id` null for the visit's first event
 * (its id is the visit's id, in the sort key). Trailing nulls of both are
 * dropped. The order, the row layout and the dictionary are the format:
 * changing any of them needs a form 2. `props` (the event's custom
 * properties as JSON text) was appended to the row: rows written before it
 * end earlier and read as without properties, as a trailing null does.
 */

/**
 * The visit attributes in form 1's order (`VisitAttributes`). An attribute
 * may only be appended, under a layout bump (`DATA_LAYOUT`): a missing
 * trailing value reads as null, like a trailing null dropped.
 */
export const ATTRIBUTE_ORDER = [
  'channel',
  'referrer_host',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'country',
  'device',
  'browser',
  'os',
  'language',
  'utm_content',
] as const satisfies ReadonlyArray<keyof VisitAttributes>;

/**
 * The preset dictionary of form 1 (zlib `dictionary`): strings common in any
 * site's visits (JSON punctuation of the rows and attributes, channel names
 * of `CHANNELS`, devices, common browsers, systems, referrers and paths, the
 * outbound-link goal). DEFLATE finds matches in it as if it preceded the
 * data, which is what makes a 200-byte payload compress (about 118 instead
 * of 138 bytes without it, measured on the bench's traffic). Fixed for ever:
 * data written with it is read with it (`test/adapters/visit-codec.test.ts`
 * pins its hash). The most common strings are last (DEFLATE's shorter
 * distances).
 */
export const VISIT_DICTIONARY = Buffer.from(
  [
    'Affiliate","Shopping","Video","Newsletter","Communities","Email","Paid","AI","Referral',
    'news.ycombinator.com","reddit.com","linkedin.com","facebook.com","t.co","github.com","chatgpt.com","perplexity.ai","bing.com","duckduckgo.com","google.com',
    '"Opera","Samsung Internet","Edge","Firefox","Mobile Safari","Safari","Chrome',
    '"Linux","Chrome OS","Android","iOS","Windows","macOS',
    '"Unknown","Tablet","Mobile","Desktop',
    '"es","fr","de","en',
    '/features","/pricing","/about","/contact","/signup","/login","/blog/","/docs/',
    '"Signup","Outbound Link: Click"',
    ',null,null,null,null,null,null,"',
    '[["Social",null,null,"[["Search","google.com",null,null,null,null,null,"[["Direct",null,null,null,null,null,null,null,"',
    '],[0,0,"/"]]]',
    '[0,0,"/',
  ].join(''),
);

/** A form-1 row: [ts − start, type, path, id, goal, link, props], trailing nulls dropped. */
type CompactRow = [number, 0 | 1, string, (string | null)?, (string | null)?, (string | null)?, (string | null)?];

const trimNulls = <T extends unknown[]>(values: T): T => {
  let n = values.length;
  while (n > 0 && values[n - 1] === null) n--;
  values.length = n;
  return values;
};

/** The form-1 JSON row of one event of the visit `visitId` that started at `start` (ms). */
export function compactRow(e: VisitEvent, start: number, visitId: string): string {
  return JSON.stringify(
    trimNulls<CompactRow>([
      e.ts - start,
      e.type === 'goal' ? 1 : 0,
      e.path,
      e.id === visitId ? null : e.id,
      e.goal,
      e.link,
      e.props ?? null,
    ]),
  );
}

const compress = (json: string): Uint8Array => deflateRawSync(json, { dictionary: VISIT_DICTIONARY });
const expand = (z: unknown): unknown =>
  JSON.parse(inflateRawSync(z as Uint8Array, { dictionary: VISIT_DICTIONARY }).toString('utf8')) as unknown;

/** The `z` attribute of a VISIT item (form 1) from JSON rows made by `compactRow`. */
export function encodeHead(attrs: VisitAttributes, rows: readonly string[], landingPage: string | null): Uint8Array {
  const values = JSON.stringify(trimNulls(ATTRIBUTE_ORDER.map((k) => attrs[k] as string | null)));
  return compress(`[${values},[${rows.join(',')}]${landingPage === null ? '' : `,${JSON.stringify(landingPage)}`}]`);
}

/** The `z` attribute of a VISIT_CHUNK item (form 1) from JSON rows made by `compactRow`. */
export const encodeChunk = (rows: readonly string[]): Uint8Array => compress(`[${rows.join(',')}]`);

const eventOfCompact = (
  [dt, type, path, id, goal, link, props]: CompactRow,
  start: number,
  visitId: string,
): VisitEvent => ({
  id: id ?? visitId,
  ts: start + dt,
  type: type === 1 ? 'goal' : 'pageview',
  path,
  goal: goal ?? null,
  link: link ?? null,
  ...(props ? { props } : {}),
});

/** What a VISIT item says: the visit's summary and the events it holds itself (its last chunk). */
export interface HeadContent {
  id: string;
  /** First and last event time, ms since epoch. */
  start: number;
  end: number;
  attrs: VisitAttributes;
  /** The landing page when the item states it (when the first event is in a chunk or its path differs), else null: the first event's path. */
  landingPage: string | null;
  events: VisitEvent[];
}

/**
 * Reads a VISIT item. The visit's id and start come from its sort key
 * (`V#<start, 13 digits>#<id>`).
 */
export function decodeHead(item: Record<string, unknown>, sk: string): HeadContent {
  const id = sk.slice(16);
  const start = Number(sk.slice(2, 15));
  const end = Number(item.end);
  const [values, rows, landing] = expand(item.z) as [Array<string | null>, CompactRow[], string?];
  const attrs = Object.fromEntries(ATTRIBUTE_ORDER.map((k, i) => [k, values[i] ?? null])) as unknown as VisitAttributes;
  return { id, start, end, attrs, landingPage: landing ?? null, events: rows.map((r) => eventOfCompact(r, start, id)) };
}

/** The events of a VISIT_CHUNK item, in time order; `start` and `visitId` are its visit's. */
export function decodeChunk(item: Record<string, unknown>, start: number, visitId: string): VisitEvent[] {
  return (expand(item.z) as CompactRow[]).map((r) => eventOfCompact(r, start, visitId));
}
