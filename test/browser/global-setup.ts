import { ensureAppBuilt } from '../../app/build.js';

/** Builds the app once before the browser tests, when app/dist/ is missing or older than its sources (CI starts from a clean clone). */
export async function setup(): Promise<void> {
  await ensureAppBuilt((line) => process.stderr.write(`${line}\n`));
}
