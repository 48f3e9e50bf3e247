import * as z from 'zod';
import { RANGE_NAMES, type DateRange } from '../domain/range.js';
import {
  BREAKDOWN_LIMIT,
  PAYMENTS_LIMIT,
  breakdownParams,
  breakdownResponse,
  breakdownRowSchema,
  dimensionParam,
  goalRowSchema,
  goalsParams,
  goalsResponse,
  overviewResponse,
  paymentRowSchema,
  paymentsParams,
  paymentsResponse,
  PROPERTIES_LIMIT,
  propKeyRowSchema,
  propertiesParams,
  propertiesResponse,
  rangeParams,
  realtimeParams,
  realtimeResponse,
  retentionResponse,
  sitesResponse,
  timelineResponse,
  timeseriesParams,
  timeseriesResponse,
} from '../domain/reports/schemas.js';
import { INTERVAL_MAX_DAYS } from '../domain/reports/timeseries.js';
import { FILTER_DIMENSIONS, toolFiltersArg } from '../domain/reports/filters.js';
import {
  breakdown,
  goals,
  listPayments,
  listSites,
  overview,
  properties,
  realtime,
  retention,
  timeseries,
  visitorTimeline,
  type ReportDeps,
} from '../services/reports.js';
import { REPORT_PATHS } from './report-paths.js';

/**
 * The reports of `/api/v1` (`docs/api.md` "Reports") and of the MCP endpoint (`docs/mcp.md`),
 * each declared once: its path and parameters with their zod schemas, its
 * response schema, its CSV export, its MCP tool and the service function
 * that answers it. The report handler's routes, the OpenAPI document, the
 * MCP tools and the app's client types are all derived from this table
 * (`docs/api.md`), so a parameter added here reaches all four.
 */

/** A path parameter other than `{domain}`: its schema (a 400 naming it when it fails) and its OpenAPI description. */
export interface PathParam {
  schema: z.ZodType;
  description: string;
}
type PathParams = Record<string, PathParam>;
/** The query schema of a report, or null for a report that reads no query parameter. */
type Query = z.ZodObject | null;

type QueryOf<Q extends Query> = Q extends z.ZodObject ? z.output<Q> : object;
type QueryFields<Q extends Query> = Q extends z.ZodObject ? Exclude<keyof Q['shape'], 'format'> : never;
/** The arguments a report's service function gets: its parsed query and path parameters (the site apart). */
export type ReportArgs<P extends PathParams, Q extends Query> = QueryOf<Q> & {
  [K in keyof P]: z.output<P[K]['schema']>;
};

/** A response body with a range and the site: what a CSV file name is made of. */
type Body = { site: string; range: DateRange };

/** The MCP tool of a report: its name, title, description for a model, and each argument's description for a model. */
interface ToolSpec<P extends PathParams, Q extends Query> {
  name: string;
  title: string;
  description: string;
  /**
   * Every argument but `site`: a description (put on the report API's schema,
   * so validation is the same) or, where the tool takes a narrower value than
   * the path does, its own schema.
   */
  args: { [K in keyof P | QueryFields<Q>]: string | z.ZodType };
}

/**
 * One report. `path` marks `{domain}` (the site: `site` in MCP, optional
 * there when the account has one site) and the names of `params`.
 */
export interface ReportSpec<
  Path extends string = string,
  P extends PathParams = PathParams,
  Q extends Query = Query,
  R extends z.ZodObject = z.ZodObject,
