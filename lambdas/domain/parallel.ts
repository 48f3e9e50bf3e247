/**
 * Runs `fn` over `items` with at most `limit` calls in flight, each item once;
 * rejects with the first failure (the calls already started run on).
 */
export async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** What `writeBehind` returns: `add` items as they come, then `done` once. */
export interface WriteBehind<T> {
  /** Buffers `item`; a full buffer is queued for writing, and the call waits while an earlier buffer is still being written. */
  add(item: T): Promise<void>;
  /** Queues what is buffered and waits for every write; rejects with the first failure. */
  done(): Promise<void>;
}

/**
 * Hands items to `write` `size` at a time, one buffer written while the next fills, so a caller
 * producing items (reading, computing) and the writes overlap; the writes run one after another, in
 * the order the buffers filled. Memory: the buffer filling, and one queued buffer for each caller waiting in
 * `add` (a single caller: two buffers). A failed write fails the next `add` (or `done`) and no later buffer is
 * written.
 */
export function writeBehind<T>(size: number, write: (batch: T[]) => Promise<unknown>): WriteBehind<T> {
  let buffer: T[] = [];
  let last: Promise<unknown> = Promise.resolve();
  const send = async () => {
    const batch = buffer;
    buffer = [];
    const previous = last;
    last = previous.then(() => write(batch));
    // Awaited by the next `send` or by `done`: a failure meanwhile must not go unhandled.
    last.catch(() => undefined);
    await previous;
  };
  return {
    add: async (item) => {
      buffer.push(item);
      if (buffer.length >= size) await send();
    },
    done: async () => {
      if (buffer.length > 0) await send();
      await last;
    },
  };
}
