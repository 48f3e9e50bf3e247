import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalService, type LocalService } from '../../local/service.js';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { site } from './events.js';
import type { SiteConfig } from '../../lambdas/domain/site.js';

/**
 * A local service on a fresh temp data directory with account `acme` and the given sites. Dynalite runs in the
 * calling thread, as admin commands run it, unless `dynaliteThread` is true: the thread `serve` gives it loads tsx
 * and dynalite again for every service, CPU a test pays on two busy cores, and only
 * `test/adapters/dynalite-thread.test.ts` tests that thread (through `serve` itself).
 */
export async function startTestService(
  sites: Array<Partial<SiteConfig>> = [{}],
  options: {
    app?: boolean;
    clock?: () => number;
    sessionizeIntervalMs?: number;
    dynaliteThread?: boolean;
    /** False: a deployment without the filtered engine (`LocalServiceOptions.filteredReports`). */
    filteredReports?: boolean;
  } = {},
): Promise<LocalService & { cleanup(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ff-svc-'));
  const service = await startLocalService({
    dataDir,
    port: 0,
    app: options.app ?? false,
    clock: options.clock,
    sessionizeIntervalMs: options.sessionizeIntervalMs,
    dynaliteThread: options.dynaliteThread ?? false,
    filteredReports: options.filteredReports,
  });
  const store = new DynamoConfigStore(service.dynamo);
  await store.addAccount('acme', new Date());
  for (const s of sites) await store.addSite(site(s));
  return {
    ...service,
    cleanup: async () => {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
