import type { HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import type { StreamAccess, TableAccess } from './lambda-defaults.js';
import { PARTITIONS, PAYMENT_PARTITION_PATTERNS, partitionPatterns } from '../lambdas/adapters/dynamo/items.js';
import { TTL_ATTRIBUTE } from '../lambdas/adapters/dynamo/table.js';
import { OPERATIONS_EVERY_MS } from '../lambdas/services/operations.js';

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
   * Whether several failed scheduled runs in a row raise an alarm (default true). False where the failure is
   * already shown to the one who asked for the work (the app's progress of a deletion or an erasure), so the
   * alarm's $0.10 a month buys nothing a small site needs (docs/cost.md, "Operations").
   */
  failureAlarm?: boolean;
  /** Reserved concurrency: at most this many instances at once (1: one run at a time). */
  reservedConcurrency?: number;
  /**
   * `erase`: reads the archive through Athena and rewrites and deletes its objects (`EventArchive.grantErasure`,
   * lib/archive.ts); sets ATHENA_WORKGROUP, GLUE_DATABASE and EVENTS_BUCKET.
   */
  archive?: 'erase';
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
   * its user may see). Only the webhook function opens what
   * `PROVIDER#*` holds (the sealed webhook signing secrets); the app and
   * operations functions, which write and delete it, cannot.
   */
  readPartitions?: readonly string[];
  /**
   * The key pair of webhook signing secrets in Parameter Store (`docs/security.md`): `seal`
   * grants reading the public key and creating keys (the app function, which stores secrets),
   * `open` grants reading the private keys (the webhook function, which verifies with them);
   * either sets SECRETS_STACK. No other function gets any Parameter Store permission.
   */
  secrets?: 'seal' | 'open';
  /**
   * The narrow writes of a function otherwise `read`: each `dynamodb:UpdateItem`
   * only on items of `partitions` and only of `attributes` (plus the table's
   * key attribute names, which IAM requires in `dynamodb:Attributes`), with
   * no return values; one `filteredOnly` only with `-c filteredReports=true`. See `FootfallFunction.bindTable`.
   */
  attributeUpdates?: ReadonlyArray<AttributeUpdate>;
  /**
   * Functions of the registry it invokes asynchronously (`lambda:InvokeFunction` on each, nothing else of
   * Lambda): each one's name is set as `<NAME>_FUNCTION` (`IMPORTS_FUNCTION`). Its own name invokes itself,
   * which Lambda's `AWS_LAMBDA_FUNCTION_NAME` already names.
   */
  invokes?: readonly string[];
  /** Functions of the registry it invokes only with `-c filteredReports=true`, as `invokes` does. */
  invokesWithFilters?: readonly string[];
  /**
   * How long Lambda keeps an asynchronous invocation it could not run yet (throttled: a run holds the function), s;
   * Lambda's default (6 hours) without it. EventBridge's scheduled invocations are asynchronous too.
   */
  maxEventAgeSeconds?: number;
  /**
   * Deployed only with `-c filteredReports=true` (the `filtered` function); a function that `invokes` it
   * without the flag gets no grant for it, and no `FILTERED_FUNCTION`.
   */
  filteredOnly?: boolean;
  /**
   * The visit table of filtered reports (`docs/data-model.md`, "Filtered reports"), when the stack is deployed
   * with `-c filteredReports=true`: `read` (the filtered function) lists and gets its files, `write` (operations) also puts
   * and deletes them (lib/visit-table.ts `grantVisitTable`; sets VISIT_TABLE_BUCKET). Either puts the function on
   * x86_64 with the DuckDB layer, `FILTERED_MEMORY_MIB` of memory and `/tmp` for the table's files.
   */
  visitTable?: 'read' | 'write';
  /** Gets the IP-to-country database layer and `GEO_DATABASE_PATH` (`docs/ingestion.md` "Country"). */
  countryDatabase?: boolean;
  /**
   * Invoked once per tracked event or script load (the hot path, millions of times a month): no
   * X-Ray traces unless the stack is deployed with `-c hotPathTracing=true`, and no Lambda
   * platform log lines (`START`/`END`/`REPORT`) (`HOT_PATH_LOGGING`). `docs/cost.md`, "Defaults".
   * With `-c hotPathConcurrency=N` its reserved concurrency is N, which also throttles its function
   * URL (`docs/deploy.md`, "Throttling"); with `url`, its URL's 5xx responses raise an alarm.
   */
  hotPath?: boolean;
}

