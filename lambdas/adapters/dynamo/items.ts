/**
 * The registry of the table's partitions and item types (`docs/data-model.md`, "Items"): for each
 * partition its key builder and IAM pattern, which functions of the stack read and write it, and
 * the item types it holds with their sort key shape and builders (the key, its other forms, the
 * prefixes and range bounds its Queries use), size bound and TTL. Every store builds its partition
 * and sort keys here, the stack's `dynamodb:LeadingKeys` lists (`lib/functions.ts`) and rebuild's
 * namespace partitions are derived from it, and test/infra/items.test.ts holds the document's item
 * table, each builder's keys and the sources (no other file spells a key prefix) against it. A new
 * item type comes with its `sk` shape, `key` and any `forms` and `range` its store needs.
 */

import type { Granularity } from '../../domain/rollup.js';

/** A function of the stack (`lib/functions.ts` `FUNCTIONS`) that the table grants anything to. */
export type TableFunction =
  'event' | 'sessionize' | 'report' | 'mcp' | 'webhook' | 'app' | 'scheduled' | 'operations' | 'imports';

/** A sort key builder: the sort key (or key condition value) of its parts, as `ItemType.sk` spells it. */
export type SortKeyBuilder = (...parts: never[]) => string;

/** One item type of a partition. */
export interface ItemType {
  /** Sort key shape, as `docs/data-model.md` writes it; alternatives separated by `, `. */
  sk: string;
  /** The item's sort key of its parts (the `sk` shape's placeholders, in order). */
  key: SortKeyBuilder;
  /** Other forms of the item's sort key (a part of a split item, a second kind of item of the same type), by name. */
  forms?: Readonly<Record<string, SortKeyBuilder>>;
  /** Prefixes (`begins_with`) and bounds (`BETWEEN`, `>=`) of the Query key conditions that read it, by name. */
  range?: Readonly<Record<string, SortKeyBuilder>>;
  /** Upper bound of one item's size, independent of traffic and time (`docs/data-model.md`, "Bounds"). */
  bound: string;
  /** Seconds after which the TTL attribute (`expires_at`) lets DynamoDB delete it; absent: kept. */
  ttlSeconds?: number;
}

/** One partition family of the table. */
export interface PartitionType<Args extends readonly string[]> {
  /** The partition key's fixed start: the prefix up to and including `#`, or the whole key of a singleton partition. */
  prefix: string;
  /** The partition key of `args` (site, visitor, hash...). */
  key: (...args: Args) => string;
  /** Functions that read it (a writer also reads: `FootfallFunction.bindTable`). */
  readers: readonly TableFunction[];
  /** Functions that write it. */
  writers: readonly TableFunction[];
  /** Keyed by a data namespace (`<site>` or `<site>~g<n>`) and not by visitor: rebuild deletes a retired generation's copy. */
  namespaced?: boolean;
  items: Readonly<Record<string, ItemType>>;
}

const singleton = (name: string) => () => name;
const family =
  (prefix: string) =>
  (...parts: string[]) =>
    `${prefix}${parts.join('#')}`;

/**
 * Functions that settle or re-credit payments (`lambdas/services/payments.ts`): they write every payment partition.
 * The operations function rebuilds a site after an erasure and deletes a deleted site's items, in every namespace;
 * the imports function imports a provider's history begun in the app.
 */
const PAYMENT_WRITERS = ['sessionize', 'webhook', 'app', 'scheduled', 'operations', 'imports'] as const;
/** Functions that serve reports (the report API and MCP). */
const REPORTERS = ['report', 'mcp'] as const;
/** Functions that credit payments and so read the sites and FX rates. */
const SITE_READERS = ['event', 'sessionize', 'webhook', 'scheduled', 'imports', ...REPORTERS] as const;

const payment = <I extends Record<string, ItemType>>(items: I, readers: readonly TableFunction[] = REPORTERS) => ({
  readers,
  writers: PAYMENT_WRITERS,
  namespaced: true,
  items,
});

const KB = (n: number) => `≤ ${n} KB`;

