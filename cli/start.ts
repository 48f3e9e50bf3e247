import { Command } from 'commander';
import * as z from 'zod';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { startLocalService, type LocalService } from '../local/service.js';
import { DEMO_ACCOUNT, DEMO_SITE, demoKey, seedDemo } from '../local/demo/seed.js';
import { ensureDemoUser, type DemoSignIn } from '../local/demo/user.js';
import { contextOf, parseArgs } from './main.js';
import { untilSignal } from './serve.js';
import { ensureAppBuilt } from '../app/build.js';

const portSchema = z.coerce.number().int().min(0).max(65_535);
const countSchema = (max: number) => z.coerce.number().int().min(1).max(max);

function progressPrinter(tty: boolean) {
  let last = '';
  return (stage: string, done: number, total: number) => {
    const line = `${stage} ${total > 0 ? Math.round((done / total) * 100) : 100}% (${done}/${total})`;
    if (tty) process.stderr.write(`\r${line.padEnd(last.length)}`);
    else if (done === total || done === 0) process.stderr.write(`${line}\n`);
    if (tty && done === total) process.stderr.write('\n');
    last = line;
  };
}

function welcome(service: LocalService, key: string | null, demo: DemoSignIn): string {
  const url = service.url;
  const auth = key ? `-H "Authorization: Bearer ${key}"` : '-H "Authorization: Bearer <key>"';
  const signIn =
    'password' in demo
      ? [`  sign in   ${demo.email}  password ${demo.password}`]
      : [
          `  sign in   ${demo.email}: set a new password at ${demo.link}`,
          '            (a one-time link: the saved demo password was changed in the app)',
        ];
  return [
    `Footfall is running at ${url} (app mode, data in ${service.dataDir})`,
    '',
    `  app       ${url}/`,
    ...signIn,
    '',
    `  tracker   <script defer src="${url}/v.js" data-site="${DEMO_SITE}"></script>`,
    `  events    POST ${url}/api/event`,
    `  reports   ${url}/api/v1/sites   (OpenAPI: ${url}/api/v1/openapi.json)`,
    `  MCP       ${url}/mcp`,
    `  API key   ${key ?? '(none yet)'}`,
    '',
    'Try:',
    `  curl -s ${auth} "${url}/api/v1/sites/${DEMO_SITE}/overview?range=30d"`,
    `  curl -s ${auth} "${url}/api/v1/sites/${DEMO_SITE}/breakdown/channel?range=90d"`,
    `  curl -s -X POST ${url}/api/event -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' -d '{"n":"pageview","u":"https://${DEMO_SITE}/pricing","s":"${DEMO_SITE}"}'`,
    '',
    'Connect an AI assistant (Claude Code):',
    `  claude mcp add --transport http footfall ${url}/mcp --header "Authorization: Bearer ${key ?? '<key>'}"`,
    '',
    'Ctrl-C stops it; the data stays for the next start.',
  ].join('\n');
}

/** `start` (what `npm start` runs) and `demo`: the service with a demo site worth looking at. */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'run the service locally in app mode; the first time, seed a demo site with 90 days of traffic and payments',
    )
    .option('--port <n>', 'port to listen on', process.env.PORT || '8787')
    .option('--days <n>', 'days of demo data on first start', '90')
    .option('--visits-per-day <n>', 'average demo visits per day', '150')
    .action(async (opts: { port: string; days: string; visitsPerDay: string }, command: Command) => {
      const ctx = contextOf(command);
      const port = parseArgs(portSchema, opts.port, '--port');
      const days = parseArgs(countSchema(3650), opts.days, '--days');
      const visitsPerDay = parseArgs(countSchema(100_000), opts.visitsPerDay, '--visits-per-day');
      await ensureAppBuilt((line) => process.stderr.write(`${line}\n`));
      const service = await startLocalService({ dataDir: ctx.dataDir, port, app: true });
      if (!(await new DynamoConfigStore(service.dynamo).getSite(DEMO_SITE))) {
        process.stderr.write(
          `Seeding the demo site ${DEMO_SITE} with ${days} days of traffic and payments (first start only)…\n`,
        );
        await seedDemo(service, { days, visitsPerDay, onProgress: progressPrinter(process.stderr.isTTY) });
      }
      const demo = await ensureDemoUser(service.dynamo, service.dataDir, DEMO_ACCOUNT, service.url);
      const key = await demoKey(service.dataDir);
      // Listening before the address is announced, as `serve` does.
      const stopped = untilSignal();
      ctx.print(welcome(service, key, demo));
      await stopped;
      await service.close();
    });

  program
    .command('demo')
    .description('seed the data directory with the demo site (stop a running serve first)')
    .option('--days <n>', 'days of data', '90')
    .option('--visits-per-day <n>', 'average visits per day', '150')
    .action(async (opts: { days: string; visitsPerDay: string }, command: Command) => {
      const ctx = contextOf(command);
      const days = parseArgs(countSchema(3650), opts.days, '--days');
      const visitsPerDay = parseArgs(countSchema(100_000), opts.visitsPerDay, '--visits-per-day');
      const service = await startLocalService({ dataDir: ctx.dataDir, port: 0, app: true, sessionizeIntervalMs: 0 });
      try {
        const seeded = await seedDemo(service, {
          days,
          visitsPerDay,
          onProgress: ctx.json ? undefined : progressPrinter(process.stderr.isTTY),
        });
        if (ctx.json)
          ctx.printJson({ site: DEMO_SITE, key: seeded.key, events: seeded.events, webhooks: seeded.webhooks });
        else
          ctx.print(
            `demo site ${DEMO_SITE}: ${seeded.events} events, ${seeded.webhooks} Stripe webhooks; API key ${seeded.key}`,
          );
      } finally {
        await service.close();
      }
    });
}
