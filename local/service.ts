import { join, resolve } from 'node:path';
import { rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createDynamoConnection, type DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { ensureTable } from '../lambdas/adapters/dynamo/table.js';
import { LocalEventStream } from '../lambdas/adapters/local-stream.js';
import { createEventHandler } from '../lambdas/handlers/event.js';
import { dynamoEventDeps } from '../lambdas/wiring/event-deps.js';
import { createWebhookHandler } from '../lambdas/handlers/webhook.js';
import { createScheduledHandler } from '../lambdas/handlers/scheduled.js';
import { createReportHandler } from '../lambdas/handlers/report.js';
import { createMcpHandler } from '../lambdas/handlers/mcp.js';
import { dynamoReportDeps, dynamoReportServiceDeps } from '../lambdas/wiring/report-deps.js';
import { dynamoScheduledDeps } from '../lambdas/wiring/scheduled-deps.js';
import { healthHandler } from '../lambdas/handlers/health.js';
import { createTrackerScriptHandler } from '../lambdas/handlers/tracker-script.js';
import { createTelemetry } from '../lambdas/observability/telemetry.js';
import { buildTrackerSync } from '../tracker/build.js';
import { createAppHandler } from '../lambdas/handlers/app.js';
import { dynamoAuthDeps, dynamoSettingsDeps, dynamoShareDeps } from '../lambdas/wiring/app-deps.js';
import { sweepExpired } from '../lambdas/adapters/dynamo/expiry.js';
import { dynamoWebhookDeps } from '../lambdas/wiring/webhook-deps.js';
import { LocalSecretBox } from '../lambdas/adapters/secrets/local-secret-box.js';
import type { SecretBox } from '../lambdas/ports.js';
import { APP_DIST } from '../app/build.js';
import { staticAppHandler } from './static-app.js';
import { DynamoEmailReportStore } from '../lambdas/adapters/dynamo/email-report-store.js';
import { emailReportSender } from '../lambdas/services/email-reports.js';
import { LOCAL_REPORT_SENDER, outboxSender } from './outbox.js';

/** The running server's URL, for admin commands' links (`cli/users.ts`). */
export const SERVER_FILE = 'server.json';
import { openLocalDynamo, type LocalDynamo } from './dynalite.js';
import { ANY_METHOD, createLocalServer, type Route } from './server.js';
import { LOCAL_SITE_CACHE_TTL_MS, archivePoller, sessionizePoller } from './consumers.js';
import { functionConnection } from './iam/partition-guard.js';
import {
  functionArchiveChanges,
  functionArchiveObjects,
  functionArchiveEraser,
  functionArchiveReader,
  functionFilteredInvoker,
  functionRefreshInvoker,
  functionSecretBox,
  functionStream,
  functionVisitTable,
} from './iam/stand-ins.js';
import { LocalArchiveChanges } from './archive-changes.js';
import { LocalArchiveObjects } from './archive-objects.js';
import { ArchiveCopies } from '../lambdas/adapters/archive-copies.js';
import { CountryDatabase } from '../lambdas/adapters/country-database.js';
import { countryDatabasePath } from './geo.js';
import { DuckDbArchiveReader } from './archive-reader.js';
import { LocalVisitTable } from './visit-table.js';
import { LocalFilteredVisits } from './filtered-visits.js';
import { LocalArchiveEraser } from './archive-eraser.js';
import { dynamoOperationsDeps } from '../lambdas/wiring/operations-deps.js';
import { advanceOperations, refreshAskedFor } from '../lambdas/services/operations.js';
import { TableLooks } from '../lambdas/services/table-looks.js';
import { DynamoLookStore } from '../lambdas/adapters/dynamo/look-store.js';
import { createOperationsHandler } from '../lambdas/handlers/operations.js';
import { DynamoImportJobStore } from '../lambdas/adapters/dynamo/import-job-store.js';
import { localImports } from './imports.js';

/** Default interval of the local event source mapping, ms (`--sessionize-interval`). */
export const DEFAULT_SESSIONIZE_INTERVAL_MS = 2000;
/** How long one run of the operations function may advance site deletions and erasures locally, ms (the rest resumes at the next run). */
const LOCAL_OPERATIONS_BUDGET_MS = 60_000;

/** Table name in local mode (dynalite wants 3+ characters). */
export const LOCAL_TABLE = 'footfall';

export interface LocalServiceOptions {
  /** Data directory (`.data/` by default): dynalite's LevelDB, the stream log, the archive. */
  dataDir: string;
  port: number;
  host?: string;
  /** App mode (`docs/architecture.md` "App mode"): serve `/api/v1`, `/mcp`, `/api/app` and the app's files. Without it they answer 404. */
  app: boolean;
  /** The built app to serve in app mode. @default app/dist */
  appDist?: string;
  clock?: () => number;
  /** How often the local stream is handed to the sessionizer, ms; 0 leaves it to `sessionize()`. */
  sessionizeIntervalMs?: number;
  /**
   * Whether dynalite runs in a thread of its own (`local/dynalite-thread.ts`) or in the server's; the
   * benchmark of the dashboard compares the two (`docs/benchmarks.md`). @default true
   */
  dynaliteThread?: boolean;
  /**
   * Whether the report and MCP functions have the filtered engine and the operations runs write its visit table, as
   * an AWS stack deployed with `-c filteredReports=true`; false answers as one deployed without it (`filters` and the
   * properties reports a 400, the app told so: `docs/app.md`, "What the deployment answers"). @default true
   */
  filteredReports?: boolean;
}

export interface LocalService {
  url: string;
  dataDir: string;
  dynamo: DynamoConnection;
  /** Seals and opens webhook secrets with the data directory's key file (`docs/security.md`). */
  secrets: SecretBox;
  /** Runs the sessionizer over everything on the stream now; resolves with the records processed. */
  sessionize(): Promise<number>;
  /** Writes everything on the stream to the Parquet archive now. */
  archive(): Promise<number>;
  /** Runs the scheduled function (rollup compaction, re-crediting pending payments, due email reports), then the operations function (site deletions and erasures), now. */
  scheduled(): Promise<{
    sites: number;
    recredited: number;
    compacted: number;
    mailed: number;
    deletions?: number;
    erasures?: number;
  }>;
  /** Resolves once no run of the imports function (a provider history import begun in the app) is in flight. */
  importsIdle(): Promise<void>;
  close(): Promise<void>;
}

/** The data directory's parts. */
export const localPaths = (dataDir: string) => ({
  stream: join(dataDir, 'stream'),
  archive: join(dataDir, 'archive'),
  /** The visit and payments tables of filtered reports (`local/visit-table.ts`). */
  visitTable: join(dataDir, 'visit-table'),
  /** The operations function's copies of the archive's recent objects (its `/tmp` in AWS; `ArchiveCopies`). */
  archiveCopies: join(dataDir, 'archive-copies'),
});

/**
 * Opens the local stand-ins of a data directory for an admin command or the
 * server: dynalite (attached or owned, see `openLocalDynamo`) and the table.
 */
export async function openLocalStore(
  dataDir: string,
  role: 'serve' | 'cli',
  options: { dynaliteThread?: boolean } = {},
): Promise<{ dynamo: DynamoConnection; db: LocalDynamo }> {
  const db = await openLocalDynamo(resolve(dataDir), role, { thread: options.dynaliteThread });
  const dynamo = createDynamoConnection({ table: LOCAL_TABLE, endpoint: db.endpoint, credentials: db.credentials });
  await ensureTable(dynamo);
  return { dynamo, db };
}

/** Why a listen failed, for the one-line message of `PortUnavailableError`. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'needs privileges this user does not have',
  EADDRNOTAVAIL: 'is on an address this machine does not have',
};

/** The port of `serve`/`start` cannot be listened on (in use, privileged, no such address). */
export class PortUnavailableError extends Error {
  constructor(
    readonly port: number,
    readonly host: string,
    readonly code: string,
  ) {
    super(
      `port ${port} on ${host} ${LISTEN_FAILURES[code] ?? `cannot be listened on (${code})`}: ` +
        'stop what listens there, or choose another port with --port <n> or the PORT environment variable',
    );
  }
}

/**
 * Listens on `host:port`.
 * @throws PortUnavailableError for the errors of `LISTEN_FAILURES`, else the listen error itself
 */
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code && error.code in LISTEN_FAILURES ? new PortUnavailableError(port, host, error.code) : error),
    );
    server.listen(port, host, () => resolveListen());
  });
}