/** `n` zero-padded to `width` digits, so that numbers sort as strings. */
const digits = (n: number, width: number) => String(n).padStart(width, '0');
/** A time in ms, 13 digits: sorts as a number until the year 2286. */
const ms13 = (ms: number) => digits(ms, 13);
/** RECENT_PAYMENT_MARK: the time of a raise in whole ms, 13 digits (never negative). */
const raise = (ms: number) => ms13(Math.max(0, Math.floor(ms)));
/** A sort key that is always the same string. */
const fixed = (sk: string) => () => sk;
/** Keys `<tag><id>` (email, domain, hash), and the prefix `<tag>` that reads them all. */
const tagged = (tag: string) => ({ key: (id: string) => `${tag}${id}`, range: { all: fixed(tag) } });
/**
 * The upper bound of a range of keys that start with `prefix`: `~` (0x7E) sorts after every character a
 * key part holds (digits, letters, `-`, `:`, `#`), so `BETWEEN <prefix> AND <prefix>~` is everything under it.
 */
const through = (prefix: string) => `${prefix}~`;

/**
 * The period part of rollup, payment counter and cohort sort keys: `<granularity>#<period>`
 * (`D#<YYYY-MM-DD>`, `M#<YYYY-MM>`, `H#<YYYY-MM-DDTHH>`), sorting by time within a granularity.
 */
export const periodSk = (g: Granularity, period: string) => `${g}#${period}`;
/** Range builders of keys `<period sk>#…`: a granularity's keys, and those of the periods `from` to `to`. */
const periodRange = (head = '') => ({
  granularity: (g: Granularity) => `${head}${g}#`,
  from: (g: Granularity, from: string) => `${head}${periodSk(g, from)}#`,
  to: (g: Granularity, to: string) => through(`${head}${periodSk(g, to)}#`),
});

/**
 * Range builders of the payment counters' keys (`<period sk>` and `<period sk>#<bucket>`): a granularity's
 * keys, and those of the periods `from` to `to` (the upper bound `<to>~`, not `<to>#~`: it also covers `<to>` itself).
 */
const counterRange = {
  granularity: (g: Granularity) => `${g}#`,
  from: (g: Granularity, from: string) => periodSk(g, from),
  to: (g: Granularity, to: string) => through(periodSk(g, to)),
};

/** ROLLUP: `<granularity>#<period>#<bucket>`, its overflow parts `…#<part, 3 digits>` sorting right after it. */
const rollupSk = (g: Granularity, period: string, bucket: number, part = 0) =>
  `${periodSk(g, period)}#${bucket}${part > 0 ? `#${digits(part, 3)}` : ''}`;
/** VISIT: visits sort by start time, so "visits before a time" is a key range. */
const visitSk = (start: number, id: string) => `V#${ms13(start)}#${id}`;
/** PAYMENT_LIST: the keys of a local day, attributed (`A#`) or Unattributed (`U#`). */
const listDay = (attributed: boolean, day: string) => `${attributed ? 'A' : 'U'}#${day}#`;
/** PAYER_PAYMENT / PAYER_STATE: the payer with its length in front, so no payer's prefix is another's. */
const payerSk = (payer: string) => `${payer.length}:${payer}#`;
/**
 * Kinesis sequence numbers are decimal strings of up to 129 digits (Kinesis API Reference,
 * `SequenceNumber`: `0|([1-9]\d{0,128})`); zero-padded to that width they sort as numbers.
 */
const padSequence = (sequence: string) => sequence.padStart(129, '0');
/** The change counter of a recomputed period (`C#<period>`, outside every `D#` and `M#` range). */
const changeSk = (period: string) => `C#${period}`;

