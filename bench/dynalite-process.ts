import { openLocalDynamo } from '../local/dynalite.js';

/**
 * `node bin/run-ts.js bench/dynalite-process.ts <dir>`: dynalite on LevelDB
 * in `<dir>/db`, in a process of its own, for the bench site's table
 * (`bench/bench-table.ts`). It holds the directory as `serve` does (its port
 * and credential in `<dir>/dynalite.json`), so the bench attaches with
 * `openLocalDynamo(dir, 'cli')`; the table's items stay on disk instead of
 * in the bench's heap, and dynalite's work runs on another core than the
 * loader's. Prints `ready` once it listens; exits on SIGTERM or when its
 * standard input closes (the bench exited).
 */
const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: bench/dynalite-process.ts <dir>\n');
  process.exit(2);
}
const db = await openLocalDynamo(dir, 'serve');
process.stdout.write('ready\n');
let closing = false;
const close = async () => {
  if (closing) return;
  closing = true;
  await db.close();
  process.exit(0);
};
process.once('SIGTERM', () => void close());
process.stdin.on('end', () => void close());
process.stdin.resume();
