import { Command } from 'commander';
import { localPaths } from '../local/service.js';
import { archivePoller, sessionizePoller } from '../local/consumers.js';
import { contextOf } from './main.js';
import { localOnly, withLocalStore } from './store.js';

/** `sessionize`: one pass of the sessionizer over the local stream, now. */
export function registerStreamCommands(program: Command): void {
  program
    .command('sessionize')
    .description('sessionize and archive everything on the local stream now (serve also does it every few seconds)')
    .action(async (_opts, command: Command) => {
      const ctx = contextOf(command);
      const paths = localPaths(ctx.dataDir);
      localOnly(ctx, 'sessionize');
      const result = await withLocalStore(ctx.dataDir, async (dynamo) => {
        const sessionized = await sessionizePoller(paths.stream, dynamo).drain();
        const archive = archivePoller(paths.stream, paths.archive);
        try {
          return { sessionized, archived: await archive.poller.drain() };
        } finally {
          await archive.close();
        }
      });
      if (ctx.json) ctx.printJson(result);
      else ctx.print(`sessionized ${result.sessionized} records, archived ${result.archived}`);
    });
}
