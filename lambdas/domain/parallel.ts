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
