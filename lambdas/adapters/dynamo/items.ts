/**
 * The registry of the table's partitions and item types (`docs/data-model.md`, "Items"): for each
 * partition its key builder and IAM pattern, which functions of the stack read and write it, and
 * the item types it holds with their sort key shape, size bound and TTL. Every store builds its
 * partition keys here, the stack's `dynamodb:LeadingKeys` lists (`lib/functions.ts`) and rebuild's
 * namespace partitions are derived from it, and test/infra/items.test.ts holds the document's item
 * table and the sources (no other file spells a partition prefix) against it.
 */

/** A function of the stack (`lib/functions.ts` `FUNCTIONS`) that the table grants anything to. */
export type TableFunction = 'event' | 'sessionize' | 'report' | 'mcp' | 'webhook' | 'app' | 'scheduled' | 'operations';

/** One item type of a partition. */
export interface ItemType {
  /** Sort key shape, as `docs/data-model.md` writes it. */
  sk: string;
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
 * The operations function rebuilds a site after an erasure and deletes a deleted site's items, in every namespace.
 */
const PAYMENT_WRITERS = ['sessionize', 'webhook', 'app', 'scheduled', 'operations'] as const;
/** Functions that serve reports (the report API and MCP). */
const REPORTERS = ['report', 'mcp'] as const;
/** Functions that credit payments and so read the sites and FX rates. */
const SITE_READERS = ['event', 'sessionize', 'webhook', 'scheduled', ...REPORTERS] as const;

const payment = (items: Record<string, ItemType>, readers: readonly TableFunction[] = REPORTERS) => ({
  readers,
  writers: PAYMENT_WRITERS,
  namespaced: true,
  items,
});

const KB = (n: number) => `≤ ${n} KB`;

/** The table's partitions, by role. Keys are the code's names; `items` keys the data model's item names. */
export const PARTITIONS = {
  account: {
    prefix: 'ACCOUNT#',
    key: family('ACCOUNT#') as (account: string) => string,
    readers: [],
    writers: ['app'],
    items: {
      ACCOUNT: { sk: 'ACCOUNT', bound: '< 200 B' },
      MEMBER: { sk: 'USER#<email>', bound: '< 500 B' },
      ROLE_LOCK: { sk: 'ROLE_LOCK', bound: '< 200 B' },
    },
  },
  sites: {
    prefix: 'SITES',
    key: singleton('SITES'),
    readers: [...SITE_READERS],
    writers: ['app', 'operations'],
    items: { SITE: { sk: 'SITE#<domain>', bound: '< 2 KB' } },
  },
  provider: {
    prefix: 'PROVIDER#',
    key: family('PROVIDER#') as (domain: string) => string,
    readers: ['webhook'],
    writers: ['app', 'operations'],
    items: { PROVIDER: { sk: '<provider>', bound: '< 1 KB' } },
  },
  salt: {
    prefix: 'SALT',
    key: singleton('SALT'),
    readers: [],
    writers: ['event'],
    items: { SALT: { sk: '<YYYY-MM-DD>', bound: '< 200 B', ttlSeconds: 2 * 86_400 } },
  },
  visitor: {
    prefix: 'VIS#',
    key: family('VIS#') as (site: string, visitor: string) => string,
    readers: REPORTERS,
    writers: PAYMENT_WRITERS,
    items: {
      VISIT: { sk: 'V#<start ms, 13 digits>#<visit id>', bound: KB(4) },
      VISIT_CHUNK: { sk: '<VISIT sk>#<generation>#<index, 6 digits>', bound: KB(3) },
      VISITOR_PAYMENT: { sk: 'P#<ts ms>#<provider>#<id>', bound: '< 300 B' },
      VISITOR_PAYMENTS: { sk: 'W#payments', bound: '< 100 B' },
    },
  },
  rollup: {
    prefix: 'R#',
    key: family('R#') as (site: string, metric: string) => string,
    readers: REPORTERS,
    writers: ['sessionize', 'scheduled', 'operations'],
    namespaced: true,
    items: {
      ROLLUP: { sk: 'D#<YYYY-MM-DD>#<bucket>, M#<YYYY-MM>#<bucket>, H#<hour>#0', bound: KB(210) },
      ROLLUP_COUNTS: { sk: 'C#<granularity>#<period>#<bucket>', bound: '< 1 KB' },
      ROLLUP_DELTA: { sk: 'L#<shard>#<sequence>#<part>', bound: KB(256) },
      ROLLUP_LOG_STATE: { sk: 'S#<shard>', bound: '< 200 B' },
    },
  },
  shard: {
    prefix: 'SHARD#',
    key: family('SHARD#') as (shard: string) => string,
    readers: [],
    writers: ['sessionize'],
    items: { BATCH_MARKER: { sk: 'INFLIGHT', bound: '< 300 B' } },
  },
  ingest: {
    prefix: 'INGEST',
    key: singleton('INGEST'),
    readers: [],
    writers: ['sessionize'],
    items: {
      INGEST_CURSOR: { sk: 'CURSOR', bound: '< 200 B' },
      INGEST_ENTRY: { sk: 'E#<journal number, 16 digits>', bound: '< 1.5 KB', ttlSeconds: 7 * 86_400 },
      INGEST_SEEN: { sk: 'K#<object key>', bound: '< 1.5 KB', ttlSeconds: 7 * 86_400 },
    },
  },
  recentPaymentMarks: {
    prefix: 'RPM#',
    key: family('RPM#') as (site: string) => string,
    readers: [],
    writers: PAYMENT_WRITERS,
    namespaced: true,
    items: { RECENT_PAYMENT_MARK: { sk: '<raise ms, 13 digits>#<visitor>', bound: '< 200 B', ttlSeconds: 7_200 } },
  },
  payment: {
    prefix: 'PAY#',
    key: family('PAY#') as (site: string) => string,
    ...payment({ PAYMENT: { sk: 'P#<provider>#<id>', bound: KB(64) } }),
  },
  paymentAlias: {
    prefix: 'PAYID#',
    key: family('PAYID#') as (site: string, provider: string) => string,
    ...payment({ PAYMENT_ALIAS: { sk: '<any id of the purchase>', bound: '< 300 B' } }, []),
  },
  customer: {
    prefix: 'CUST#',
    key: family('CUST#') as (site: string) => string,
    ...payment({ CUSTOMER: { sk: '<provider>#<customer id>', bound: KB(8) } }),
  },
  paymentRollup: {
    prefix: 'PR#',
    key: family('PR#') as (site: string, metric: string) => string,
    ...payment({ PAYMENT_ROLLUP: { sk: 'legacy per-payment entries', bound: KB(4) } }),
  },
  paymentList: {
    prefix: 'PL#',
    key: family('PL#') as (site: string, month: string) => string,
    ...payment({ PAYMENT_LIST: { sk: '<A|U>#<YYYY-MM-DD>#<ts ms>#<provider>:<id>', bound: KB(80) } }),
  },
  paymentListRefunded: {
    prefix: 'PLR#',
    key: family('PLR#') as (site: string, month: string) => string,
    ...payment({ PAYMENT_LIST_REFUNDED: { sk: '<YYYY-MM-DD>#<ts ms>#<provider>:<id>', bound: '≤ 200 B' } }),
  },
  paymentTotals: {
    prefix: 'PT#',
    key: family('PT#') as (site: string) => string,
    ...payment({
      PAYMENT_TOTALS: { sk: 'D#<YYYY-MM-DD>, M#<YYYY-MM>', bound: KB(24) },
      PAYMENT_CHANGE: { sk: 'C#<period>', bound: '< 100 B' },
    }),
  },
  paymentCustomers: {
    prefix: 'PU#',
    key: family('PU#') as (site: string) => string,
    ...payment({ PAYMENT_CUSTOMERS: { sk: 'D#<YYYY-MM-DD>, M#<YYYY-MM>', bound: KB(44) } }),
  },
  paymentDimension: {
    prefix: 'PD#',
    key: family('PD#') as (site: string, dimension: string) => string,
    ...payment({ PAYMENT_DIMENSION: { sk: 'D#<YYYY-MM-DD>#<bucket>, M#<YYYY-MM>#<bucket>', bound: KB(33) } }),
  },
  payer: {
    prefix: 'CP#',
    key: family('CP#') as (site: string) => string,
    ...payment(
      {
        PAYER_PAYMENT: { sk: '<len>:<payer>#P#<provider>:<id>', bound: KB(1) },
        PAYER_STATE: { sk: '<len>:<payer>#S', bound: '< 200 B' },
      },
      [],
    ),
  },
  cohortMember: {
    prefix: 'CM#',
    key: family('CM#') as (site: string) => string,
    ...payment({ COHORT_MEMBER: { sk: '<first payment day>#<payer>', bound: KB(1) } }, []),
  },
  cohort: {
    prefix: 'CH#',
    key: family('CH#') as (site: string) => string,
    ...payment({
      COHORT: { sk: 'D#<YYYY-MM-DD>#<grouping>, M#<YYYY-MM>#<grouping>', bound: KB(400) },
      COHORT_CHANGE: { sk: 'C#<period>', bound: '< 100 B' },
      COHORT_SOURCES: { sk: 'SRC', bound: '< 200 B' },
    }),
  },
  paymentPending: {
    prefix: 'PAYPENDING#',
    key: family('PAYPENDING#') as (site: string) => string,
    ...payment({ PAYMENT_PENDING: { sk: '<provider>:<id>', bound: '< 200 B' } }, []),
  },
  apiKey: {
    prefix: 'APIKEY#',
    key: family('APIKEY#') as (hash: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: { API_KEY: { sk: 'KEY', bound: '< 300 B' } },
  },
  keys: {
    prefix: 'KEYS',
    key: singleton('KEYS'),
    // The report and MCP functions' one write, `last_used` (lib/functions.ts KEY_USE_UPDATE), is not a grant of the partition.
    readers: [],
    writers: ['app'],
    items: { KEY_INFO: { sk: '<key id>', bound: '< 500 B' } },
  },
  shareLink: {
    prefix: 'SHARE#',
    key: family('SHARE#') as (hash: string) => string,
    // The MCP function shares the report function's read grants (lib/functions.ts REPORT_READ_PARTITIONS); only the report API reads links.
    readers: REPORTERS,
    writers: ['app'],
    items: { SHARE_LINK: { sk: 'LINK', bound: '< 1 KB' } },
  },
  shareLinks: {
    prefix: 'SHARES#',
    key: family('SHARES#') as (domain: string) => string,
    readers: [],
    writers: ['app'],
    items: { SHARE_INFO: { sk: '<link id>', bound: '< 1 KB' } },
  },
  shareUnlock: {
    prefix: 'SHAREUNLOCK#',
    key: family('SHAREUNLOCK#') as (hash: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: { SHARE_UNLOCK: { sk: 'UNLOCK', bound: '< 300 B', ttlSeconds: 86_400 } },
  },
  fx: {
    prefix: 'FX',
    key: singleton('FX'),
    readers: ['sessionize', 'webhook', 'scheduled', 'operations', ...REPORTERS],
    writers: [],
    items: { FX: { sk: '<YYYY-MM-DD>', bound: KB(4) } },
  },
  user: {
    prefix: 'USER#',
    key: family('USER#') as (email: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: {
      USER: { sk: 'USER', bound: '< 1 KB' },
      LINK: { sk: 'LINK#<hash>', bound: '< 300 B', ttlSeconds: 7 * 86_400 },
    },
  },
  realtime: {
    prefix: 'RT#',
    key: family('RT#') as (site: string) => string,
    readers: REPORTERS,
    writers: ['sessionize', 'operations'],
    // Written for the live generation only; deleting a site (generation 0's namespace) deletes it too.
    namespaced: true,
    items: { REALTIME: { sk: '<UTC minute>#<shard>#<sequence>#<part>', bound: KB(100), ttlSeconds: 3_600 } },
  },
  session: {
    prefix: 'SESSION#',
    key: family('SESSION#') as (hash: string) => string,
    readers: REPORTERS,
    writers: ['app'],
    items: { SESSION: { sk: 'SESSION', bound: '< 500 B', ttlSeconds: 14 * 86_400 } },
  },
  invite: {
    prefix: 'INVITE#',
    key: family('INVITE#') as (hash: string) => string,
    readers: [],
    writers: ['app'],
    items: { INVITE: { sk: 'INVITE', bound: '< 500 B', ttlSeconds: 7 * 86_400 } },
  },
  attempts: {
    prefix: 'ATTEMPTS#',
    key: family('ATTEMPTS#') as (key: string) => string,
    readers: [],
    writers: ['app'],
    items: { ATTEMPTS: { sk: '<bucket start ms, 13 digits>', bound: '< 300 B', ttlSeconds: 16 * 60 } },
  },
  expiring: {
    prefix: 'EXPIRING',
    key: singleton('EXPIRING'),
    readers: [],
    writers: ['app'],
    items: { EXPIRING: { sk: '<expiry s, 11 digits>#<pk>#<sk>', bound: '< 1 KB' } },
  },
  rebuild: {
    prefix: 'REBUILD#',
    key: family('REBUILD#') as (domain: string) => string,
    // `footfall rebuild` runs with the operator's credentials; the operations function rebuilds after an erasure.
    readers: [],
    writers: ['operations'],
    items: { REBUILD: { sk: 'STATE, G#<generation, 7 digits>', bound: '< 500 B' } },
  },
  webhookLog: {
    prefix: 'WEBHOOK#',
    key: family('WEBHOOK#') as (domain: string) => string,
    readers: [],
    // The app function and the operations function delete a site's log with the site.
    writers: ['webhook', 'app', 'operations'],
    items: {
      LAST_WEBHOOK: { sk: '<provider>', bound: '< 500 B' },
      REJECTED_WEBHOOKS: { sk: '<provider>#rejected', bound: '< 200 B' },
    },
  },
  siteDeletions: {
    prefix: 'SITE_DELETIONS',
    key: singleton('SITE_DELETIONS'),
    // The app's danger zone records a deletion; the operations function (or `footfall sites delete`) finishes it.
    readers: [],
    writers: ['app', 'operations'],
    items: { SITE_DELETION: { sk: '<domain>', bound: '< 1 KB' } },
  },
  erasures: {
    prefix: 'ERASURES#',
    key: family('ERASURES#') as (domain: string) => string,
    // Written by `footfall erase` (operator credentials) and the operations function; the app shows them.
    readers: ['app'],
    writers: ['operations'],
    items: { ERASURE: { sk: '<ms, 13 digits>#<uuid>', bound: '< 300 B' } },
  },
  erasureRequests: {
    prefix: 'ERASURE_REQUESTS',
    key: singleton('ERASURE_REQUESTS'),
    // The app queues an erasure and shows its progress; the operations function advances it.
    readers: [],
    writers: ['app', 'operations'],
    items: { ERASURE_REQUEST: { sk: '<domain>#<ms, 13 digits>#<uuid>', bound: '< 110 KB' } },
  },
  emailReports: {
    prefix: 'EMAILREPORTS#',
    key: family('EMAILREPORTS#') as (domain: string) => string,
    readers: [],
    // The app sets the recipients and removes one on unsubscribe; the scheduled function sends and records each send;
    // the operations function deletes them with the site.
    writers: ['app', 'scheduled', 'operations'],
    items: {
      EMAIL_RECIPIENTS: { sk: 'RECIPIENTS', bound: '< 4 KB' },
      EMAIL_SENT: { sk: 'SENT#<weekly|monthly>#<period>#<address id>', bound: '< 300 B', ttlSeconds: 70 * 86_400 },
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
