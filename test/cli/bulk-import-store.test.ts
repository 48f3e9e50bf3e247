import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BULK_IMPORT_STORE } from '../../cli/import-facts.js';
import { withLocalStore } from '../../cli/store.js';

/** Whether the data directory's dynalite answers another process while this thread waits synchronously. */
async function answersWhileBlocked(dataDir: string): Promise<boolean> {
  const { port } = JSON.parse(await readFile(join(dataDir, 'dynalite.json'), 'utf8')) as { port: number };
  try {
    // An unsigned request: the twin refuses it (400); only a dynalite outside this thread can answer at all.
    const status = execFileSync(
      process.execPath,
      ['-e', `fetch('http://127.0.0.1:${port}', { method: 'POST' }).then((r) => console.log(r.status))`],
      { encoding: 'utf8', timeout: 5_000 },
    );
    return status.trim() === '400';
  } catch {
    return false;
  }
}

/**
 * A bulk payment import (`import payments`, a provider's history) runs its own dynalite in a thread of its own
 * (`BULK_IMPORT_STORE`), so the import and dynalite use both cores; other admin commands keep it in theirs.
 */
describe('the local store of a bulk import', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('serves from another thread for a bulk import, from the command thread otherwise', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ff-bulk-store-'));
    dirs.push(root);
    const dataDir = join(root, 'data');
    expect(await withLocalStore(dataDir, () => answersWhileBlocked(dataDir), BULK_IMPORT_STORE)).toBe(true);
    expect(await withLocalStore(dataDir, () => answersWhileBlocked(dataDir))).toBe(false);
  });
});
