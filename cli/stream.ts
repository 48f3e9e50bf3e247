import { Command } from 'commander';
import { localPaths } from '../local/service.js';
import { sessionizePoller } from '../local/consumers.js';
import { contextOf } from './main.js';
import { withLocalStore } from './store.js';

/** `sessionize`: one pass of the sessionizer over the local stream, now. */
export function registerStreamCommands(program: Command): void {
  program
    .command('sessionize')
    .description('sessionize everything on the local stream now (serve also does it every few seconds)')
    .action(async (_opts, command: Command) => {
      const ctx = contextOf(command);
      const processed = await withLocalStore(ctx.dataDir, async (dynamo) => {
        const poller = sessionizePoller(localPaths(ctx.dataDir).stream, dynamo);
        return poller.drain();
      });
      if (ctx.json) ctx.printJson({ records: processed });
      else ctx.print(`sessionized ${processed} records`);
    });
}
