import * as z from 'zod';
import type { Telemetry } from '../observability/telemetry.js';
import type { OperationsRun } from '../services/operations.js';

export interface OperationsHandlerDeps extends Pick<Telemetry, 'logger'> {
  /** Advances the queued site deletions and erasures until the deadline, ms since epoch (`advanceOperations`). */
  operations: (deadline: number) => Promise<OperationsRun>;
  /** The refresh of one site's visit table a look asked for (`refreshAskedFor`); without it such an event is a scheduled run. */
  refresh?: (domain: string) => Promise<OperationsRun>;
  /** How long a run may advance them, ms: under the function's timeout, so a step in flight ends before it. */
  budgetMs: number;
  clock: () => number;
}

/** The event of an asynchronous invocation by the report or MCP function (`TableLooks.seen`). */
export const refreshEvent = z.object({ refresh: z.string().min(1).max(253) });

/**
 * The operations function (EventBridge schedule every `everyMinutes` of `lib/functions.ts`; the twin's
 * scheduled runs locally): carries the site deletions and erasures the app began to the end, in
 * checkpointed steps, within `budgetMs` a run (`docs/deploy.md`, "Deleting a site"; `docs/security.md`,
 * "Erasing a person"), then refreshes the visit tables due. With nothing queued a run reads two small
 * partitions and returns. An event `{refresh: <domain>}` refreshes that site's visit table alone
 * (`docs/data-model.md`, "Filtered reports", *On demand*). A run that fails is logged and rethrown (the
 * function's error alarm counts it); the next run resumes from the checkpoints.
 */
export function createOperationsHandler(deps: OperationsHandlerDeps): (event?: unknown) => Promise<OperationsRun> {
  return async (event) => {
    const asked = refreshEvent.safeParse(event);
    try {
      if (asked.success && deps.refresh) return await deps.refresh(asked.data.refresh.toLowerCase());
      const run = await deps.operations(deps.clock() + deps.budgetMs);
      // Logged only when a run finished something: an idle run (every 15 minutes) writes no line of its own.
      if (run.deletions + run.erasures > 0) deps.logger.info('operations run', { ...run });
      return run;
    } catch (error) {
      deps.logger.error('site deletions and erasures failed; the next run resumes them', { error: error as Error });
      throw error;
    }
  };
}
