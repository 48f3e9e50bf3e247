import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@aws-lambda-powertools/logger';
import { BadParameterError, FootfallError, NotFoundError } from '../domain/errors.js';
import { RANGE_NAMES } from '../domain/range.js';
import { DIMENSIONS } from '../domain/rollup.js';
import {
  BREAKDOWN_LIMIT,
  PAYMENTS_LIMIT,
  breakdownParams,
  breakdownResponse,
  goalsParams,
  realtimeParams,
  realtimeResponse,
  goalsResponse,
  overviewResponse,
  paymentsParams,
  paymentsResponse,
  rangeParams,
  retentionResponse,
  sitesResponse,
  timelineResponse,
  timeseriesParams,
  timeseriesResponse,
} from '../domain/reports/schemas.js';
import { INTERVAL_MAX_DAYS } from '../domain/reports/timeseries.js';
import {
  breakdown,
  goals,
  realtime,
  listPayments,
  listSites,
  overview,
  retention,
  timeseries,
  visitorTimeline,
  type ReportDeps,
} from '../services/reports.js';

/**
 * The MCP tools (spec §4.5): the report use cases of `/api/v1`, called the
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
const rangeFields = {
  range: rangeParams.shape.range.describe(
    `Named range ending today in the site's timezone: ${RANGE_NAMES.join(', ')} (12m = twelve months, all = since tracking started). ` +
      'Default 30d, or all for a site tracked 30 days or less. Ignored when from and to are given.',
  ),
  from: rangeParams.shape.from.describe(
    "First day of an explicit range, YYYY-MM-DD, inclusive, in the site's timezone. Give together with to; they win over range.",
  ),
  to: rangeParams.shape.to.describe(
    'Last day of an explicit range, YYYY-MM-DD, inclusive. Give together with from; at most 10 years after from.',
  ),
};

const dimension = z
  .enum(DIMENSIONS)
  .describe(
    'What to group by: channel (Search, Social, AI, Direct, …), referrer (referring domain), campaign (utm_campaign), keyword (utm_term), ' +
      'landing_page (first page of the visit), page (every page viewed; a payment counts for each page of its credited visit), ' +
      'country (two-letter code), device (Desktop, Mobile, Tablet, Unknown), browser, os, language.',
  );

/** Tool argument schemas (zod); the handler also uses them for the JSON Schema the client sees. */
export const TOOL_INPUTS = {
  list_sites: z.object({}),
  get_overview: z.object({ site, ...rangeFields }),
  get_timeseries: z.object({
    site,
    ...rangeFields,
    interval: timeseriesParams.shape.interval.describe(
      `Points per local hour, day or month. Default: hour for a one-day range, day up to ${INTERVAL_MAX_DAYS.day} days, month beyond. ` +
        `hour takes a range of at most ${INTERVAL_MAX_DAYS.hour} days, day at most ${INTERVAL_MAX_DAYS.day}.`,
    ),
  }),
  get_breakdown: z.object({
    site,
    dimension,
    ...rangeFields,
    limit: breakdownParams.shape.limit.describe(
      `Most rows to return, 1 to ${BREAKDOWN_LIMIT.max} (default ${BREAKDOWN_LIMIT.default}); rows are ordered by revenue, then visitors, and total counts them all.`,
    ),
  }),
  get_goals: z.object({
    site,
    ...rangeFields,
    goal: goalsParams.shape.goal.describe(
      'Only this goal. "Outbound Link: Click" gives one row per clicked link URL. Leave out for one row per goal name.',
    ),
    limit: goalsParams.shape.limit.describe(
      `Most rows to return, 1 to ${BREAKDOWN_LIMIT.max} (default ${BREAKDOWN_LIMIT.default}); rows are ordered by revenue, then visitors, and total counts them all.`,
    ),
  }),
  get_realtime: z.object({
    site,
    limit: realtimeParams.shape.limit.describe('Most pages and referrers to return, 1 to 100 (default 10).'),
  }),
  get_retention: z.object({ site, ...rangeFields }),
  list_payments: z.object({
    site,
    ...rangeFields,
    filter: paymentsParams.shape.filter.describe(
      'Which payments: all (default, failed ones included), attributed (credited to a visit), unattributed (no credited visit) or refunded (partly or fully).',
    ),
    limit: paymentsParams.shape.limit.describe(
      `Most payments to return, 1 to ${PAYMENTS_LIMIT.max} (default ${PAYMENTS_LIMIT.default}); total in the result counts all that match.`,
    ),
    offset: paymentsParams.shape.offset.describe(
      'Payments to skip, for paging (default 0): use offset = previous offset + limit for the next page.',
    ),
  }),
  get_visitor_timeline: z.object({
    site,
    visitor_id: z
      .string()
      .min(1)
      .max(200)
      .describe(
        'The visitor to show: the `visitor` field of a payment from list_payments (or a visitor ID your site stored).',
      ),
  }),
} as const;

