import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoReportStore } from '../adapters/dynamo/report-store.js';
import { DynamoKeyStore } from '../adapters/dynamo/key-store.js';
import { DynamoFxStore, FxRates } from '../adapters/dynamo/fx-store.js';
import { usdRateOf } from '../domain/payments/fx.js';
import { DynamoUserStore } from '../adapters/dynamo/user-store.js';
import { DynamoSessionStore } from '../adapters/dynamo/session-store.js';
import { sessionOf } from '../services/auth.js';
import type { ReportHandlerDeps } from '../handlers/report.js';
import { DynamoShareLinkStore } from '../adapters/dynamo/share-link-store.js';
import type { ReportDeps } from '../services/reports.js';
import type { FilteredVisits } from '../ports.js';
import { freshFilteredVisits, type TableLooks } from '../services/table-looks.js';

/**
 * The report use cases' dependencies on the single table, and the filtered reports' engine
 * (`filtered`: `S3FilteredVisits` in AWS, `LocalFilteredVisits` locally; without it a request with
 * `filters` is a 400), and who looks at a site's reports (`looks`: each request a look, each filtered call
 * waiting for a refresh a look asked for, `freshFilteredVisits`). `store()` gives a fresh report store per request so that its read cost counts
 * one report.
 */
export function dynamoReportDeps(
  conn: DynamoConnection,
  clock: () => number = Date.now,
  filtered?: FilteredVisits,
  looks?: TableLooks,
): Omit<ReportHandlerDeps, 'logger' | 'metrics'> {
  const fx = new FxRates(new DynamoFxStore(conn));
  // Only what a session check reads (no payments or settings code in the report bundle).
  const auth = { users: new DynamoUserStore(conn), sessions: new DynamoSessionStore(conn), clock };
  const sites = new DynamoConfigStore(conn);
  return {
    sites,
    store: () => new DynamoReportStore(conn),
    keys: new DynamoKeyStore(conn),
    sessions: { accountOf: async (token) => (await sessionOf(auth, token))?.user.account ?? null },
    rates: async () => usdRateOf(await fx.table()),
    shares: { links: new DynamoShareLinkStore(conn), sites, clock },
    clock,
    ...(filtered ? { filtered: looks ? freshFilteredVisits(filtered, looks) : filtered } : {}),
    ...(looks ? { looks } : {}),
  };
}

/**
 * The report use cases' own dependencies, without authentication: what the email reports of the
 * scheduled function read (`lambdas/services/email-reports.ts`), through the same report code.
 */
export function dynamoReportServiceDeps(conn: DynamoConnection, clock: () => number = Date.now): ReportDeps {
  const fx = new FxRates(new DynamoFxStore(conn));
  return {
    sites: new DynamoConfigStore(conn),
    store: new DynamoReportStore(conn),
    rates: async () => usdRateOf(await fx.table()),
    clock,
  };
}
