import { afterEach, describe, expect, it, vi } from 'vitest';
import { FILTERED_VISITS_METHODS, type FilteredVisits } from '../../lambdas/ports.js';
import { forwardPort, portMethods } from '../../lambdas/forward-port.js';
import { lazyFilteredVisits } from '../../lambdas/adapters/lazy-filtered-visits.js';
import { filteredVisitsInS3 } from '../../lambdas/adapters/s3-filtered-visits.js';
import type { S3TableFiles } from '../../lambdas/adapters/s3-table-files.js';
import { functionFilteredInvoker, functionFilteredVisits } from '../../local/iam/stand-ins.js';
import { LocalFilteredVisits } from '../../local/filtered-visits.js';

/**
 * Every wrapper of the filtered engine (`FilteredVisits`) forwards every method of the port, the
 * list `FILTERED_VISITS_METHODS` declares once: a method forwarded by hand in one wrapper and
 * forgotten in another is what this catches.
 */
const range = { from: '2026-04-01', to: '2026-04-09' };
const filter = ['is', 'visit:channel', ['Search']] as unknown as Parameters<FilteredVisits['totals']>[1];
/** Each method's arguments: the site, filter and range, then a distinct extra so a dropped one shows. */
const argsOf = (method: string) => ['shop.test', filter, range, `${method}-4`, 5, 6];

/** An engine whose each method answers its own name: what reaches it, and what it answers, is visible. */
function recordingEngine() {
  const calls: [string, unknown[]][] = [];
  const engine = Object.fromEntries(
    FILTERED_VISITS_METHODS.map((m) => [
      m,
      async (...args: unknown[]) => {
        calls.push([m, args]);
        return `answer of ${m}`;
      },
    ]),
  ) as unknown as FilteredVisits;
  return { engine, calls };
}

/** Calls every method of the port on `wrapper` and expects each to reach the engine with its arguments. */
async function expectEveryMethodForwarded(wrapper: FilteredVisits, calls: [string, unknown[]][]) {
  for (const method of FILTERED_VISITS_METHODS) {
    expect(typeof wrapper[method], method).toBe('function');
    const args = argsOf(method);
    const call = wrapper[method] as (...a: unknown[]) => Promise<unknown>;
    expect(await call(...args), method).toBe(`answer of ${method}`);
    expect(calls.at(-1), method).toEqual([method, args]);
  }
  expect(calls.map(([m]) => m)).toEqual([...FILTERED_VISITS_METHODS]);
}

afterEach(() => vi.restoreAllMocks());

describe('the wrappers of the filtered engine forward every method of FilteredVisits', () => {
  it('the port list names each method once, and a list missing one does not type-check', () => {
    expect(new Set(FILTERED_VISITS_METHODS).size).toBe(FILTERED_VISITS_METHODS.length);
    // @ts-expect-error a list without `firstPayers` (or any other method of the port) is a compile error
    portMethods<FilteredVisits>()('totals', 'payments');
    // @ts-expect-error a name that is not a method of the port is a compile error
    portMethods<FilteredVisits>()(...FILTERED_VISITS_METHODS, 'nope');
  });

  it('the local engine (LocalFilteredVisits) has every method', () => {
    for (const method of FILTERED_VISITS_METHODS)
      expect(typeof LocalFilteredVisits.prototype[method], method).toBe('function');
  });

  it('the lazy engine of the report and MCP functions builds once, at the first call, and forwards each', async () => {
    const { engine, calls } = recordingEngine();
    const build = vi.fn(async () => engine);
    const lazy = lazyFilteredVisits(build);
    expect(build).not.toHaveBeenCalled();
    await expectEveryMethodForwarded(lazy, calls);
    expect(build).toHaveBeenCalledOnce();
  });

  it('the lazy engine tries a failed build again at the next call', async () => {
    const { engine } = recordingEngine();
    const build = vi.fn().mockRejectedValueOnce(new Error('no layer')).mockResolvedValue(engine);
    const lazy = lazyFilteredVisits(build);
    await expect(lazy.totals('shop.test', filter, range)).rejects.toThrow('no layer');
    expect(await lazy.totals('shop.test', filter, range)).toBe('answer of totals');
    expect(build).toHaveBeenCalledTimes(2);
  });

  it("the twin's IAM stand-in (functionFilteredVisits) forwards each, asking the filtered function's policy", async () => {
    const { engine, calls } = recordingEngine();
    await expectEveryMethodForwarded(functionFilteredVisits(engine, 'filtered'), calls);
    for (const method of FILTERED_VISITS_METHODS) {
      const call = functionFilteredVisits(engine, 'report')[method] as (...a: unknown[]) => Promise<unknown>;
      await expect(call(...argsOf(method)), method).rejects.toThrow(/s3:ListBucket/);
    }
    for (const method of FILTERED_VISITS_METHODS) {
      const call = functionFilteredVisits(engine, 'scheduled')[method] as (...a: unknown[]) => Promise<unknown>;
      await expect(call(...argsOf(method)), method).rejects.toThrow(/s3:ListBucket/);
    }
  });

  it("the twin's invocation of the filtered function (functionFilteredInvoker) forwards each through the wire form, asking the report and MCP functions' policies", async () => {
    const { engine, calls } = recordingEngine();
    await expectEveryMethodForwarded(functionFilteredInvoker(engine, 'report'), calls);
    calls.length = 0;
    await expectEveryMethodForwarded(functionFilteredInvoker(engine, 'mcp'), calls);
    for (const method of FILTERED_VISITS_METHODS) {
      const call = functionFilteredInvoker(engine, 'scheduled')[method] as (...a: unknown[]) => Promise<unknown>;
      await expect(call(...argsOf(method)), method).rejects.toThrow(/lambda:InvokeFunction/);
    }
  });

  it('the S3 engine (filteredVisitsInS3) fetches the files, forwards each to the local engine, and releases them', async () => {
    const { engine, calls } = recordingEngine();
    for (const method of FILTERED_VISITS_METHODS)
      vi.spyOn(LocalFilteredVisits.prototype, method).mockImplementation(engine[method] as never);
    const held = new Set<string>();
    const files = {
      root: '/tmp/footfall-test-visit-table',
      fetch: vi.fn(async (_site: string, paths: string[]) => paths.forEach((p) => held.add(p))),
      release: vi.fn(async (paths: string[]) => paths.forEach((p) => held.delete(p))),
    } as unknown as S3TableFiles;
    await expectEveryMethodForwarded(filteredVisitsInS3(files), calls);
    expect(files.fetch).toHaveBeenCalledTimes(FILTERED_VISITS_METHODS.length);
    expect(held.size).toBe(0);
  });

  it('forwardPort makes exactly the listed methods, on an object without a prototype', () => {
    const { engine } = recordingEngine();
    const wrapper = forwardPort(['totals', 'goals'] as const, () => engine);
    expect(Object.keys(wrapper)).toEqual(['totals', 'goals']);
    expect(Object.getPrototypeOf(wrapper)).toBeNull();
  });
});