/**
 * Memory of the functions that run DuckDB: one full vCPU (Lambda gives a vCPU per 1,769 MB), for its scans,
 * which are CPU-bound (`docs/cost.md`, "Filtered reports"). Only filtered requests pay for it: the report and
 * MCP functions invoke the filtered function for them and stay at their own memory.
 */
export const FILTERED_MEMORY_MIB = 1769;
/**
 * Timeout of the filtered function, and of the report and MCP functions that wait for it with the flag: API
 * Gateway's HTTP API gives an integration 30 s at most.
 */
export const FILTERED_TIMEOUT_SECONDS = 29;

/** What the report and MCP functions read (`lambdas/adapters/dynamo/items.ts`): sites, keys and sessions to authenticate, and the reports' items. Nothing else; their only writes are `KEY_USE_UPDATE` and `LOOK_UPDATE`. */
export const REPORT_READ_PARTITIONS = partitionPatterns('report', 'read');

/**
 * The report and MCP functions' one write: a key's `last_used` on its `KEYS`
 * item (`lambdas/adapters/dynamo/key-store.ts`, at most every 5 min per key).
 * Not `hash`, `account` or `revoked`, and no other partition: they still
 * cannot forge, revive or read a key (`docs/security.md` "IAM: least privilege").
 */
export const KEY_USE_UPDATE = { partitions: [PARTITIONS.keys.key()], attributes: ['last_used'] } as const;

/**
 * The report and MCP functions' write of a look at a site's reports, with `-c filteredReports=true`: a LOOK
 * item's `looked`, `wanted` and TTL (`lambdas/adapters/dynamo/look-store.ts`, at most every 5 min per site and
 * instance). Not `refreshed`, which the operations function writes: a look cannot say its refresh is done.
 */
export const LOOK_UPDATE = {
  partitions: [PARTITIONS.looks.key()],
  attributes: ['looked', 'wanted', TTL_ATTRIBUTE],
  filteredOnly: true,
} as const;

/** One narrow `dynamodb:UpdateItem` grant (`FunctionSpec.attributeUpdates`). */
export interface AttributeUpdate {
  partitions: readonly string[];
  attributes: readonly string[];
  /** Granted only with `-c filteredReports=true`. */
  filteredOnly?: boolean;
}

/**
 * What settling a payment writes (`lambdas/services/payments.ts`), from the item registry
 * (`lambdas/adapters/dynamo/items.ts`). Every function that settles or re-credits payments writes it.
 */
export const PAYMENT_WRITE_PARTITIONS = PAYMENT_PARTITION_PATTERNS;

/**
 * What the app function writes (`docs/data-model.md`, from the item registry): users, memberships,
 * sessions, one-time links, sign-in counters and their expiry index, sites, provider connections, API
 * keys, and the payment items that re-crediting a site rewrites. Never visits' rollups, salts, stream
 * markers or FX rates.
 */
