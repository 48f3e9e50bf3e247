import { Command } from 'commander';
import * as z from 'zod';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { startLocalService } from '../local/service.js';
import { contextOf, parseArgs } from './main.js';
import { untilSignal } from './serve.js';

/** The demo account and site `npm start` creates on a fresh data directory. */
export const DEMO_ACCOUNT = 'demo';
export const DEMO_SITE = 'demo.footfall.dev';

/**
 * `start` (what `npm start` runs): `serve --app` on the data directory, with
 * a demo account and site created the first time.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the service locally in app mode with a demo site (what `npm start` runs)')
    .option('--port <n>', 'port to listen on', process.env.PORT || '8787')
    .action(async (opts: { port: string }, command: Command) => {
      const ctx = contextOf(command);
      const port = parseArgs(z.coerce.number().int().min(0).max(65_535), opts.port);
      const service = await startLocalService({ dataDir: ctx.dataDir, port, app: true });
      const store = new DynamoConfigStore(service.dynamo);
      if (!(await store.getAccount(DEMO_ACCOUNT))) await store.addAccount(DEMO_ACCOUNT, new Date());
      if (!(await store.getSite(DEMO_SITE))) {
        await store.addSite({
          domain: DEMO_SITE,
          timezone: 'UTC',
          account: DEMO_ACCOUNT,
          attribution: 'last_non_direct',
          lookback_days: 30,
          rate_limit: 1000,
          created: new Date().toISOString(),
        });
      }
      const url = service.url;
      ctx.print(
        [
          `Footfall is running at ${url} (data in ${service.dataDir})`,
          '',
          `  tracker    ${url}/v.js   <script defer src="${url}/v.js" data-site="${DEMO_SITE}"></script>`,
          `  events     POST ${url}/api/event`,
          `  health     ${url}/health`,
          '',
          'Send a page view:',
          `  curl -i -X POST ${url}/api/event -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' \\`,
          `    -d '{"n":"pageview","u":"https://${DEMO_SITE}/pricing","s":"${DEMO_SITE}","r":"https://news.ycombinator.com/"}'`,
          '',
          'Ctrl-C stops it; the data stays for the next start.',
        ].join('\n'),
      );
      await untilSignal();
      await service.close();
    });
}
