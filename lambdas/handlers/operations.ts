import type { Telemetry } from '../observability/telemetry.js';
import type { OperationsRun } from '../services/operations.js';

export interface OperationsHandlerDeps extends Pick<Telemetry, 'logger'> {
  /** Advances the queued site deletions and erasures until the deadline, ms since epoch (`advanceOperations`). */
  operations: (deadline: number) => Promise<OperationsRun>;
  /** How long a run may advance them, ms: under the function's timeout, so a step in flight ends before it. */
  budgetMs: number;
  clock: () => number;
}

/**
 * The operations function (EventBridge schedule every `everyMinutes` of `lib/functions.ts`; the twin's
 * scheduled runs locally): carries the site deletions and erasures the app began to the end, in
 * checkpointed steps, within `budgetMs` a run (`docs/deploy.md`, "Deleting a site"; `docs/security.md`,
 * "Erasing a person"). With nothing queued a run reads two small partitions and returns. A run that
 * fails is logged and rethrown (the function's error alarm counts it); the next run resumes from the checkpoints.
 */
export function createOperationsHandler(deps: OperationsHandlerDeps): () => Promise<OperationsRun> {
  return async () => {
    try {
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