/** The table's partitions, by role. Keys are the code's names; `items` keys the data model's item names. */
export const PARTITIONS = {
  account: {
    prefix: 'ACCOUNT#',
    key: family('ACCOUNT#') as (account: string) => string,
    readers: [],
    writers: ['app'],
    items: {
      ACCOUNT: { sk: 'ACCOUNT', key: fixed('ACCOUNT'), bound: '< 200 B' },
      MEMBER: { sk: 'USER#<email>', ...tagged('USER#'), bound: '< 500 B' },
      ROLE_LOCK: { sk: 'ROLE_LOCK', key: fixed('ROLE_LOCK'), bound: '< 200 B' },
    },
  },
  sites: {
    prefix: 'SITES',
    key: singleton('SITES'),
    readers: [...SITE_READERS],
    writers: ['app', 'operations'],
    items: {
      SITE: { sk: 'SITE#<domain>', ...tagged('SITE#'), bound: '< 2 KB' },
    },
  },
  provider: {
    prefix: 'PROVIDER#',
    key: family('PROVIDER#') as (domain: string) => string,
    readers: ['webhook'],
    writers: ['app', 'operations'],
    items: { PROVIDER: { sk: '<provider>', key: (provider: string) => provider, bound: '< 1 KB' } },
  },
  salt: {
    prefix: 'SALT',
    key: singleton('SALT'),
    readers: [],
    writers: ['event'],
    items: { SALT: { sk: '<YYYY-MM-DD>', key: (day: string) => day, bound: '< 200 B', ttlSeconds: 2 * 86_400 } },
  },
  visitor: {
    prefix: 'VIS#',
    key: family('VIS#') as (site: string, visitor: string) => string,
    readers: REPORTERS,
    writers: PAYMENT_WRITERS,
    items: {
      VISIT: {
        sk: 'V#<start ms, 13 digits>#<visit id>',
        key: visitSk,
        // From the first visit up to the visits started at `ms` (their chunks included).
        range: { first: fixed('V#'), upTo: (ms: number) => through(`V#${ms13(Math.max(0, ms))}#`) },
        bound: KB(4),
      },
      VISIT_CHUNK: {
        sk: '<VISIT sk>#<generation>#<index, 6 digits>',
        // A visit's chunks sort right after its VISIT item, so every range over visits covers them.
        key: (start: number, id: string, generation: number, index: number) =>
          `${visitSk(start, id)}#${generation}#${digits(index, 6)}`,
        range: { of: (visit: string, generation: number) => `${visit}#${generation}#` },
        bound: KB(3),
      },
      VISITOR_PAYMENT: {
        sk: 'P#<ts ms, 13 digits>#<provider>#<id>',
        key: (ts: number, provider: string, id: string) => `P#${ms13(ts)}#${provider}#${id}`,
        range: { all: fixed('P#') },
        bound: '< 300 B',
      },
      // After every `V#` visit: the sessionizer's newest-first Query of the visits reads it first.
      VISITOR_PAYMENTS: { sk: 'W#payments', key: fixed('W#payments'), bound: '< 100 B' },
    },
  },
  rollup: {
    prefix: 'R#',
    key: family('R#') as (site: string, metric: string) => string,
    readers: REPORTERS,
    writers: ['sessionize', 'scheduled', 'operations'],
    namespaced: true,
    items: {
      ROLLUP: {
        sk: 'D#<YYYY-MM-DD>#<bucket>, M#<YYYY-MM>#<bucket>, H#<YYYY-MM-DDTHH>#0, <ROLLUP sk>#<part, 3 digits>',
        key: rollupSk,
        range: periodRange(),
        bound: KB(210),
      },
      ROLLUP_COUNTS: {
        // `C#` + its `visits` ROLLUP item's sk: outside every `H#`, `D#` and `M#` range the set readers query.
        sk: 'C#<granularity>#<period>#<bucket>',
        key: (g: Granularity, period: string, bucket: number) => `C#${rollupSk(g, period, bucket)}`,
        range: periodRange('C#'),
        bound: '< 1 KB',
      },
      ROLLUP_DELTA: {
        // A shard's deltas sort by sequence number, then part.
        sk: 'L#<shard>#<sequence, 129 digits>#<part, 4 digits>',
        key: (shard: string, sequence: string, part: number) =>
          `L#${shard}#${padSequence(sequence)}#${digits(part, 4)}`,
        range: { all: fixed('L#') },
        bound: KB(256),
      },
      ROLLUP_LOG_STATE: { sk: 'S#<shard>', key: (shard: string) => `S#${shard}`, bound: '< 200 B' },
    },
  },
  imported: {
    prefix: 'IMPORTED#',
    key: family('IMPORTED#') as (domain: string, metric: string) => string,
    // Keyed by the domain, not a generation: a rebuild (which cannot derive it) keeps it. `footfall import plausible`
    // writes it with the operator's credentials; the reports read it (the email reports too); deleting a site deletes it.
    readers: ['scheduled', ...REPORTERS],
    writers: ['app', 'operations'],
    items: {
      IMPORTED: {
        sk: 'D#<YYYY-MM-DD>#<part, 3 digits>, M#<YYYY-MM>#<part, 3 digits>',
        key: (g: Granularity, period: string, part: number) => `${periodSk(g, period)}#${digits(part, 3)}`,
        range: periodRange(),
        bound: KB(34),
      },
      // In the `visits` partition, after every `D#` and `M#` key.
      IMPORT_STATE: { sk: 'STATE', key: fixed('STATE'), bound: '< 2 KB' },
    },
  },
  shard: {
    prefix: 'SHARD#',
    key: family('SHARD#') as (shard: string) => string,
    readers: [],
    writers: ['sessionize'],
    items: { BATCH_MARKER: { sk: 'INFLIGHT', key: fixed('INFLIGHT'), bound: '< 300 B' } },
  },
  ingest: {
    prefix: 'INGEST',
    key: singleton('INGEST'),
    readers: [],
    writers: ['sessionize'],
    items: {
      INGEST_CURSOR: { sk: 'CURSOR', key: fixed('CURSOR'), bound: '< 200 B' },
      INGEST_ENTRY: {
        sk: 'E#<journal number, 16 digits>',
        key: (n: number) => `E#${digits(n, 16)}`,
        range: { last: fixed(through('E#')) },
        bound: '< 1.5 KB',
        ttlSeconds: 7 * 86_400,
      },
      INGEST_SEEN: {
        sk: 'K#<object key>',
        key: (objectKey: string) => `K#${objectKey}`,
        bound: '< 1.5 KB',
        ttlSeconds: 7 * 86_400,
      },
    },
  },
  recentPaymentMarks: {
    prefix: 'RPM#',
    key: family('RPM#') as (site: string) => string,
    readers: [],
    writers: PAYMENT_WRITERS,
    namespaced: true,
    items: {
      RECENT_PAYMENT_MARK: {
        sk: '<raise ms, 13 digits>#<visitor>, <raise ms, 13 digits>#',
        key: (ms: number, visitor: string) => `${raise(ms)}#${visitor}`,
        // A bulk load's reset: every visitor's marker may have been rewritten.
        forms: { reset: (ms: number) => `${raise(ms)}#` },
        range: { from: raise },
        bound: '< 200 B',
        ttlSeconds: 7_200,
      },
    },
  },
  payment: {
    prefix: 'PAY#',
    key: family('PAY#') as (site: string) => string,
    ...payment({
      PAYMENT: { sk: 'P#<provider>#<id>', key: (provider: string, id: string) => `P#${provider}#${id}`, bound: KB(64) },
    }),
  },
  paymentAlias: {
    prefix: 'PAYID#',
    key: family('PAYID#') as (site: string, provider: string) => string,
    ...payment(
      { PAYMENT_ALIAS: { sk: '<any id of the purchase>', key: (alias: string) => alias, bound: '< 300 B' } },
      [],
    ),
  },
  customer: {
    prefix: 'CUST#',
    key: family('CUST#') as (site: string) => string,
    ...payment({
      CUSTOMER: {
        sk: '<provider>#<customer id>',
        key: (provider: string, customer: string) => `${provider}#${customer}`,
        bound: KB(8),
      },
    }),
  },
  paymentRollup: {
    prefix: 'PR#',
    key: family('PR#') as (site: string, metric: string) => string,
    // Layout 1's: nothing writes or reads them; listed so that deleting a retired generation removes them.
    ...payment({ PAYMENT_ROLLUP: { sk: '<provider>:<id>', key: (paymentKey: string) => paymentKey, bound: KB(4) } }),
  },
  paymentList: {
    prefix: 'PL#',
    key: family('PL#') as (site: string, month: string) => string,
    ...payment({
      PAYMENT_LIST: {
        // A: attributed, U: Unattributed.
        sk: '<A|U>#<YYYY-MM-DD>#<ts ms, 13 digits>#<provider>:<id>',
        key: (attributed: boolean, day: string, ts: number, paymentKey: string) =>
          `${listDay(attributed, day)}${ms13(ts)}#${paymentKey}`,
        range: {
          from: listDay,
          to: (attributed: boolean, day: string) => through(listDay(attributed, day)),
        },
        bound: KB(80),
      },
    }),
  },
  paymentListRefunded: {
    prefix: 'PLR#',
    key: family('PLR#') as (site: string, month: string) => string,
    ...payment({
      PAYMENT_LIST_REFUNDED: {
        sk: '<YYYY-MM-DD>#<ts ms, 13 digits>#<provider>:<id>',
        key: (day: string, ts: number, paymentKey: string) => `${day}#${ms13(ts)}#${paymentKey}`,
        range: { from: (day: string) => `${day}#`, to: (day: string) => through(`${day}#`) },
        bound: '≤ 200 B',
      },
    }),
  },
  paymentTotals: {
    prefix: 'PT#',
    key: family('PT#') as (site: string) => string,
    ...payment({
      PAYMENT_TOTALS: { sk: 'D#<YYYY-MM-DD>, M#<YYYY-MM>', key: periodSk, range: counterRange, bound: KB(24) },
      PAYMENT_CHANGE: { sk: 'C#<period>', key: changeSk, bound: '< 100 B' },
    }),
  },
  paymentCustomers: {
    prefix: 'PU#',
    key: family('PU#') as (site: string) => string,
    ...payment({
      PAYMENT_CUSTOMERS: { sk: 'D#<YYYY-MM-DD>, M#<YYYY-MM>', key: periodSk, range: counterRange, bound: KB(44) },
    }),
  },
  paymentDimension: {
    prefix: 'PD#',
    key: family('PD#') as (site: string, dimension: string) => string,
    ...payment({
      PAYMENT_DIMENSION: {
        sk: 'D#<YYYY-MM-DD>#<bucket>, M#<YYYY-MM>#<bucket>, <bucket sk>#<src, 10 digits>#<index, 3 digits>',
        // A bucket of a period (`periodSk`); the group of a period is `channel`'s bucket 0.
        key: (period: string, bucket: number) => `${period}#${bucket}`,
        // Values past one item's worth: part `index` (≥ 1) of the bucket written by the recompute `src`, right after it.
        forms: {
          part: (bucket: string, src: number, index: number) => `${bucket}#${digits(src, 10)}#${digits(index, 3)}`,
        },
        range: { ...counterRange, parts: (bucket: string) => `${bucket}#` },
        bound: KB(33),
      },
    }),
  },
  payer: {
    prefix: 'CP#',
    key: family('CP#') as (site: string) => string,
    ...payment(
      {
        PAYER_PAYMENT: {
          sk: '<len>:<payer>#P#<provider>:<id>',
          key: (payer: string, paymentKey: string) => `${payerSk(payer)}P#${paymentKey}`,
          range: { of: (payer: string) => `${payerSk(payer)}P#` },
          bound: KB(1),
        },
        PAYER_STATE: { sk: '<len>:<payer>#S', key: (payer: string) => `${payerSk(payer)}S`, bound: '< 200 B' },
      },
      [],
    ),
  },
  cohortMember: {
    prefix: 'CM#',
    key: family('CM#') as (site: string) => string,
    ...payment(
      {
        COHORT_MEMBER: {
          sk: '<first payment day>#<payer>',
          key: (day: string, payer: string) => `${day}#${payer}`,
          range: { day: (day: string) => `${day}#`, month: (month: string) => `${month}-` },
          bound: KB(1),
        },
      },
      // Filtered retention reads the members of its days (`docs/api.md`, "Filters").
      REPORTERS,
    ),
  },
  cohort: {
    prefix: 'CH#',
    key: family('CH#') as (site: string) => string,
    ...payment({
      COHORT: {
        sk: 'D#<YYYY-MM-DD>#<grouping>, M#<YYYY-MM>#<grouping>',
        // Of a period (`periodSk`).
        key: (period: string, grouping: string) => `${period}#${grouping}`,
        range: periodRange(),
        bound: KB(400),
      },
      COHORT_CHANGE: { sk: 'C#<period>', key: changeSk, bound: '< 100 B' },
      COHORT_SOURCES: { sk: 'SRC', key: fixed('SRC'), bound: '< 200 B' },
    }),
  },
  paymentPending: {
    prefix: 'PAYPENDING#',
    key: family('PAYPENDING#') as (site: string) => string,
    ...payment(
      { PAYMENT_PENDING: { sk: '<provider>:<id>', key: (paymentKey: string) => paymentKey, bound: '< 200 B' } },
      [],
    ),
  },
  apiKey: {
    prefix: 'APIKEY#',
    key: family('APIKEY#') as (hash: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: { API_KEY: { sk: 'KEY', key: fixed('KEY'), bound: '< 300 B' } },
  },
  keys: {
    prefix: 'KEYS',
    key: singleton('KEYS'),
    // The report and MCP functions' one write, `last_used` (lib/functions.ts KEY_USE_UPDATE), is not a grant of the partition.
    readers: [],
    writers: ['app'],
    items: { KEY_INFO: { sk: '<key id>', key: (id: string) => id, bound: '< 500 B' } },
  },
  looks: {
    prefix: 'LOOKS',
    key: singleton('LOOKS'),
    // The report and MCP functions' write, `looked` and `wanted` (lib/functions.ts LOOK_UPDATE), is not a grant of the
    // partition; they read a site's item to wait for the refresh it asked for. The operations run lists them all; a
    // site's deletion (begun by the app, finished by operations) deletes its item.
    readers: REPORTERS,
    writers: ['app', 'operations'],
    items: {
      LOOK: { sk: '<domain>', key: (domain: string) => domain, bound: '< 200 B', ttlSeconds: 2 * 86_400 },
    },
  },
  shareLink: {
    prefix: 'SHARE#',
    key: family('SHARE#') as (hash: string) => string,
    // The MCP function shares the report function's read grants (lib/functions.ts REPORT_READ_PARTITIONS); only the report API reads links.
    readers: REPORTERS,
    writers: ['app', 'operations'],
    items: { SHARE_LINK: { sk: 'LINK', key: fixed('LINK'), bound: '< 1 KB' } },
  },
  shareLinks: {
    prefix: 'SHARES#',
    key: family('SHARES#') as (domain: string) => string,
    readers: [],
    // The operations function finishes a site deletion begun in the app, which revokes the site's links.
    writers: ['app', 'operations'],
    items: { SHARE_INFO: { sk: '<link id>', key: (id: string) => id, bound: '< 1 KB' } },
  },
  shareUnlock: {
    prefix: 'SHAREUNLOCK#',
    key: family('SHAREUNLOCK#') as (hash: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: { SHARE_UNLOCK: { sk: 'UNLOCK', key: fixed('UNLOCK'), bound: '< 300 B', ttlSeconds: 86_400 } },
  },
  fx: {
    prefix: 'FX',
    key: singleton('FX'),
    readers: ['sessionize', 'webhook', 'scheduled', 'operations', 'imports', ...REPORTERS],
    writers: [],
    items: { FX: { sk: '<YYYY-MM-DD>', key: (day: string) => day, bound: KB(4) } },
  },
  user: {
    prefix: 'USER#',
    key: family('USER#') as (email: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: {
      USER: { sk: 'USER', key: fixed('USER'), bound: '< 1 KB' },
      LINK: { sk: 'LINK#<hash>', ...tagged('LINK#'), bound: '< 300 B', ttlSeconds: 7 * 86_400 },
    },
  },
  realtime: {
    prefix: 'RT#',
    key: family('RT#') as (site: string) => string,
    readers: REPORTERS,
    writers: ['sessionize', 'operations'],
    // Written for the live generation only; deleting a site (generation 0's namespace) deletes it too.
    namespaced: true,
    items: {
      REALTIME: {
        sk: '<UTC minute YYYY-MM-DDTHH:MM>#<shard>#<sequence>#<part>',
        key: (minute: string, shard: string, sequence: string, part: number) =>
          `${minute}#${shard}#${sequence}#${part}`,
        range: { from: (minute: string) => minute },
        bound: KB(100),
        ttlSeconds: 3_600,
      },
    },
  },
  session: {
    prefix: 'SESSION#',
    key: family('SESSION#') as (hash: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: { SESSION: { sk: 'SESSION', key: fixed('SESSION'), bound: '< 500 B', ttlSeconds: 14 * 86_400 } },
  },
  invite: {
    prefix: 'INVITE#',
    key: family('INVITE#') as (hash: string) => string,
    readers: [],
    writers: ['app'],
    items: { INVITE: { sk: 'INVITE', key: fixed('INVITE'), bound: '< 500 B', ttlSeconds: 7 * 86_400 } },
  },
  attempts: {
    prefix: 'ATTEMPTS#',
    key: family('ATTEMPTS#') as (key: string) => string,
    readers: [],
    writers: ['app'],
    items: {
      ATTEMPTS: {
        sk: '<bucket start ms, 13 digits>',
        key: ms13,
        range: { from: ms13 },
        bound: '< 300 B',
        ttlSeconds: 16 * 60,
      },
    },
  },
  expiring: {
    prefix: 'EXPIRING',
    key: singleton('EXPIRING'),
    readers: [],
    writers: ['app'],
    items: {
      EXPIRING: {
        sk: '<expiry s, 11 digits>#<pk>#<sk>',
        key: (expiresS: number, pk: string, sk: string) => `${digits(expiresS, 11)}#${pk}#${sk}`,
        // `<second>#…` sorts below the next second: `sk < before(s)` is what expired before second `s`.
        range: { before: (expiresS: number) => digits(expiresS, 11) },
        bound: '< 1 KB',
      },
    },
  },
  rebuild: {
    prefix: 'REBUILD#',
    key: family('REBUILD#') as (domain: string) => string,
    // `footfall rebuild` runs with the operator's credentials; the operations function rebuilds after an erasure.
    readers: [],
    writers: ['operations'],
    items: {
      REBUILD: {
        sk: 'STATE, G#<generation, 7 digits>',
        key: fixed('STATE'),
        forms: { generation: (generation: number) => `G#${digits(generation, 7)}` },
        bound: '< 500 B',
      },
    },
  },
  webhookLog: {
    prefix: 'WEBHOOK#',
    key: family('WEBHOOK#') as (domain: string) => string,
    readers: [],
    // The app function and the operations function delete a site's log with the site.
    writers: ['webhook', 'app', 'operations'],
    items: {
      LAST_WEBHOOK: { sk: '<provider>', key: (provider: string) => provider, bound: '< 500 B' },
      REJECTED_WEBHOOKS: {
        sk: '<provider>#rejected',
        key: (provider: string) => `${provider}#rejected`,
        bound: '< 200 B',
      },
    },
  },
  siteDeletions: {
    prefix: 'SITE_DELETIONS',
    key: singleton('SITE_DELETIONS'),
    // The app's danger zone records a deletion; the operations function (or `footfall sites delete`) finishes it.
    readers: [],
    writers: ['app', 'operations'],
    items: { SITE_DELETION: { sk: '<domain>', key: (domain: string) => domain, bound: '< 1 KB' } },
  },
  erasures: {
    prefix: 'ERASURES#',
    key: family('ERASURES#') as (domain: string) => string,
    // Written by `footfall erase` (operator credentials) and the operations function; the app shows them.
    readers: ['app'],
    writers: ['operations'],
    items: {
      ERASURE: {
        sk: '<ms, 13 digits>#<uuid>',
        key: (ms: number, uuid: string) => `${ms13(ms)}#${uuid}`,
        bound: '< 300 B',
      },
    },
  },
  erasureRequests: {
    prefix: 'ERASURE_REQUESTS',
    key: singleton('ERASURE_REQUESTS'),
    // The app queues an erasure and shows its progress; the operations function advances it.
    readers: [],
    writers: ['app', 'operations'],
    items: {
      ERASURE_REQUEST: {
        sk: '<domain>#<ms, 13 digits>#<uuid>',
        key: (domain: string, ms: number, uuid: string) => `${domain}#${ms13(ms)}#${uuid}`,
        // A site's requests, oldest first.
        range: { site: (domain: string) => `${domain}#` },
        bound: '< 110 KB',
      },
    },
  },
  importJobs: {
    prefix: 'IMPORTJOB#',
    key: family('IMPORTJOB#') as (domain: string) => string,
    readers: [],
    // The app starts a job and shows it; the imports function advances it; the operations function deletes it with the site.
    writers: ['app', 'imports', 'operations'],
    items: {
      // The API key sealed (< 2 KiB) while the job runs, the cursor (< 600 B), counts, and at most 3 refused objects' lines.
      IMPORT_JOB: { sk: '<provider>', key: (provider: string) => provider, bound: '< 4 KB' },
    },
  },
  emailReports: {
    prefix: 'EMAILREPORTS#',
    key: family('EMAILREPORTS#') as (domain: string) => string,
    readers: [],
    // The app sets the recipients and removes one on unsubscribe; the scheduled function sends and records each send;
    // the operations function deletes them with the site.
    writers: ['app', 'scheduled', 'operations'],
    items: {
      EMAIL_RECIPIENTS: { sk: 'RECIPIENTS', key: fixed('RECIPIENTS'), bound: '< 4 KB' },
      EMAIL_SENT: {
        sk: 'SENT#<weekly|monthly>#<period>#<address id>',
        key: (kind: string, period: string, address: string) => `SENT#${kind}#${period}#${address}`,
        bound: '< 300 B',
        ttlSeconds: 70 * 86_400,
      },
    },
  },
} as const satisfies Record<string, PartitionType<never>>;

type Partitions = typeof PARTITIONS;
type Entry = Partitions[keyof Partitions];

const entries = (): Entry[] => Object.values(PARTITIONS);

/** The IAM `StringLike` pattern of a partition family: a singleton's key, or its prefix followed by `*`. */
export const partitionPattern = (p: { prefix: string }): string => (p.prefix.endsWith('#') ? `${p.prefix}*` : p.prefix);

/**
 * The `dynamodb:LeadingKeys` patterns a function is granted for `access`, in registry order: `write`
 * the partitions it writes; `read` those it reads without writing (its writes are readable too).
 */
export function partitionPatterns(fn: TableFunction, access: 'read' | 'write'): string[] {
  return entries()
    .filter((p) =>
      access === 'write'
        ? (p.writers as readonly string[]).includes(fn)
        : (p.readers as readonly string[]).includes(fn) && !(p.writers as readonly string[]).includes(fn),
    )
    .map(partitionPattern);
}

/** The registry entry whose pattern a partition key matches, or undefined (no item of the data model lives there). */
export function partitionOf(pk: string): Entry | undefined {
  return entries().find((p) =>
    p.prefix.endsWith('#') ? pk.startsWith(p.prefix) && pk.length > p.prefix.length : pk === p.prefix,
  );
}

/** The partition families keyed by a data namespace (not by visitor), which rebuild deletes for a retired generation (`namespacePartitions`). */
export const NAMESPACED: readonly Entry[] = entries().filter((p) => 'namespaced' in p && p.namespaced);

/** What settling a payment writes (`lambdas/services/payments.ts`): every partition the payment writers share. */
export const PAYMENT_PARTITION_PATTERNS: readonly string[] = entries()
  .filter((p) => p.writers === PAYMENT_WRITERS)
  .map(partitionPattern);
