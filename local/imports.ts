import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import type { Provider } from '../lambdas/domain/payments/facts.js';
import { importRunDeps, importStartDeps } from '../lambdas/wiring/import-deps.js';
import { createImportsHandler } from '../lambdas/handlers/imports.js';
import type { Telemetry } from '../lambdas/observability/telemetry.js';
import type { SecretBox } from '../lambdas/ports.js';
import { runHistoryImport, type ImportStartDeps } from '../lambdas/services/history-import.js';
import { FUNCTIONS } from '../lib/functions.js';
import { functionConnection } from './iam/partition-guard.js';
import { functionImportInvoker, functionSecretBox } from './iam/stand-ins.js';

/** Retries Lambda makes of an asynchronous invocation that failed (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html). */
const ASYNC_RETRIES = 2;

/**
 * The imports function on the twin (`lambdas/handlers/imports.ts`): each asynchronous invocation (by
 * the app, or by the function itself) runs the same handler in this process, not awaited by the
 * caller, with the function's timeout (`FUNCTIONS.imports.timeoutSeconds`) as its time left, its own
 * role's grants (table, secrets, invoke) and a failed run retried twice, as Lambda does. Providers' API
 * stand-ins are taken from `env` (`FOOTFALL_<PROVIDER>_API`). `idle()` resolves once no run is in flight.
 */
export function localImports(
  dynamo: DynamoConnection,
  secrets: SecretBox,
  clock: () => number,
  logger: Telemetry['logger'],
  env: Readonly<Record<string, string | undefined>>,
): { start: ImportStartDeps; idle(): Promise<void> } {
  const deps = importRunDeps(functionConnection(dynamo, 'imports'), functionSecretBox(secrets, 'imports'), clock, env);
  const timeoutMs = FUNCTIONS.imports.timeoutSeconds * 1000;
  const inFlight = new Set<Promise<unknown>>();
  const invoke = async (site: string, provider: Provider, run: string): Promise<void> => {
    const attempt = async (retries: number): Promise<unknown> => {
      const started = clock();
      try {
        return await handler(
          { site, provider, run },
          { getRemainingTimeInMillis: () => timeoutMs - (clock() - started) },
        );
      } catch (error) {
        if (retries > 0) return attempt(retries - 1);
        logger.error('imports: invocation failed every retry', { site, provider, error: error as Error });
        return undefined;
      }
    };
    // Queued, as Lambda queues an asynchronous invocation: the caller goes on.
    const running = new Promise((r) => setImmediate(r)).then(() => attempt(ASYNC_RETRIES));
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
  };
  const handler = createImportsHandler({
    logger,
    run: (site, provider, run, deadline) => runHistoryImport(deps, site, provider, run, deadline),
    invoke: functionImportInvoker(invoke, 'imports'),
    clock,
  });
  const app = functionConnection(dynamo, 'app');
  return {
    start: importStartDeps(app, functionSecretBox(secrets, 'app'), functionImportInvoker(invoke, 'app'), clock),
    idle: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
