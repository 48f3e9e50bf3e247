import * as z from 'zod';
import { PROVIDERS, type Provider } from '../domain/payments/facts.js';
import type { ImportRunOutcome } from '../services/history-import.js';
import type { Telemetry } from '../observability/telemetry.js';

/** The event the app (and the function itself) invokes it with: the job's site, provider and run id. */
export const importInvocation = z.object({
  site: z.string().min(1).max(253),
  provider: z.enum(PROVIDERS),
  run: z.string().min(1).max(64),
});
export type ImportInvocation = z.infer<typeof importInvocation>;

export interface ImportsHandlerDeps extends Pick<Telemetry, 'logger'> {
  /** Advances the job until `deadline`, ms since epoch (`runHistoryImport`). */
  run(site: string, provider: Provider, run: string, deadline: number): Promise<ImportRunOutcome>;
  /** Invokes the function again, asynchronously, with the same event (`LambdaImportInvoker`). */
  invoke(site: string, provider: Provider, run: string): Promise<void>;
  clock: () => number;
}

/**
 * Time left for the last batch's import and save when a run stops starting batches, ms: a batch
 * (1,000 objects: at most 10 pages, then a bulk import) takes seconds; a minute leaves room for a
 * provider's slow answers and a back-off (`docs/payments.md`, "Importing a provider's history").
 */
export const IMPORT_RUN_MARGIN_MS = 60_000;

/**
 * The imports function (invoked asynchronously by the app's "Import history", and by itself):
 * advances one provider history import until a minute before its timeout (`remainingMs`), then,
 * when lists are left, invokes itself again with the same event and returns. A run that throws is
 * logged and rethrown: Lambda retries an asynchronous invocation twice, and the job resumes at its
 * saved cursor. An event of another shape is logged and dropped.
 */
export function createImportsHandler(
  deps: ImportsHandlerDeps,
): (event: unknown, context: { getRemainingTimeInMillis(): number }) => Promise<ImportRunOutcome | 'invalid'> {
  return async (event, context) => {
    const parsed = importInvocation.safeParse(event);
    if (!parsed.success) {
      deps.logger.error('imports: an event of another shape, dropped', { issue: parsed.error.issues[0]?.message });
      return 'invalid';
    }
    const { site, provider, run } = parsed.data;
    const deadline = deps.clock() + context.getRemainingTimeInMillis() - IMPORT_RUN_MARGIN_MS;
    try {
      const outcome = await deps.run(site, provider, run, deadline);
      if (outcome === 'continue') await deps.invoke(site, provider, run);
      deps.logger.info('import run', { site, provider, outcome });
      return outcome;
    } catch (error) {
      deps.logger.error('import run failed; Lambda retries it from the saved cursor', {
        site,
        provider,
        error: error as Error,
      });
      throw error;
    }
  };
}
