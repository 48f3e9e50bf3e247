import { describe, expect, it } from 'vitest';
import { writeBehind } from '../../lambdas/domain/parallel.js';

/** A write the test finishes by hand, and what it was given. */
function manualWrites() {
  const calls: Array<{ batch: number[]; finish: (error?: Error) => void }> = [];
  const write = (batch: number[]) =>
    new Promise<void>((resolve, reject) =>
      calls.push({ batch, finish: (error) => (error ? reject(error) : resolve()) }),
    );
  return { calls, write };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('writeBehind', () => {
  it('writes full buffers while the next fills, one after another, in order, and the rest at done', async () => {
    const { calls, write } = manualWrites();
    const w = writeBehind(2, write);
    await w.add(1);
    expect(calls).toHaveLength(0);
    // The first full buffer: the caller goes on while it is written.
    await w.add(2);
    await tick();
    expect(calls.map((c) => c.batch)).toEqual([[1, 2]]);
    await w.add(3);
    // The second buffer waits for the first write, and so does the caller that filled it.
    let returned = false;
    const adding = w.add(4).then(() => (returned = true));
    await tick();
    expect(calls).toHaveLength(1);
    expect(returned).toBe(false);
    calls[0]!.finish();
    await adding;
    await tick();
    expect(calls.map((c) => c.batch)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await w.add(5);
    let done = false;
    const finishing = w.done().then(() => (done = true));
    await tick();
    // `done` waits for every write, the last partial buffer's after the one before it.
    expect(calls).toHaveLength(2);
    calls[1]!.finish();
    await tick();
    expect(calls.map((c) => c.batch)).toEqual([[1, 2], [3, 4], [5]]);
    expect(done).toBe(false);
    calls[2]!.finish();
    await finishing;
    expect(done).toBe(true);
  });

  it('fails the next add or done after a failed write, and writes no later buffer', async () => {
    const { calls, write } = manualWrites();
    const w = writeBehind(1, write);
    await w.add(1);
    const next = w.add(2);
    await tick();
    calls[0]!.finish(new Error('throttled'));
    await expect(next).rejects.toThrow('throttled');
    await expect(w.done()).rejects.toThrow('throttled');
    await tick();
    expect(calls.map((c) => c.batch)).toEqual([[1]]);
  });
});
