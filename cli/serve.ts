import { Command } from 'commander';
import * as z from 'zod';
import { DEFAULT_SESSIONIZE_INTERVAL_MS, startLocalService } from '../local/service.js';
import { contextOf, parseArgs } from './main.js';
import { ensureAppBuilt } from '../app/build.js';

const portSchema = z.coerce.number().int().min(0).max(65_535);

/** Resolves when the process is asked to stop (Ctrl-C or SIGTERM). */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/** `serve`: the whole service in one process (`docs/architecture.md` "Local mode"). */
export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('run the service locally on loopback, with the same handlers as in AWS')
    .option('--app', 'app mode: also serve the report API (/api/v1) and MCP (/mcp)')
    .option('--port <n>', 'port to listen on', process.env.PORT ?? '8787')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option(
      '--sessionize-interval <ms>',
      'how often the stream is sessionized (0: only by `footfall sessionize`)',
      String(DEFAULT_SESSIONIZE_INTERVAL_MS),
    )
    .action(
      async (opts: { app?: boolean; port: string; host: string; sessionizeInterval: string }, command: Command) => {
        const ctx = contextOf(command);
        const port = parseArgs(portSchema, opts.port, '--port');
        const sessionizeIntervalMs = parseArgs(
          z.coerce.number().int().min(0).max(3_600_000),
          opts.sessionizeInterval,
          '--sessionize-interval',
        );
        // App mode serves the dashboard from app/dist/: build it first when the sources changed.
        if (opts.app) await ensureAppBuilt((line) => process.stderr.write(`${line}\n`));
        const service = await startLocalService({
          dataDir: ctx.dataDir,
          port,
          host: opts.host,
          app: opts.app ?? false,
          sessionizeIntervalMs,
        });
        // Listening before the address is announced: a signal sent as soon as it is read closes the service
        // (without a listener, SIGTERM's default ends the process with the database open).
        const stopped = untilSignal();
        if (ctx.json) ctx.printJson({ url: service.url, data: service.dataDir, app: opts.app ?? false });
        else {
          ctx.print(
            `Footfall is running at ${service.url} (data in ${service.dataDir}${opts.app ? ', app mode' : ''})`,
          );
          if (opts.app) ctx.print(`  app:      ${service.url}/  (sign in with a user of \`footfall users add\`)`);
          ctx.print(`  tracker:  ${service.url}/v.js`);
          ctx.print(`  events:   POST ${service.url}/api/event`);
          ctx.print(`  health:   ${service.url}/health`);
        }
        await stopped;
        await service.close();
      },
    );
}
