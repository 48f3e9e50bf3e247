import { randomUUID } from 'node:crypto';
import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoErasureStore } from '../adapters/dynamo/erasure-store.js';
import { DynamoRebuildStore } from '../adapters/dynamo/rebuild-store.js';
import { DynamoRollupStore } from '../adapters/dynamo/rollup-store.js';
import { DynamoSiteDeletionStore } from '../adapters/dynamo/site-deletion-store.js';
import { DynamoVisitStore } from '../adapters/dynamo/visit-store.js';
import { DynamoLookStore } from '../adapters/dynamo/look-store.js';
import { dynamoPaymentDeps } from './payment-deps.js';
import { PaymentTableReads } from '../adapters/dynamo/payments/payment-table-reads.js';
import { namespaceOf } from '../domain/site.js';
import type { ArchiveChanges, ArchiveEraser, ArchiveReader, RecentArchive, VisitTableStore } from '../ports.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { OperationsDeps } from '../services/operations.js';
import { stepRebuild } from '../services/rebuild-steps.js';

export interface OperationsWiring {
  archive: ArchiveReader;
  eraser: ArchiveEraser;
  /** The rebuild fence (`docs/rebuild.md`): writers see a new SITE item and the archive holds what was put before, ms. */
  fenceMs: number;
  /** How long a generation the SITE item no longer names may still be read, ms. */
  drainMs: number;
  /** Brings the archive up to date after a fence (locally: drains the stream; in AWS: nothing). */
  catchUp: () => Promise<void>;
  clock: () => number;
  logger: Telemetry['logger'];
  /**
   * The visit and payments tables and the archive's changed partitions (`docs/data-model.md`, "Filtered
   * reports"): each run writes them after its deletions and erasures. Without it none is written.
   */
  visitTable?: {
    table: VisitTableStore;
    changes: ArchiveChanges;
    changesEveryMs?: number;
    recent?: RecentArchive;
    /**
     * Refreshes a site only while someone looks at it, or once a day (`OnDemand`), runs `runEveryMs` apart, the
     * looks read from the table's LOOK items; without it every site at every run.
     */
    onDemand?: { runEveryMs: number };
  };
}

/** The site deletions, erasures and visit table of `advanceOperations` on the table, the archive of `wiring`. */
export function dynamoOperationsDeps(conn: DynamoConnection, wiring: OperationsWiring): OperationsDeps {
  const { archive, eraser, fenceMs, drainMs, catchUp, clock, logger } = wiring;
  const sites = new DynamoConfigStore(conn);
  const store = new DynamoRebuildStore(conn);
  const erasures = new DynamoErasureStore(conn);
  const payments = dynamoPaymentDeps(conn, clock);
  const rebuild = {
    archive,
    sites,
    store,
    visits: new DynamoVisitStore(conn),
    rollups: new DynamoRollupStore(conn),
    payments,
    clock,
  };
  return {
    ...(wiring.visitTable
      ? {
          visitTable: {
            ...wiring.visitTable,
            onDemand: wiring.visitTable.onDemand
              ? { looks: new DynamoLookStore(conn), runEveryMs: wiring.visitTable.onDemand.runEveryMs }
              : undefined,
            archive,
            payments: new PaymentTableReads(conn, payments.payments),
            rates: payments.rates,
            sites,
            clock,
            logger,
          },
        }
      : {}),
    deletions: {
      sites,
      store: new DynamoSiteDeletionStore(conn),
      namespaces: store,
      archive,
      eraser,
      fenceMs,
      catchUp,
      clock,
      logger,
    },
    erasures: {
      sites,
      store: erasures,
      queue: erasures,
      archive: eraser,
      archiveFenceMs: fenceMs,
      catchUp,
      clock,
      pseudonym: () => `erased_${randomUUID().replaceAll('-', '')}`,
      rebuild: (domain, state, deadline, save) =>
        stepRebuild(
          {
            rebuild,
            fenceMs,
            drainMs,
            catchUp,
            save,
            firstTrackedDay: (site) => store.firstVisitDay(namespaceOf(site)),
          },
          domain,
          state,
          deadline,
        ),
      logger,
    },
  };
}
