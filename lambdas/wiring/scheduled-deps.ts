import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoRollupStore } from '../adapters/dynamo/rollup-store.js';
import type { ScheduledDeps } from '../handlers/scheduled.js';
import type { Telemetry } from '../observability/telemetry.js';
import { dynamoPaymentDeps } from './payment-deps.js';

/**
 * The scheduled function's dependencies on the single table, for the Lambda entry
 * (`lambdas/entry/scheduled.ts`) and the local service alike: the sites, the rollup compactor, the
 * payment stores (pending credits), and the email reports' sender when one is configured.
 */
export function dynamoScheduledDeps(
  conn: DynamoConnection,
  wiring: { telemetry: Telemetry; emailReports?: ScheduledDeps['emailReports']; clock?: () => number },
): ScheduledDeps {
  return {
    ...wiring.telemetry,
    ...dynamoPaymentDeps(conn, wiring.clock),
    sites: new DynamoConfigStore(conn),
    rollups: new DynamoRollupStore(conn),
    emailReports: wiring.emailReports,
  };
}
