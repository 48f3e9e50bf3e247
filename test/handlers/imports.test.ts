import { describe, expect, it } from 'vitest';
import { IMPORT_RUN_MARGIN_MS, createImportsHandler } from '../../lambdas/handlers/imports.js';
import type { ImportRunOutcome } from '../../lambdas/services/history-import.js';
import { createTelemetry } from '../../lambdas/observability/telemetry.js';

/** The imports function's handler: a run until a minute before the timeout, then the next invocation when lists are left. */

const NOW = 1_764_201_600_000;
const EVENT = { site: 'shop.test', provider: 'stripe', run: 'r1' };

function handlerWith(outcome: ImportRunOutcome) {
  const runs: Array<[string, string, string, number]> = [];
  const invoked: Array<[string, string, string]> = [];
  const handler = createImportsHandler({
    logger: createTelemetry('imports-test').logger,
    run: async (site, provider, run, deadline) => (runs.push([site, provider, run, deadline]), outcome),
    invoke: async (site, provider, run) => void invoked.push([site, provider, run]),
    clock: () => NOW,
  });
  return { handler, runs, invoked };
}
const context = { getRemainingTimeInMillis: () => 900_000 };

describe('the imports function', () => {
  it('runs until a minute before its timeout, then invokes itself with the same event when lists are left', async () => {
    const { handler, runs, invoked } = handlerWith('continue');
    expect(await handler(EVENT, context)).toBe('continue');
    expect(runs).toEqual([['shop.test', 'stripe', 'r1', NOW + 900_000 - IMPORT_RUN_MARGIN_MS]]);
    expect(invoked).toEqual([['shop.test', 'stripe', 'r1']]);
  });

  it.each(['done', 'failed', 'superseded', 'idle'] as const)(
    'does not invoke itself after a run that ends %s',
    async (outcome) => {
      const { handler, invoked } = handlerWith(outcome);
      expect(await handler(EVENT, context)).toBe(outcome);
      expect(invoked).toEqual([]);
    },
  );

  it('drops an event of another shape without running anything', async () => {
    const { handler, runs } = handlerWith('done');
    expect(await handler({ ...EVENT, provider: 'gumroad' }, context)).toBe('invalid');
    expect(await handler('{}', context)).toBe('invalid');
    expect(runs).toEqual([]);
  });
});
