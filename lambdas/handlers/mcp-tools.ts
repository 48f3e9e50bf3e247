import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@aws-lambda-powertools/logger';
import { BadParameterError, FootfallError, NotFoundError } from '../domain/errors.js';
import { listSites, type ReportDeps } from '../services/reports.js';
import { REPORT_LIST, type ReportSpec } from './report-table.js';

/**
 * The MCP tools (`docs/mcp.md`): the report use cases of `/api/v1`, called the
 * same way, returning the same JSON as structured content and as text. Every
 * tool is read-only. Argument schemas reuse the report API's parameter
 * schemas (same validation) with descriptions written for a model.
 */

/** Server name and version announced at `initialize`. */
export const MCP_SERVER_INFO = { name: 'footfall', version: '0.1.0' } as const;

/** Text a client may show the model once per connection. */
export const MCP_INSTRUCTIONS = [
  'Footfall web analytics with revenue attribution. Every tool is read-only.',
  'Start with list_sites to learn the site domains this key can read; `site` may be left out when there is only one.',
  "Days are local dates (YYYY-MM-DD) in the site's timezone; fields ending in _usd are US dollars net of refunds;",
  "`amount` and `refunded` on payments are integers in the minor unit of the payment's own currency.",
].join(' ');

/** Message of a tool result when the data could not be read (the report API's 503). */
export const RETRY_MESSAGE =
  'The analytics data could not be read just now (a temporary storage error). Retry the same call in a few seconds.';

const site = z
  .string()
  .min(1)
  .optional()
  .describe(
    'Site domain as returned by list_sites, e.g. "example.com". May be left out when the API key\'s account has exactly one site.',
  );

/**
 * A report's tool arguments: `site` for a report of a site, then its path
 * parameters and query parameters (`format` apart) with the report API's
 * schemas, described for a model (`ReportSpec.tool.args`).
 */
function toolInput(report: ReportSpec): z.ZodObject {
  const described = (name: string, schema: z.ZodType): z.ZodType => {
    const arg: string | z.ZodType | undefined = (report.tool.args as Record<string, string | z.ZodType>)[name];
    return typeof arg === 'string' ? schema.describe(arg) : (arg ?? schema);
  };
  const shape = new Map<string, z.ZodType>();
  for (const [, name = ''] of report.path.matchAll(/\{([^}]+)\}/g)) {
    const param = report.params[name];
    shape.set(
      name === 'domain' ? 'site' : name,
      name === 'domain' ? site : described(name, param?.schema ?? z.string()),
    );
  }
  for (const [name, field] of Object.entries(report.query?.shape ?? {}))
    if (name !== 'format') shape.set(name, described(name, field as z.ZodType));
  return z.object(Object.fromEntries(shape));
}

const ok = (body: object): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(body) }],
  structuredContent: body as Record<string, unknown>,
});
const toolError = (message: string): CallToolResult => ({ content: [{ type: 'text', text: message }], isError: true });

/**
 * The site a tool reports on: the `site` argument, or the account's only
 * site when it is left out (`docs/mcp.md` "Tools", argument `site`).
 * @throws BadParameterError listing the choices when the account has none or several
 */
async function siteArgument(deps: ReportDeps, account: string, given: string | undefined): Promise<string> {
  if (given !== undefined) return given;
  const { sites } = await listSites(deps, account);
  if (sites.length === 1 && sites[0]) return sites[0].domain;
  if (sites.length === 0) throw new BadParameterError('site', "this API key's account has no sites yet");
  throw new BadParameterError(
    'site',
    `is required: this account has ${sites.length} sites: ${sites.map((s) => s.domain).join(', ')}. Pass one of them as site.`,
  );
}

/**
 * A tool error's text. Our 400/404 errors keep their message (the same as the
 * report API's `error`); a 404 for a site the key cannot read also lists the
 * sites it can. Anything else is a storage failure: logged, and told to the
 * model as something to retry (the report API's 503).
 */
async function errorText(
  error: unknown,
  deps: ReportDeps,
  account: string,
  given: string | undefined,
  logger: Logger,
  tool: string,
): Promise<string> {
  if (error instanceof FootfallError && error.status < 500) {
    logger.debug('mcp tool rejected', { tool, status: error.status, message: error.message });
    if (error instanceof NotFoundError && given !== undefined) {
      const sites = await listSites(deps, account).then(
        (r) => r.sites.map((s) => s.domain),
        () => null,
      );
      if (sites && !sites.includes(given.toLowerCase())) {
        return `${error.publicMessage}. Sites this API key can read: ${sites.length ? sites.join(', ') : 'none'}.`;
      }
    }
    return error.publicMessage;
  }
  logger.error('mcp tool failed', { tool, error: error as Error });
  return RETRY_MESSAGE;
}

/**
 * A new MCP server with the read-only report tools for one request of
 * `account` (a stateless transport serves one request, `docs/mcp.md` "How
 * it runs"). `deps.store` is the request's report store.
 */
export function createMcpServer(deps: ReportDeps, account: string, logger: Logger): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { instructions: MCP_INSTRUCTIONS });
  for (const report of REPORT_LIST) register(server, report, deps, account, logger);
  return server;
}

function register(server: McpServer, report: ReportSpec, deps: ReportDeps, account: string, logger: Logger): void {
  const { name, title, description } = report.tool;
  server.registerTool(
    name,
    {
      title,
      description,
      inputSchema: toolInput(report),
      outputSchema: report.response,
      annotations: { title, readOnlyHint: true, openWorldHint: false },
    },
    async (args: Record<string, unknown>) => {
      const given = typeof args.site === 'string' ? args.site : undefined;
      try {
        return ok(await report.run(deps, account, args as never, () => siteArgument(deps, account, given)));
      } catch (error) {
        return toolError(await errorText(error, deps, account, given, logger, name));
      }
    },
  );
}
