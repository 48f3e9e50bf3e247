import { createRequire } from 'node:module';

/**
 * Makes dynalite 4 close the LevelDB iterators behind its Query and Scan.
 *
 * dynalite 4.0.0 turns `db.values()` into a stream whose `destroy` calls
 * `iterator.return()`, a method abstract-level 3 iterators do not have (they
 * have `close()`), so every Query and Scan left its iterator open until the
 * database closed. Each open iterator pins a LevelDB snapshot: the memtables
 * and table files it sees can never be freed. Under the long reliability load
 * (`docs/reliability.md`) a `footfall serve` grew to gigabytes of memory and
 * of table files for a few hundred MB of events, and in every such run some
 * rollup items read back an older version of themselves, so the day rollups
 * came out short of the stream (figures: `docs/reliability.md` "Bugs these
 * checks found"). With the shim memory and files stay flat, and the rollups add up
 * (`test/adapters/local-dynalite.test.ts` counts the closes).
 *
 * The shim gives the iterators of every abstract-level copy that dynalite's
 * storage uses a `return()` that closes them; `closeDynaliteIterators` applies
 * it before any dynalite starts (`local/dynalite.ts`).
 */
interface IteratorBase {
  close(): Promise<void>;
  return?: () => Promise<{ done: true; value: undefined }>;
}

/**
 * The base class prototype (abstract-level's `CommonIterator`, shared by key,
 * value and entry iterators) of each abstract-level copy behind dynalite's
 * storage: classic-level on disk, memory-level in memory.
 */
export function dynaliteIteratorBases(): IteratorBase[] {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const bases = new Set<IteratorBase>();
  for (const storage of ['classic-level', 'memory-level']) {
    const fromStorage = createRequire(fromDynalite.resolve(storage));
    const { AbstractIterator } = fromStorage('abstract-level') as { AbstractIterator: { prototype: object } };
    bases.add(Object.getPrototypeOf(AbstractIterator.prototype) as IteratorBase);
  }
  return [...bases];
}

/** Gives those iterators a `return()` that closes them (see above). Idempotent. */
export function closeDynaliteIterators(): void {
  for (const base of dynaliteIteratorBases()) {
    if (typeof base.close !== 'function' || base.return) continue;
    Object.defineProperty(base, 'return', {
      configurable: true,
      writable: true,
      value: async function (this: IteratorBase) {
        await this.close();
        return { done: true, value: undefined };
      },
    });
  }
}
