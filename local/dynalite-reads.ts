import { createRequire } from 'node:module';

/**
 * Makes dynalite's LevelDB reads synchronous, with the same results.
 *
 * dynalite 4 reads LevelDB once or twice for every item it writes or reads
 * (the table's description, then the old item), each with the store's
 * `get()`. On classic-level that queues a job on libuv's thread pool (taking a
 * LevelDB snapshot first), wakes the event loop again with the value and
 * settles a promise: about 15 µs of CPU a read, against 3 µs for the same read
 * with `getSync()`, which abstract-level 3 stores also offer (a LevelDB `Get`
 * from its block cache or files in the calling thread). The shim answers each
 * `get()` from it (`docs/benchmarks.md`, "Import of payments").
 *
 * Results are the same: an asynchronous get reads from a snapshot taken at the
 * call, a synchronous one reads the state at the call, and nothing runs in
 * between. Writes stay as they were, and dynalite still waits for each write
 * before it answers; every check of DynamoDB's rules (item size, key schema,
 * conditions, capacity) and of the request's signature is unchanged, above
 * the store.
 */
interface LevelStore {
  _get(key: unknown, options: unknown): Promise<unknown>;
  _getSync?(key: unknown, options: unknown): unknown;
}

/** Marks a prototype the shim patched (idempotent). */
const SYNC_READS = Symbol.for('footfall.dynalite.syncReads');

/** The store classes behind dynalite's storage, as dynalite loads them: classic-level on disk, memory-level in memory. */
export function dynaliteStoreClasses(): Array<{ prototype: LevelStore }> {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  return [
    (fromDynalite('classic-level') as { ClassicLevel: { prototype: LevelStore } }).ClassicLevel,
    (fromDynalite('memory-level') as { MemoryLevel: { prototype: LevelStore } }).MemoryLevel,
  ];
}

/** Answers each store's `_get` from its `_getSync` where it has one (see above). Idempotent. */
export function syncDynaliteReads(): void {
  for (const { prototype } of dynaliteStoreClasses()) {
    const proto = prototype as LevelStore & { [SYNC_READS]?: true };
    if (proto[SYNC_READS] || typeof proto._getSync !== 'function') continue;
    Object.defineProperty(proto, '_get', {
      configurable: true,
      writable: true,
      // async: a throw (a closed database, a corrupt file) becomes the rejection the asynchronous read gave.
      value: async function (this: LevelStore, key: unknown, options: unknown) {
        return this._getSync!(key, options);
      },
    });
    Object.defineProperty(proto, SYNC_READS, { value: true });
  }
}