/**
 * Starts the whole service in this process on loopback, with the same
 * handlers as in AWS (`docs/architecture.md` "Local mode").
 */
export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  const dataDir = resolve(options.dataDir);
  const clock = options.clock ?? Date.now;
  const { dynamo, db } = await openLocalStore(dataDir, 'serve', { dynaliteThread: options.dynaliteThread });
  const stream = await LocalEventStream.open(localPaths(dataDir).stream, clock);
  const telemetry = createTelemetry('footfall-local');

  // Each function's code reads and writes through its own role's grant, as in AWS (local/iam/partition-guard.ts).
  const as = (name: Parameters<typeof functionConnection>[1]) => functionConnection(dynamo, name);
  const event = as('event');
  const webhook = as('webhook');
  const report = as('report');
  const mcp = as('mcp');
  const app = as('app');
  const scheduledConn = as('scheduled');
  const operationsConn = as('operations');
  const paths = localPaths(dataDir);
  // Filtered reports read the visit table the operations runs write (`docs/data-model.md`, "Filtered reports").
  const visitTable = new LocalVisitTable(paths.visitTable);
  const filtered = new LocalFilteredVisits(paths.visitTable);
  const withEngine = options.filteredReports ?? true;
  const eventHandler = createEventHandler(
    dynamoEventDeps(event, {
      telemetry,
      clock,
      // As in AWS: read once at start; the local server passes the client address as `sourceIp`.
      countries: CountryDatabase.open(countryDatabasePath(dataDir)),
      stream: functionStream(stream, 'event'),
      siteCacheTtlMs: LOCAL_SITE_CACHE_TTL_MS,
    }),
  );
  const secrets = await LocalSecretBox.open(dataDir);
  // The webhook function opens the signing secrets (a private key's ssm:GetParameter), the app function seals them (the public key's).
  const webhookHandler = createWebhookHandler(
    dynamoWebhookDeps(webhook, { telemetry, box: functionSecretBox(secrets, 'webhook'), clock }),
  );
  const routes: Route[] = [
    { methods: ['POST'], path: '/api/webhooks/{provider}/{domain}', handler: webhookHandler, functionName: 'webhook' },
    // ANY, as in the stack: the handler answers other methods 405 with CORS.
    { methods: ANY_METHOD, path: '/api/event', handler: eventHandler, functionName: 'event', cors: true },
    { methods: ['GET'], path: '/health', handler: healthHandler, functionName: 'health' },
    {
      methods: ['GET'],
      path: '/v.js',
      handler: createTrackerScriptHandler(buildTrackerSync()),
      functionName: 'tracker',
    },
  ];
  // The imports function, invoked by the app's "Import history" and by itself (local/imports.ts).
  const imports = localImports(dynamo, secrets, clock, telemetry.logger, process.env);
  // The operations function's runs, one at a time as its reserved concurrency 1 gives in AWS: the scheduled ones
  // and the refreshes looks ask for, which Lambda would queue behind a run.
  let operationsTail: Promise<unknown> = Promise.resolve();
  const oneOperation = <T>(work: () => Promise<T>): Promise<T> => {
    const next = operationsTail.then(work);
    operationsTail = next.catch(() => undefined);
    return next;
  };
  // A report or MCP request is a look at its site; a look at an idle site invokes the operations function for it,
  // not waited for, as Lambda's asynchronous invocation (`docs/data-model.md`, "Filtered reports", *On demand*).
  const looksOf = (conn: DynamoConnection, name: 'report' | 'mcp') =>
    withEngine
      ? new TableLooks({
          marks: new DynamoLookStore(conn),
          refresh: functionRefreshInvoker(async (site) => {
            void oneOperation(() => runOperations({ refresh: site })).catch(() => undefined);
          }, name),
          clock,
          logger: telemetry.logger,
        })
      : undefined;
  // The app's own origins, once the server listens: its pages may call /mcp (`docs/mcp.md`, "Origin").
  let appOrigins: string[] = [];
  if (options.app) {
    routes.push({
      methods: ['GET'],
      path: '/api/v1/{proxy+}',
      handler: createReportHandler({
        ...telemetry,
        ...dynamoReportDeps(
          report,
          clock,
          withEngine ? functionFilteredInvoker(filtered, 'report') : undefined,
          looksOf(report, 'report'),
        ),
      }),
      functionName: 'report',
    });
    // A Lambda function URL in AWS; GET and DELETE reach the handler, which answers 405 itself.
    routes.push({
      methods: ['GET', 'POST', 'DELETE'],
      path: '/mcp',
      handler: createMcpHandler({
        ...telemetry,
        ...dynamoReportDeps(
          mcp,
          clock,
          withEngine ? functionFilteredInvoker(filtered, 'mcp') : undefined,
          looksOf(mcp, 'mcp'),
        ),
        allowedOrigins: () => appOrigins,
      }),
      functionName: 'mcp',
    });
    routes.push({
      methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      path: '/api/app/{proxy+}',
      handler: createAppHandler({
        ...telemetry,
        auth: dynamoAuthDeps(app, clock),
        settings: dynamoSettingsDeps(app, functionSecretBox(secrets, 'app'), clock),
        shares: dynamoShareDeps(app, clock),
        emailReports: { store: new DynamoEmailReportStore(app), from: LOCAL_REPORT_SENDER },
        imports: { start: imports.start, jobs: new DynamoImportJobStore(app) },
        cookieSecurity: 'local',
        capabilities: { filtered_reports: withEngine },
      }),
      functionName: 'app',
    });
  }
  const server = createLocalServer(routes, {
    fallback: options.app ? staticAppHandler(options.appDist ?? APP_DIST) : undefined,
    log: telemetry.logger,
  });
  const host = options.host ?? '127.0.0.1';
  try {
    await listen(server, options.port, host);
  } catch (error) {
    // Release what is open so the process can exit instead of hanging on dynalite and the stream.
    await stream.close();
    dynamo.doc.destroy();
    await db.close();
    throw error;
  }
  // What DynamoDB's TTL deletes in AWS (sessions, one-time links, sign-in counters), swept here every minute.
  const sweep = setInterval(
    () => void sweepExpired(dynamo, clock()).catch((e) => telemetry.logger.error('expiry sweep failed', e as Error)),
    60_000,
  );
  sweep.unref();
  let url = '';
  const sessionizer = sessionizePoller(
    paths.stream,
    dynamo,
    (error) => telemetry.logger.error('sessionizer batch failed', error as Error),
    clock,
  );
  const archiver = archivePoller(paths.stream, paths.archive, (error) =>
    telemetry.logger.error('archive batch failed', error as Error),
  );
  const interval = options.sessionizeIntervalMs ?? DEFAULT_SESSIONIZE_INTERVAL_MS;
  // The EventBridge schedules run every 5 and 15 minutes in AWS; locally, right after the sessionizer catches up.
  const scheduleMs = Math.max(interval * 5, 5_000);
  const catchUp = async () => {
    await sessionizer.drain();
    await archiver.poller.drain();
  };
  const operationsArchive = functionArchiveReader(new DuckDbArchiveReader(paths.archive), 'operations');
  const operations = dynamoOperationsDeps(operationsConn, {
    archive: operationsArchive,
    eraser: functionArchiveEraser(new LocalArchiveEraser(paths.archive), 'operations'),
    // Every writer's site cache expires, then the stream is drained into the archive (`localMode`, cli/rebuild.ts).
    fenceMs: LOCAL_SITE_CACHE_TTL_MS + 1000,
    drainMs: LOCAL_SITE_CACHE_TTL_MS + 1000,
    catchUp,
    clock,
    logger: telemetry.logger,
    visitTable: withEngine
      ? {
          table: functionVisitTable(visitTable, 'operations'),
          recent: new ArchiveCopies(
            functionArchiveObjects(new LocalArchiveObjects(paths.archive), 'operations'),
            paths.archiveCopies,
          ),
          changes: functionArchiveChanges(new LocalArchiveChanges(paths.archive), 'operations'),
          onDemand: { runEveryMs: scheduleMs },
        }
      : undefined,
  });
  const runScheduled = createScheduledHandler(
    dynamoScheduledDeps(scheduledConn, {
      telemetry,
      clock,
      // Email reports go to the outbox folder (`local/outbox.ts`), linking to this server once it listens.
      emailReports: options.app
        ? (site) =>
            emailReportSender(
              {
                reports: dynamoReportServiceDeps(scheduledConn, clock),
                store: new DynamoEmailReportStore(scheduledConn),
                sender: outboxSender(dataDir, 'scheduled'),
                from: LOCAL_REPORT_SENDER,
                appUrl: url,
              },
              telemetry.logger,
            )(site)
        : undefined,
    }),
  );
  // The operations function, on its own schedule in AWS (lib/functions.ts); locally after each scheduled run.
  const { visitTable: tables } = operations;
  const runOperations = createOperationsHandler({
    logger: telemetry.logger,
    operations: (deadline) => advanceOperations(operations, deadline),
    ...(tables ? { refresh: (domain: string) => refreshAskedFor(tables, domain) } : {}),
    budgetMs: LOCAL_OPERATIONS_BUDGET_MS,
    clock,
  });
  const runBoth = async () => {
    const run = await runScheduled();
    // Logged by the handler; the next run resumes from the checkpoints, as the next schedule does in AWS.
    const advanced = await oneOperation(() => runOperations()).catch(() => undefined);
    return { ...run, ...advanced };
  };
  // One run at a time, as reserved concurrency 1 and the schedules give in AWS: a run still advancing an erasure is joined.
  let running: ReturnType<typeof runBoth> | null = null;
  const scheduled = () => (running ??= runBoth().finally(() => (running = null)));
  let schedule: NodeJS.Timeout | undefined;
  if (interval > 0) {
    sessionizer.start(interval);
    // Firehose buffers for a minute or more; locally the archive follows within seconds.
    archiver.poller.start(interval * 2);
    // The EventBridge schedule runs every 5 minutes in AWS; locally, right after the sessionizer catches up.
    schedule = setInterval(
      () => void scheduled().catch((e) => telemetry.logger.error('scheduled run failed', e as Error)),
      scheduleMs,
    );
  }
  const { port } = server.address() as AddressInfo;
  url = `http://${host}:${port}`;
  appOrigins = [url, `http://localhost:${port}`];
  // So admin commands can print links to this server (`footfall users add`).
  await writeFile(join(dataDir, SERVER_FILE), JSON.stringify({ url, pid: process.pid }));
  return {
    url,
    dataDir,
    dynamo,
    secrets,
    sessionize: () => sessionizer.drain(),
    archive: () => archiver.poller.drain(),
    scheduled: () => scheduled(),
    importsIdle: () => imports.idle(),
    close: async () => {
      clearInterval(schedule);
      clearInterval(sweep);
      // A scheduled run already under way still writes the visit table; the data directory may be removed once it ends.
      await running?.catch(() => undefined);
      await operationsTail;
      await imports.idle();
      await sessionizer.stop();
      await archiver.close();
      await visitTable.close();
      await filtered.close();
      await rm(join(dataDir, SERVER_FILE), { force: true });
      await new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await stream.close();
      dynamo.doc.destroy();
      await db.close();
    },
  };
}
