import { dynaliteStoreClasses } from './dynalite-reads.js';

/**
 * Makes dynalite's LevelDB writes of one turn of the event loop one LevelDB
 * batch, with the same results.
 *
 * dynalite 4 writes every item with its own `put()` (a BatchWriteItem of 25
 * items: 25 puts, each after its own read, all in flight at once). On
 * classic-level each put queues a job on libuv's thread pool, whose threads
 * then take turns at LevelDB's write lock, and wakes the event loop again to
 * settle its promise: per item, work in dynalite's thread and in the pool
 * that one job for all of them does once. The shim collects the puts and
 * deletes issued until the event loop's next check phase (`setImmediate`)
 * and writes them with one `batch()`, in the order they were issued; each
 * caller's promise settles when that batch is written, as its own put's
 * would have (a failed batch fails each of them).
 *
 * Results are the same: dynalite still waits for each write before it
 * answers (and holds its lock on the item until then), so no request sees a
 * write before it would have; a batch applies its operations in order, so
 * two writes of one key end as they would one after the other; LevelDB
 * writes a batch atomically, which only ever makes more writes land
 * together. Writes with `sync` set (dynalite sets none) go on one by one.
 */
interface WriteStore {
  _put(key: unknown, value: unknown, options: WriteOptions): Promise<void>;
  _del(key: unknown, options: WriteOptions): Promise<void>;
  _batch(operations: Operation[], options: WriteOptions): Promise<void>;
}

interface WriteOptions {
  sync?: boolean;
}

type Operation = { type: 'put'; key: unknown; value: unknown } | { type: 'del'; key: unknown };

/** The writes a store collected this turn, and their callers. */
interface Pending {
  operations: Operation[];
  settle: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/** Marks a prototype the shim patched (idempotent). */
const BATCHED_WRITES = Symbol.for('footfall.dynalite.batchedWrites');

/** Per store, the writes waiting for this turn's batch. */
const pendingOf = new WeakMap<WriteStore, Pending>();

/** Adds `operation` to the store's batch of this turn (started on the first), settling when it is written. */
function enqueue(store: WriteStore, operation: Operation): Promise<void> {
  let pending = pendingOf.get(store);
  if (!pending) {
    const started: Pending = { operations: [], settle: [] };
    pendingOf.set(store, (pending = started));
    setImmediate(() => {
      pendingOf.delete(store);
      store._batch(started.operations, {}).then(
        () => started.settle.forEach((s) => s.resolve()),
        (error: unknown) => started.settle.forEach((s) => s.reject(error)),
      );
    });
  }
  const into = pending;
  return new Promise<void>((resolve, reject) => {
    into.operations.push(operation);
    into.settle.push({ resolve, reject });
  });
}

/** Collects each on-disk store's puts and deletes of a turn into one batch (see above). Idempotent. */
export function batchDynaliteWrites(): void {
  // The on-disk store only: an in-memory store's put has no thread pool job to save.
  const [onDisk] = dynaliteStoreClasses();
  const proto = onDisk!.prototype as unknown as WriteStore & { [BATCHED_WRITES]?: true };
  if (proto[BATCHED_WRITES]) return;
  const put = proto._put;
  const del = proto._del;
  Object.defineProperty(proto, '_put', {
    configurable: true,
    writable: true,
    value: function (this: WriteStore, key: unknown, value: unknown, options: WriteOptions) {
      return options.sync ? put.call(this, key, value, options) : enqueue(this, { type: 'put', key, value });
    },
  });
  Object.defineProperty(proto, '_del', {
    configurable: true,
    writable: true,
    value: function (this: WriteStore, key: unknown, options: WriteOptions) {
      return options.sync ? del.call(this, key, options) : enqueue(this, { type: 'del', key });
    },
  });
  Object.defineProperty(proto, BATCHED_WRITES, { value: true });
}