type ToolName = keyof typeof TOOL_INPUTS;

interface ToolSpec<N extends ToolName> {
  title: string;
  description: string;
  output: z.ZodObject;
  run(
    deps: ReportDeps,
    account: string,
    args: z.output<(typeof TOOL_INPUTS)[N]>,
    site: () => Promise<string>,
  ): Promise<object>;
}

const TOOLS: { [N in ToolName]: ToolSpec<N> } = {
  list_sites: {
    title: 'List sites',
    description:
      'The sites (domain and timezone) this API key can read. Call it first to find the `site` argument of the other tools.',
    output: sitesResponse,
    run: (deps, account) => listSites(deps, account),
  },
  get_overview: {
    title: 'Overview totals',
    description:
      'Totals of a site over a date range and over the period of equal length just before it: visitors, sessions, payments, customers, ' +
      'revenue_usd (net of refunds), conversion (converted / visitors, where converted counts the customers whose visitor was tracked in the range; spec §2.4) and revenue_per_visitor, and the top stats: pageviews, views_per_visit, ' +
      'bounce_rate (visits with one page view and no goal / visits, 0 to 1) and visit_duration (mean seconds of the visits with more than one event), ' +
      'plus the relative change of each (0.25 = 25% more; null when the previous value was 0).',
    output: overviewResponse,
    run: async (deps, account, args, site) => overview(deps, account, await site(), args),
  },
  get_timeseries: {
    title: 'Time series',
    description:
      'Visitors, sessions (visits), page views, payments and revenue_usd (net of refunds) per local hour, day or month of a date range, every point of the range included, oldest first. ' +
      "Sessions, payments and revenue of the points add up to get_overview's for the same range; visitors are distinct within each point, so they do not add up across points. " +
      'Use it for trends, peaks and "which day did revenue come in".',
    output: timeseriesResponse,
    run: async (deps, account, args, site) => timeseries(deps, account, await site(), args, args.interval),
  },
  get_breakdown: {
    title: 'Breakdown by dimension',
    description:
      'Visitors and credited revenue per value of one dimension (channel, referrer, campaign, keyword, landing page, page, country, device, browser, OS, language) over a date range. ' +
      "Each payment is credited to one visit by the site's attribution model; payments with no credited visit form the row labelled Unattributed. " +
      'Rows: visitors, payments, customers, revenue_usd, revenue_per_visitor, most revenue first.',
    output: breakdownResponse,
    run: async (deps, account, args, site) => breakdown(deps, account, await site(), args.dimension, args, args.limit),
  },
  get_goals: {
    title: 'Goal conversions',
    description:
      'Goals (custom events such as Signup, and outbound link clicks) over a date range: per goal, the distinct visitors who completed it, the visits and completions, ' +
      'conversion_rate (completing visitors / all visitors of the range, 0 to 1) and revenue_usd of the payments credited to visits in which the goal happened. ' +
      'Pass goal="Outbound Link: Click" to see which links were clicked. Most revenue first.',
    output: goalsResponse,
    run: async (deps, account, args, site) => goals(deps, account, await site(), args, args.goal ?? null, args.limit),
  },
  get_realtime: {
    title: 'Current visitors',
    description:
      'Visitors on the site right now: distinct visitors with an event in the last 5 minutes, the pages they viewed and the referrers of their visits, most visitors first. ' +
      'Counted once the sessionizer has processed their events, so it can lag by its batching window (seconds). No date range.',
    output: realtimeResponse,
    run: async (deps, account, args, site) => realtime(deps, account, await site(), args.limit),
  },
  get_retention: {
    title: 'Retention and lifetime value',
    description:
      'Customer retention and lifetime value of the customers whose first payment falls in the range, in total and grouped by the channel, referrer and campaign credited for that first payment: ' +
      'customers, still paying, net LTV, average LTV, refund rate and churn. day_one is true while there are under 60 days of payments (LTV is not meaningful yet).',
    output: retentionResponse,
    run: async (deps, account, args, site) => retention(deps, account, await site(), args),
  },
  list_payments: {
    title: 'List payments',
    description:
      'Payments of a date range, newest first: provider, amount and currency, amount_usd and net_usd (net of refunds), status, whether it is a renewal, ' +
      "the visit credited for it (touch: channel, referrer, campaign, landing page, country, device; null when unattributed), the payer's first visit (first_touch) " +
      'and `visitor`, the value to pass to get_visitor_timeline.',
    output: paymentsResponse,
    run: async (deps, account, args, site) =>
      listPayments(deps, account, await site(), args, args.filter, args.limit, args.offset),
  },
  get_visitor_timeline: {
    title: 'Visitor timeline',
    description:
      "One visitor's history, oldest first: each visit with its channel, referrer, campaign, pages viewed (seconds on each page), goals, how it ended (exit page or outbound link) and payments made during it, " +
      'plus payments outside a visit such as renewals. Useful to see the journey of a customer before they paid.',
    output: timelineResponse,
    run: async (deps, account, args, site) => visitorTimeline(deps, account, await site(), args.visitor_id),
  },
};