> {
  path: Path;
  params: P;
  query: Q;
  response: R;
  /** The response's name under `components.schemas` in the OpenAPI document. */
  schemaName: string;
  operationId: string;
  summary: string;
  /** A report that also answers CSV: the schema of its rows (the columns) and the file name of a body. */
  csv?: { rows: z.ZodObject; filename(body: z.output<R> & Body): string };
  /**
   * Whether a shared link (`docs/security.md` "Shared links") may read it, for its own site:
   * the dashboard's reports only, as Plausible's shared link shows the dashboard. Never the
   * site list (other sites), payments (customers), visitor timelines (visitor ids) or
   * retention (payer cohorts).
   */
  shared: boolean;
  tool: ToolSpec<P, Q>;
  /**
   * Answers the report. `site` gives the site's domain (the path's, or the
   * MCP argument's resolved); a report of the account never calls it.
   */
  run(deps: ReportDeps, account: string, args: ReportArgs<P, Q>, site: () => Promise<string>): Promise<object>;
}

/** Declares a report, keeping its literal path and schema types for the derived types. */
const report = <const Path extends string, P extends PathParams, Q extends Query, R extends z.ZodObject>(
  spec: ReportSpec<Path, P, Q, R>,
) => spec;

const span = (range: DateRange) => `${range.from}-to-${range.to}`;
/** File name characters: a site domain and our words are already safe; anything else becomes `_`. */
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_');

/** The range arguments as a model reads them (`docs/mcp.md`). */
const RANGE_ARGS = {
  range:
    `Named range ending today in the site's timezone: ${RANGE_NAMES.join(', ')} (12m = twelve months, all = since tracking started). ` +
    'Default 30d, or all for a site tracked 30 days or less. Ignored when from and to are given.',
  from: "First day of an explicit range, YYYY-MM-DD, inclusive, in the site's timezone. Give together with to; they win over range.",
  to: 'Last day of an explicit range, YYYY-MM-DD, inclusive. Give together with from; at most 10 years after from.',
  filters: toolFiltersArg.describe(
    'Optional. Only the visits that match, and the revenue credited to them: an array of conditions (or its JSON text) that must all hold, each ' +
      '[operator, dimension, [values]] with operator is, is_not, contains, contains_not, matches or matches_not (RE2 regular expression), ' +
      `dimension one of ${Object.keys(FILTER_DIMENSIONS).join(', ')} (event:page: any page of the visit; event:goal: any goal of it), ` +
      'or event:props:<key> for a custom property (list_properties names the keys); a fourth element {"case_sensitive": false} ignores case; ' +
      'e.g. [["is","visit:channel",["Search"]],["contains","event:page",["/blog"]]]. Also ["and",[...]], ["or",[...]], ["not",filter]. ' +
      'Imported days are left out of a filtered answer. list_payments lists the payments credited to matching visits (none unattributed); ' +
      'get_retention keeps the customers whose first payment was credited to a matching visit.',
  ),
};
const rowLimit = (max: number, fallback: number) =>
  `Most rows to return, 1 to ${max} (default ${fallback}); rows are ordered by revenue, then visitors, and total counts them all.`;

