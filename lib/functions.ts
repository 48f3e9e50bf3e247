import type { HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import type { StreamAccess, TableAccess } from './lambda-defaults.js';

/** An HTTP API route served by a function. */
export interface RouteSpec {
  /** Path as API Gateway writes it: `/api/event`, `/api/v1/{proxy+}`. */
  path: string;
  methods: ReadonlyArray<`${HttpMethod}`>;
}

/**
 * One Lambda function of the stack: everything the stack needs to build it,
 * grant it and wire it. The stack (`lib/footfall-stack.ts`) turns each entry
 * of `FUNCTIONS` into a `FootfallFunction` with these settings.
 */
export interface FunctionSpec {
  /** Entry file, relative to the repository root; it exports `handler`. */
  entry: string;
  description: string;
  /** Only deployed in app mode (context `app=true`). */
  appOnly?: boolean;
  /** @default 512 */
  memoryMiB?: number;
  /** @default 10 */
  timeoutSeconds?: number;
  /** Extra environment variables (TABLE_NAME and STREAM_NAME come from `table` and `stream`). */
  env?: Record<string, string>;
  /** Access to the DynamoDB table; sets TABLE_NAME. */
  table?: TableAccess;
  /**
   * The event stream: `put` sets STREAM_NAME and grants PutRecords; `consume`
   * makes the function the stream's consumer (event source mapping, failure
   * queue, iterator-age and failure-queue alarms).
   */
  stream?: StreamAccess | 'consume';
  /** HTTP API routes. */
  routes?: readonly RouteSpec[];
  /**
   * A public function URL (auth NONE, buffered, no CORS configuration of its own, so the
   * handler's CORS headers and OPTIONS answers pass through) and a stack output `output` = the
   * URL followed by `path`. The function answers every path of its URL.
   */
  url?: { output: string; path?: string; description?: string };
  /**
   * Environment variables holding another function's public URL followed by its `url.path`
   * (`{ EVENT_URL: 'event' }`); that function must come earlier in the registry and have `url`.
   */
  urlEnv?: Readonly<Record<string, string>>;
  /** Invoked by an EventBridge schedule every this many minutes. */
  everyMinutes?: number;
  /**
   * Partitions (`pk` patterns, `*` a wildcard) the function may write: its
   * write actions are conditioned on `dynamodb:LeadingKeys`, so it cannot
   * touch any other item even with a bug. Reads stay table-wide.
   */
  writePartitions?: readonly string[];
  /**
   * Partitions the function may read (with `writePartitions`, which it may
   * also read): its read actions are conditioned on `dynamodb:LeadingKeys`
   * too. Without it reads are table-wide (the app function, which reads what
   * its user may see). Issue 18.5: no function but the webhook's reads
   * `PROVIDER#*`, where the webhook signing secrets are.
   */
  readPartitions?: readonly string[];
  /**
   * The KMS key of webhook signing secrets (`docs/security.md`): `seal` grants
   * `kms:GenerateDataKey` (the app function, which stores them), `open` grants
   * `kms:Decrypt` (the webhook function, which verifies with them); either sets
   * SECRETS_KEY_ID. No other function gets any KMS permission on it.
   */
  secrets?: 'seal' | 'open';
  /**
   * The one narrow write of a function otherwise `read`: `dynamodb:UpdateItem`
   * only on items of `partitions` and only of `attributes` (plus the table's
   * key attribute names, which IAM requires in `dynamodb:Attributes`), with
   * no return values. See `FootfallFunction.bindTable`.
   */
  attributeUpdate?: { partitions: readonly string[]; attributes: readonly string[] };
  /** Gets the IP-to-country database layer and `GEO_DATABASE_PATH` (`docs/ingestion.md` "Country"). */
  countryDatabase?: boolean;
  /**
   * Invoked once per tracked event or script load (the hot path, millions of times a month): no
   * X-Ray traces unless the stack is deployed with `-c hotPathTracing=true`, and no Lambda
   * platform log lines (`START`/`END`/`REPORT`) (`HOT_PATH_LOGGING`). `docs/cost.md`, "Defaults".
   * With `-c hotPathConcurrency=N` its reserved concurrency is N, which also throttles its function
   * URL (`docs/deploy.md`, "Throttling"); with `url`, its URL's 5xx rate raises an alarm.
   */
  hotPath?: boolean;
}

/** What the report and MCP functions read: sites, keys and sessions to authenticate, and the reports' items. Nothing else; their only write is `KEY_USE_UPDATE`. */
export const REPORT_READ_PARTITIONS = [
  'SITES',
  'APIKEY#*',
  'SESSION#*',
  'USER#*',
  'R#*',
  'RT#*',
  'PR#*',
  'PL#*',
  'PLR#*',
  'PT#*',
  'PU#*',
  'PD#*',
  'VIS#*',
  'PAY#*',
  'CUST#*',
  'FX',
] as const;

/**
 * The report and MCP functions' one write: a key's `last_used` on its `KEYS`
 * item (`lambdas/adapters/dynamo/key-store.ts`, at most every 5 min per key).
 * Not `hash`, `account` or `revoked`, and no other partition: they still
 * cannot forge, revive or read a key (issue 18.5).
 */
export const KEY_USE_UPDATE = { partitions: ['KEYS'], attributes: ['last_used'] } as const;

/** What settling a payment writes (`lambdas/services/payments.ts`): payments, their aliases, customers, payment rollups, the list and its counters, the timeline copies, the pending list. */
export const PAYMENT_WRITE_PARTITIONS = [
  'PAY#*',
  'PAYID#*',
  'CUST#*',
  'PR#*',
  'PL#*',
  'PLR#*',
  'PT#*',
  'PU#*',
  'PD#*',
  'VIS#*',
  'PAYPENDING#*',
] as const;

/**
 * What the app function writes (`docs/data-model.md`): users, memberships,
 * sessions, one-time links, sign-in counters and their expiry index, sites,
 * provider connections, API keys, and the payment items that re-crediting a
 * site rewrites; deleting a site removes its webhook log and records the
 * deletion (SITE_DELETIONS). Never visits' rollups, salts, stream markers or FX rates.
 */
export const APP_WRITE_PARTITIONS = [
  'USER#*',
  'ACCOUNT#*',
  'SESSION#*',
  'INVITE#*',
  'ATTEMPTS#*',
  'EXPIRING',
  'SITES',
  'SITE_DELETIONS',
  'PROVIDER#*',
  'WEBHOOK#*',
  'KEYS',
  'APIKEY#*',
  'PAY#*',
  'PAYID#*',
  'PR#*',
  'PL#*',
  'PLR#*',
  'PT#*',
  'PU#*',
  'PD#*',
  'CUST#*',
  'PAYPENDING#*',
  'VIS#*',
] as const;

/**
 * The registry: one entry per function, built, granted and wired by the stack.
 * Adding a function is adding a line. Keys are construct ids and Powertools
 * service names (letters and digits); `appOnly` entries exist only with
 * `-c app=true`.
 */
export const FUNCTIONS = {
  event: {
    entry: 'lambdas/entry/event.ts',
    description:
      'Event ingestion: POST /api/event (its function URL; the HTTP API route for snippets installed before)',
    table: 'readwrite',
    readPartitions: ['SITES'],
    writePartitions: ['SALT'],
    stream: 'put',
    countryDatabase: true,
    hotPath: true,
    // The hot path's own URL: no API Gateway request fee per event (docs/cost.md). The route stays for scripts that post to it.
    url: {
      output: 'EventUrl',
      path: 'api/event',
      description: 'Event endpoint (function URL): where the served script posts; data-api of a self-hosted script',
    },
    // ANY: the handler answers methods other than POST and OPTIONS with a 405 that carries CORS, which API Gateway's own 404 would not.
    routes: [{ path: '/api/event', methods: ['ANY'] }],
  },
  tracker: {
    entry: 'lambdas/entry/tracker-script.ts',
    description: 'Tracking script: GET /v.js (its function URL; the HTTP API route for snippets installed before)',
    memoryMiB: 256,
    hotPath: true,
    url: {
      output: 'TrackingUrl',
      path: 'v.js',
      description: 'The tracking script: <script defer src="…/v.js" data-site="example.com"></script>',
    },
    // The script it serves posts to the event function's URL, wherever it was loaded from.
    urlEnv: { EVENT_URL: 'event' },
    routes: [{ path: '/v.js', methods: ['GET'] }],
  },
  health: {
    entry: 'lambdas/entry/health.ts',
    description: 'Health check: GET /health',
    memoryMiB: 256,
    routes: [{ path: '/health', methods: ['GET'] }],
  },
  sessionize: {
    entry: 'lambdas/entry/sessionize.ts',
    description: 'Sessionizer: visits and rollups from the event stream',
    memoryMiB: 1024,
    timeoutSeconds: 60,
    table: 'readwrite',
    // Settling payments again after their visitors' visits (issue 16.2) reads FX rates and writes payment items.
    readPartitions: ['SITES', 'FX'],
    writePartitions: ['R#*', 'RT#*', 'SHARD#*', ...PAYMENT_WRITE_PARTITIONS],
    stream: 'consume',
  },
  // The functions to come: uncomment each line once its entry file exists.
  report: {
    entry: 'lambdas/entry/report.ts',
    description: 'Report API: GET /api/v1/*',
    appOnly: true,
    table: 'read',
    readPartitions: REPORT_READ_PARTITIONS,
    attributeUpdate: KEY_USE_UPDATE,
    routes: [{ path: '/api/v1/{proxy+}', methods: ['GET'] }],
  },
  mcp: {
    entry: 'lambdas/entry/mcp.ts',
    description: 'MCP server (Streamable HTTP, stateless)',
    appOnly: true,
    table: 'read',
    readPartitions: REPORT_READ_PARTITIONS,
    attributeUpdate: KEY_USE_UPDATE,
    url: { output: 'McpUrl', path: 'mcp' },
  },
  webhook: {
    entry: 'lambdas/entry/webhook.ts',
    description: 'Payment provider webhooks: POST /api/webhooks/{provider}/{domain}',
    table: 'readwrite',
    // The only function that reads the signing secrets (PROVIDER#); it records the last delivery per provider (WEBHOOK#).
    readPartitions: ['SITES', 'PROVIDER#*', 'FX'],
    writePartitions: [...PAYMENT_WRITE_PARTITIONS, 'WEBHOOK#*'],
    secrets: 'open',
    routes: [{ path: '/api/webhooks/{provider}/{domain}', methods: ['POST'] }],
  },
  app: {
    entry: 'lambdas/entry/app.ts',
    description: 'App API: /api/app/* (sign-in, sessions, account settings)',
    appOnly: true,
    // scrypt takes 128 MiB per hash, and Lambda's CPU grows with memory.
    memoryMiB: 1024,
    // A new attribution model credits every payment of the site again, in the request; past
    // API Gateway's 30 s the client gets a 503 while the function finishes the job.
    timeoutSeconds: 60,
    table: 'readwrite',
    writePartitions: APP_WRITE_PARTITIONS,
    secrets: 'seal',
    routes: [{ path: '/api/app/{proxy+}', methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }],
  },
  scheduled: {
    entry: 'lambdas/entry/scheduled.ts',
    description: 'Folds pending rollup deltas into rollups; re-credits payments that arrived before their visits',
    table: 'readwrite',
    readPartitions: ['SITES', 'FX'],
    // R#: the rollups and their delta log (docs/data-model.md, "Rollups: a delta log, compacted").
    writePartitions: ['R#*', ...PAYMENT_WRITE_PARTITIONS],
    everyMinutes: 5,
    timeoutSeconds: 120,
  },
} as const satisfies Record<string, FunctionSpec>;

/** The functions deployed for a configuration: app-only ones only in app mode. */
export function deployedFunctions(
  registry: Readonly<Record<string, FunctionSpec>>,
  options: { app: boolean },
): Array<[string, FunctionSpec]> {
  return Object.entries(registry).filter(([, spec]) => options.app || !spec.appOnly);
}