/** The names of the tools, in the order `tools/list` gives them. */
export const TOOL_NAMES = Object.keys(TOOLS) as ToolName[];

const ok = (body: object): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(body) }],
  structuredContent: body as Record<string, unknown>,
});
const toolError = (message: string): CallToolResult => ({ content: [{ type: 'text', text: message }], isError: true });

/**
 * The site a tool reports on: the `site` argument, or the account's only
 * site when it is left out (spec §4.5 argument rule 1).
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
 * `account` (a stateless transport serves one request, DESIGN.md "MCP
 * transport"). `deps.store` is the request's report store.
 */
export function createMcpServer(deps: ReportDeps, account: string, logger: Logger): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { instructions: MCP_INSTRUCTIONS });
  for (const name of TOOL_NAMES) register(server, name, deps, account, logger);
  return server;
}

function register<N extends ToolName>(
  server: McpServer,
  name: N,
  deps: ReportDeps,
  account: string,
  logger: Logger,
): void {
  const tool = TOOLS[name] as ToolSpec<N>;
  const inputSchema = TOOL_INPUTS[name] as z.ZodObject;
  server.registerTool(
    name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema,
      outputSchema: tool.output,
      annotations: { title: tool.title, readOnlyHint: true, openWorldHint: false },
    },
    async (raw: Record<string, unknown>) => {
      const args = raw as z.output<(typeof TOOL_INPUTS)[N]>;
      const given = typeof raw.site === 'string' ? raw.site : undefined;
      try {
        return ok(await tool.run(deps, account, args, () => siteArgument(deps, account, given)));
      } catch (error) {
        return toolError(await errorText(error, deps, account, given, logger, name));
      }
    },
  );
}