export const APP_WRITE_PARTITIONS = partitionPatterns('app', 'write');

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
    readPartitions: partitionPatterns('event', 'read'),
    writePartitions: partitionPatterns('event', 'write'),
    stream: 'put',
    countryDatabase: true,
    // Fits in 256 MB (about 75 MiB RSS with the country database); a request is mostly waiting on its
    // Firehose puts, so half the vCPU costs a few ms and halves the GB-seconds (docs/cost.md, "At 100M").
    memoryMiB: 256,
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
    // Settling payments again after their visitors' visits (`docs/payments.md` "Customers and attribution") reads FX rates and writes payment items.
    readPartitions: partitionPatterns('sessionize', 'read'),
    writePartitions: partitionPatterns('sessionize', 'write'),
    stream: 'consume',
  },
  // The functions to come: uncomment each line once its entry file exists.
  report: {
    entry: 'lambdas/entry/report.ts',
    description: 'Report API: GET /api/v1/*',
    appOnly: true,
    table: 'read',
    readPartitions: REPORT_READ_PARTITIONS,
    attributeUpdates: [KEY_USE_UPDATE, LOOK_UPDATE],
    // Filtered reports: a synchronous invocation of the filtered function, so unfiltered ones keep 512 MB arm64.
    invokes: ['filtered'],
    // A look at an idle site asks for its visit table's refresh now (docs/data-model.md, "Filtered reports").
    invokesWithFilters: ['operations'],
    routes: [{ path: '/api/v1/{proxy+}', methods: ['GET'] }],
  },
  mcp: {
    entry: 'lambdas/entry/mcp.ts',
    description: 'MCP server (Streamable HTTP, stateless)',
    appOnly: true,
    table: 'read',
    readPartitions: REPORT_READ_PARTITIONS,
    attributeUpdates: [KEY_USE_UPDATE, LOOK_UPDATE],
    invokes: ['filtered'],
    invokesWithFilters: ['operations'],
    url: { output: 'McpUrl', path: 'mcp' },
  },
  filtered: {
    entry: 'lambdas/entry/filtered-function.ts',
    description: 'Filtered reports: DuckDB over the visit table, invoked by the report and MCP functions',
    appOnly: true,
    filteredOnly: true,
    // x86_64, FILTERED_MEMORY_MIB, the DuckDB layer, /tmp for the table's files and FILTERED_TIMEOUT_SECONDS.
    visitTable: 'read',
  },
  webhook: {
    entry: 'lambdas/entry/webhook.ts',
    description: 'Payment provider webhooks: POST /api/webhooks/{provider}/{domain}',
    table: 'readwrite',
    // The only function that reads the signing secrets (PROVIDER#); it records the last delivery per provider (WEBHOOK#).
    readPartitions: partitionPatterns('webhook', 'read'),
    writePartitions: partitionPatterns('webhook', 'write'),
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
    // "Import history" starts the imports function (docs/payments.md, "Importing a provider's history").
    invokes: ['imports'],
    routes: [{ path: '/api/app/{proxy+}', methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }],
  },
  imports: {
    entry: 'lambdas/entry/imports.ts',
    description: "Imports a provider's payment history begun in the app, in runs that checkpoint and invoke the next",
    appOnly: true,
    // The bulk import holds a batch's payments and their customers in memory, and credits them in parallel.
    memoryMiB: 1024,
    // Lambda's maximum: a run stops starting batches a minute before it (IMPORT_RUN_MARGIN_MS), saves, invokes the next.
    timeoutSeconds: 900,
    table: 'readwrite',
    // What settling payments reads (sites, FX rates, visits) and writes, and its job (IMPORTJOB#).
    readPartitions: partitionPatterns('imports', 'read'),
    writePartitions: partitionPatterns('imports', 'write'),
    // Opens the job's sealed API key (the same key pair as webhook secrets, bound to `<provider>-import`).
    secrets: 'open',
    invokes: ['imports'],
  },
  scheduled: {
    entry: 'lambdas/entry/scheduled.ts',
    description: 'Folds pending rollup deltas into rollups; re-credits payments that arrived before their visits',
    table: 'readwrite',
    readPartitions: partitionPatterns('scheduled', 'read'),
    // R#: the rollups and their delta log (docs/data-model.md, "Rollups: a delta log, compacted").
    writePartitions: partitionPatterns('scheduled', 'write'),
    everyMinutes: 5,
    timeoutSeconds: 120,
  },
  operations: {
    entry: 'lambdas/entry/operations.ts',
    description: 'Carries the site deletions and erasures begun in the app to the end, in checkpointed steps',
    appOnly: true,
    // A rebuild after an erasure folds a site's events into rollups in memory, as the sessionizer does.
    memoryMiB: 1024,
    // Lambda's maximum: a run starts steps for 10 minutes and its last Athena query gives up after 4 (lambdas/entry/operations.ts).
    timeoutSeconds: 900,
    // One run at a time: two runs would advance the same checkpoint.
    reservedConcurrency: 1,
    table: 'readwrite',
    readPartitions: partitionPatterns('operations', 'read'),
    // Every partition of a deleted site or an erased person's site, in every generation (docs/data-model.md).
    writePartitions: partitionPatterns('operations', 'write'),
    archive: 'erase',
    // Writes the visit table after the deletions and erasures of each run.
    visitTable: 'write',
    // Nothing queued: two small Queries and back (docs/cost.md, "Operations"); an erasure waits out a 24.5-minute fence anyway.
    everyMinutes: OPERATIONS_EVERY_MS / 60_000,
    // A refresh a look asked for that waited a whole schedule behind a run is served by the next run anyway.
    maxEventAgeSeconds: OPERATIONS_EVERY_MS / 1000,
    // A failed step shows in the app's progress of the deletion or erasure, and is retried every run.
    failureAlarm: false,
  },
} as const satisfies Record<string, FunctionSpec>;

/** The functions deployed for a configuration: app-only ones only in app mode, the filtered function only with `filteredReports`. */
export function deployedFunctions(
  registry: Readonly<Record<string, FunctionSpec>>,
  options: { app: boolean; filteredReports?: boolean },
): Array<[string, FunctionSpec]> {
  return Object.entries(registry).filter(
    ([, spec]) => (options.app || !spec.appOnly) && (options.filteredReports === true || !spec.filteredOnly),
  );
}
