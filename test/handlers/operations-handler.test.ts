import { describe, expect, it } from 'vitest';
import { createOperationsHandler } from '../../lambdas/handlers/operations.js';
import type { OperationsRun } from '../../lambdas/services/operations.js';

/** The operations function's handler: a run's deadline, its one log line, and a failure the schedule's error alarm sees. */
describe('the operations handler', () => {
  const setup = (
    operations: (deadline: number) => Promise<OperationsRun>,
    refresh?: (domain: string) => Promise<OperationsRun>,
  ) => {
    const lines: Array<[string, string, unknown]> = [];
    const logger = {
      info: (message: string, extra: unknown) => void lines.push(['info', message, extra]),
      error: (message: string, extra: unknown) => void lines.push(['error', message, extra]),
    };
    const handler = createOperationsHandler({
      logger: logger as never,
      operations,
      ...(refresh ? { refresh } : {}),
      budgetMs: 600_000,
      clock: () => 1_000,
    });
    return { handler, lines };
  };

  it('gives the driver the clock plus its budget, and an idle run writes no line', async () => {
    const deadlines: number[] = [];
    const { handler, lines } = setup(async (deadline) => {
      deadlines.push(deadline);
      return { deletions: 0, erasures: 0 };
    });
    expect(await handler()).toEqual({ deletions: 0, erasures: 0 });
    expect(deadlines).toEqual([601_000]);
    expect(lines).toEqual([]);
  });

  it("refreshes one site for a look's `{refresh}` event, and runs the schedule for any other event", async () => {
    const runs: string[] = [];
    const { handler } = setup(
      async () => {
        runs.push('scheduled');
        return { deletions: 0, erasures: 0 };
      },
      async (domain) => {
        runs.push(`refresh ${domain}`);
        return { deletions: 0, erasures: 0, refreshed: 1 };
      },
    );
    expect(await handler({ refresh: 'Shop.test' })).toEqual({ deletions: 0, erasures: 0, refreshed: 1 });
    await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} });
    await handler({ refresh: '' });
    expect(runs).toEqual(['refresh shop.test', 'scheduled', 'scheduled']);
  });

  it('logs a run that finished something', async () => {
    const { handler, lines } = setup(async () => ({ deletions: 1, erasures: 2 }));
    await handler();
    expect(lines).toEqual([['info', 'operations run', { deletions: 1, erasures: 2 }]]);
  });

  it('logs a failure and rethrows it, so the invocation counts as an error', async () => {
    const failure = new Error('throttled');
    const { handler, lines } = setup(async () => {
      throw failure;
    });
    await expect(handler()).rejects.toBe(failure);
    expect(lines).toEqual([
      ['error', 'site deletions and erasures failed; the next run resumes them', { error: failure }],
    ]);
  });
});