/** The reports, in the order MCP's `tools/list` gives their tools; each takes its path from `REPORT_PATHS`. */
export const REPORTS = {
  sites: report({
    path: REPORT_PATHS.sites,
    params: {},
    query: null,
    response: sitesResponse,
    schemaName: 'Sites',
    shared: false,
    operationId: 'listSites',
    summary: 'The sites the key can read',
    tool: {
      name: 'list_sites',
      title: 'List sites',
      description:
        'The sites (domain and timezone) this API key can read. Call it first to find the `site` argument of the other tools.',
      args: {},
    },
    run: (deps, account) => listSites(deps, account),
  }),
  overview: report({
    path: REPORT_PATHS.overview,
    params: {},
    query: rangeParams,
    response: overviewResponse,
    schemaName: 'Overview',
    shared: true,
    operationId: 'getOverview',
    summary: 'Totals for the range and the period before it',
    tool: {
      name: 'get_overview',
      title: 'Overview totals',
      description:
        'Totals of a site over a date range and over the period of equal length just before it: visitors, sessions, payments, customers, ' +
        'revenue_usd (net of refunds), conversion (converted / visitors, where converted counts the customers whose visitor was tracked in the range) and revenue_per_visitor, and the top stats: pageviews, views_per_visit, ' +
        'bounce_rate (visits with one page view and no goal / visits, 0 to 1) and visit_duration (mean seconds of the visits with more than one event), ' +
        'plus the relative change of each (0.25 = 25% more; null when the previous value was 0).',
      args: RANGE_ARGS,
    },
    run: async (deps, account, args, site) => overview(deps, account, await site(), args),
  }),
  timeseries: report({
    path: REPORT_PATHS.timeseries,
    params: {},
    query: timeseriesParams,
    response: timeseriesResponse,
    schemaName: 'Timeseries',
    shared: true,
    operationId: 'getTimeseries',
    summary:
      'Visitors, sessions, page views, payments and revenue per local hour, day or month; the points add up to the overview (visitors excepted: distinct per point)',
    tool: {
      name: 'get_timeseries',
      title: 'Time series',
      description:
        'Visitors, sessions (visits), page views, payments and revenue_usd (net of refunds) per local hour, day or month of a date range, every point of the range included, oldest first. ' +
        "Sessions, payments and revenue of the points add up to get_overview's for the same range; visitors are distinct within each point, so they do not add up across points. " +
        'Use it for trends, peaks and "which day did revenue come in".',
      args: {
        ...RANGE_ARGS,
        interval:
          `Points per local hour, day or month. Default: hour for a one-day range, day up to ${INTERVAL_MAX_DAYS.day} days, month beyond. ` +
          `hour takes a range of at most ${INTERVAL_MAX_DAYS.hour} days, day at most ${INTERVAL_MAX_DAYS.day}.`,
      },
    },
    run: async (deps, account, args, site) => timeseries(deps, account, await site(), args, args.interval),
  }),
  breakdown: report({
    path: REPORT_PATHS.breakdown,
    params: {
      dimension: { schema: dimensionParam, description: 'The dimension, or prop:<key> for a custom property' },
    },
    query: breakdownParams,
    response: breakdownResponse,
    schemaName: 'Breakdown',
    shared: true,
    operationId: 'getBreakdown',
    summary: 'Visitors and credited revenue per value of a dimension',
    csv: { rows: breakdownRowSchema, filename: (b) => safe(`${b.site}-${b.dimension}-${span(b.range)}.csv`) },
    tool: {
      name: 'get_breakdown',
      title: 'Breakdown by dimension',
      description:
        'Visitors and credited revenue per value of one dimension (channel, referrer, campaign, keyword, landing page, page, country, device, browser, OS, language, UTM source, UTM medium, UTM content, exit page, or a custom property) over a date range. ' +
        "Each payment is credited to one visit by the site's attribution model; payments with no credited visit form the row labelled Unattributed. " +
        'Rows: visitors, payments, customers, revenue_usd, revenue_per_visitor, most revenue first.',
      args: {
        dimension:
          'What to group by: channel (Search, Social, AI, Direct, …), referrer (referring domain), campaign (utm_campaign), keyword (utm_term), ' +
          'landing_page (first page of the visit), page (every page viewed; a payment counts for each page of its credited visit), ' +
          'country (two-letter code), device (Desktop, Mobile, Tablet, Unknown), browser, os, language, ' +
          'utm_source, utm_medium, utm_content (the UTM parameters the visit started with), exit_page (last page viewed in the visit), ' +
          'or prop:<key> for a custom property the site sends with its events (prop:plan: one row per value; a visit counts under each value it had).',
        ...RANGE_ARGS,
        limit: rowLimit(BREAKDOWN_LIMIT.max, BREAKDOWN_LIMIT.default),
      },
    },
    run: async (deps, account, args, site) => breakdown(deps, account, await site(), args.dimension, args, args.limit),
  }),
  properties: report({
    path: REPORT_PATHS.properties,
    params: {},
    query: propertiesParams,
    response: propertiesResponse,
    schemaName: 'Properties',
    shared: true,
    operationId: 'listProperties',
    summary:
      "The custom property keys of the visits of the range, with their visitors, visits and credited revenue; each key's values are `breakdown/prop:{key}`",
    csv: { rows: propKeyRowSchema, filename: (b) => safe(`${b.site}-properties-${span(b.range)}.csv`) },
    tool: {
      name: 'list_properties',
      title: 'Custom property keys',
      description:
        'The custom property keys (such as plan or author) the site sent with its page views and goals in the visits of a date range: per key, the distinct visitors and the visits ' +
        'that had it (any value), and the payments and revenue_usd credited to those visits. Most visitors first. ' +
        'Pass a key to get_breakdown as dimension "prop:<key>" for its values, or filter on it with event:props:<key>.',
      args: {
        ...RANGE_ARGS,
        limit: `Most keys to return, 1 to ${PROPERTIES_LIMIT.max} (default ${PROPERTIES_LIMIT.default}); rows are ordered by visitors, and total counts them all.`,
      },
    },
    run: async (deps, account, args, site) => properties(deps, account, await site(), args, args.limit),
  }),
  goals: report({
    path: REPORT_PATHS.goals,
    params: {},
    query: goalsParams,
    response: goalsResponse,
    schemaName: 'Goals',
    shared: true,
    operationId: 'getGoals',
    summary:
      'Per goal: visitors who completed it, visits, completions, conversion rate and credited revenue; `goal=Outbound Link: Click` gives one row per link URL',
    csv: {
      rows: goalRowSchema,
      filename: (b) => safe(`${b.site}-goals${b.goal ? `-${b.goal}` : ''}-${span(b.range)}.csv`),
    },
    tool: {
      name: 'get_goals',
      title: 'Goal conversions',
      description:
        'Goals (custom events such as Signup, and outbound link clicks) over a date range: per goal, the distinct visitors who completed it, the visits and completions, ' +
        'conversion_rate (completing visitors / all visitors of the range, 0 to 1) and revenue_usd of the payments credited to visits in which the goal happened. ' +
        'Pass goal="Outbound Link: Click" to see which links were clicked. Most revenue first.',
      args: {
        ...RANGE_ARGS,
        goal: 'Only this goal. "Outbound Link: Click" gives one row per clicked link URL. Leave out for one row per goal name.',
        limit: rowLimit(BREAKDOWN_LIMIT.max, BREAKDOWN_LIMIT.default),
      },
    },
    run: async (deps, account, args, site) => goals(deps, account, await site(), args, args.goal ?? null, args.limit),
  }),
  realtime: report({
    path: REPORT_PATHS.realtime,
    params: {},
    query: realtimeParams,
    response: realtimeResponse,
    schemaName: 'Realtime',
    shared: true,
    operationId: 'getRealtime',
    summary:
      "Current visitors (an event in the last 5 minutes), their pages and referrers; as late as the sessionizer's batching window",
    tool: {
      name: 'get_realtime',
      title: 'Current visitors',
      description:
        'Visitors on the site right now: distinct visitors with an event in the last 5 minutes, the pages they viewed and the referrers of their visits, most visitors first. ' +
        'Counted once the sessionizer has processed their events, so it can lag by its batching window (seconds). No date range.',
      args: { limit: 'Most pages and referrers to return, 1 to 100 (default 10).' },
    },
    run: async (deps, account, args, site) => realtime(deps, account, await site(), args.limit),
  }),
  retention: report({
    path: REPORT_PATHS.retention,
    params: {},
    query: rangeParams,
    response: retentionResponse,
    schemaName: 'Retention',
    shared: false,
    operationId: 'getRetention',
    summary:
      'Customers whose first payment is in the range, by credited channel, referrer and campaign: LTV, refunds, still paying, churn',
    tool: {
      name: 'get_retention',
      title: 'Retention and lifetime value',
      description:
        'Customer retention and lifetime value of the customers whose first payment falls in the range, in total and grouped by the channel, referrer and campaign credited for that first payment: ' +
        'customers, still paying, net LTV, average LTV, refund rate and churn. day_one is true while there are under 60 days of payments (LTV is not meaningful yet).',
      args: RANGE_ARGS,
    },
    run: async (deps, account, args, site) => retention(deps, account, await site(), args),
  }),
  payments: report({
    path: REPORT_PATHS.payments,
    params: {},
    query: paymentsParams,
    response: paymentsResponse,
    schemaName: 'Payments',
    shared: false,
    operationId: 'listPayments',
    summary: 'Payments, newest first',
    csv: {
      rows: paymentRowSchema,
      filename: (b) => safe(`${b.site}-payments-${b.filter}-${span(b.range)}.csv`),
    },
    tool: {
      name: 'list_payments',
      title: 'List payments',
      description:
        'Payments of a date range, newest first: provider, amount and currency, amount_usd and net_usd (net of refunds), status, whether it is a renewal, ' +
        "the visit credited for it (touch: channel, referrer, campaign, landing page, country, device; null when unattributed), the payer's first visit (first_touch) " +
        'and `visitor`, the value to pass to get_visitor_timeline.',
      args: {
        ...RANGE_ARGS,
        filter:
          'Which payments: all (default, failed ones included), attributed (credited to a visit), unattributed (no credited visit) or refunded (partly or fully).',
        limit: `Most payments to return, 1 to ${PAYMENTS_LIMIT.max} (default ${PAYMENTS_LIMIT.default}); total in the result counts all that match.`,
        offset: 'Payments to skip, for paging (default 0): use offset = previous offset + limit for the next page.',
      },
    },
    run: async (deps, account, args, site) =>
      listPayments(deps, account, await site(), args, args.filter, args.limit, args.offset),
  }),
  visitor: report({
    path: REPORT_PATHS.visitor,
    params: { visitor_id: { schema: z.string(), description: 'A visitor id, as in payment rows' } },
    query: null,
    response: timelineResponse,
    schemaName: 'Timeline',
    shared: false,
    operationId: 'getVisitorTimeline',
    summary: "One visitor's visits, pages, goals, exits and payments",
    tool: {
      name: 'get_visitor_timeline',
      title: 'Visitor timeline',
      description:
        "One visitor's history, oldest first: each visit with its channel, referrer, campaign, pages viewed (seconds on each page), goals, how it ended (exit page or outbound link) and payments made during it, " +
        'plus payments outside a visit such as renewals. Useful to see the journey of a customer before they paid.',
      args: {
        visitor_id: z
          .string()
          .min(1)
          .max(200)
          .describe(
            'The visitor to show: the `visitor` field of a payment from list_payments (or a visitor ID your site stored).',
          ),
      },
    },
    run: async (deps, account, args, site) => visitorTimeline(deps, account, await site(), args.visitor_id),
  }),
} satisfies { [N in keyof typeof REPORT_PATHS]: ReportSpec<(typeof REPORT_PATHS)[N]> };

/** A report's key in the table. */
export type ReportName = keyof typeof REPORTS;
/** The reports, widened for code that handles any of them. */
export const REPORT_LIST: readonly ReportSpec[] = Object.values(REPORTS) as readonly ReportSpec[];

/** The JSON body of a report (what the app reads), from its response schema. */
export type ReportBody<N extends ReportName> = z.output<(typeof REPORTS)[N]['response']>;
/** The path template of a report, e.g. `/api/v1/sites/{domain}/overview`. */
export type ReportPath<N extends ReportName> = (typeof REPORTS)[N]['path'];
/** The query parameters a client may send to a report (before defaults and coercion). */
export type ReportQuery<N extends ReportName> = (typeof REPORTS)[N]['query'] extends z.ZodObject
  ? z.input<(typeof REPORTS)[N]['query']>
  : Record<never, never>;
