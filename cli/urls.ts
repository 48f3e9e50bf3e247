import * as z from 'zod';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SERVER_FILE } from '../local/service.js';
import { alive } from '../local/dynalite.js';
import { parseArgs } from './usage.js';
import type { CliContext } from './main.js';

const urlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' })
  .transform((u) => u.replace(/\/+$/, ''));

/** How to read a deployed stack's API address (`docs/deploy.md`, "Outputs"). */
export const API_URL_LOOKUP =
  'aws cloudformation describe-stacks --stack-name Footfall --query "Stacks[0].Outputs[?OutputKey==\'ApiUrl\'].OutputValue" --output text';

/**
 * The base URL (no trailing slash) of the addresses a command prints: `--url`
 * when given; else, locally, the running server's URL (`<data>/server.json`)
 * or the URL a server started now would have (`PORT`, else 8787); with
 * `--aws` and no `--url`, null: the CLI reaches the stack's table, not its
 * outputs, so it does not know the stack's address.
 * @throws UsageError for a `--url` that is not an http(s) address
 */
export async function baseUrl(ctx: CliContext, url: string | undefined): Promise<string | null> {
  if (url !== undefined) return parseArgs(urlSchema, url, '--url');
  if (ctx.aws) return null;
  const running = await readFile(join(ctx.dataDir, SERVER_FILE), 'utf8').then(
    (t) => JSON.parse(t) as { url?: string; pid?: number },
    () => null,
  );
  return running?.url && running.pid && alive(running.pid)
    ? running.url
    : `http://127.0.0.1:${process.env.PORT || '8787'}`;
}
