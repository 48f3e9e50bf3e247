import * as z from 'zod';
import { RANGE_NAMES } from '../range.js';
import { DIMENSIONS } from '../rollup.js';
import { INTERVALS, INTERVAL_MAX_DAYS } from './timeseries.js';
import { formatParam } from './csv.js';
import { PROP_DIMENSION_PREFIX, filtersParam, propKeyOf } from './filters.js';
import { PROPS_LIMITS } from '../props.js';

/**
 * The report API's parameters and responses as zod schemas (`docs/api.md`).
 * The handler validates parameters with them, the tests validate every
 * response with them, and `openapi.ts` turns them into the OpenAPI document,
 * so the three cannot drift apart.
 */

/** Breakdown `limit`: default 100, at most 1000 (`docs/api.md` "Limits"); above the maximum is a 400 (`docs/api.md` "Decisions"). */
export const BREAKDOWN_LIMIT = { default: 100, max: 1000 } as const;
/** Properties `limit`: keys listed, default 100, at most 1000 (`docs/api.md` "Properties"). */
export const PROPERTIES_LIMIT = { default: 100, max: 1000 } as const;
/** Payments `limit`: default 20, at most 200; `offset` default 0 (`docs/api.md` "Limits"). */
export const PAYMENTS_LIMIT = { default: 20, max: 200 } as const;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .describe("Local date YYYY-MM-DD in the site's timezone");
/**
 * Query parameters that are integers: only decimal digits are taken (`z.coerce`
 * alone would read `1e2`, `0x10`, ` 5` or `5.0` as numbers); checked by the
 * report handler's `parseQuery` before the schema (docs/api.md).
 */
export const DECIMAL_QUERY_PARAMS: readonly string[] = ['limit', 'offset'];
export const DECIMAL_DIGITS = /^\d{1,16}$/;

const limitOf = (max: number, fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .describe(`Rows to return, 1 to ${max} (default ${fallback}); above ${max} is a 400`);

/**
 * The query every report of a date range takes (overview, timeseries, breakdown, goals, retention,
 * payments, and so their CSV): each of those extends this object, so a parameter added here once
 * (filters, `docs/api.md` "Reports") is validated, documented in OpenAPI, offered to MCP (described
 * once, `RANGE_ARGS` in the report table) and typed in the app for all of them, and reaches each
 * service function as part of its `RangeQuery`.
 */
export const rangeParams = z.object({
  range: z
    .enum(RANGE_NAMES)
    .optional()
    .describe('today, 7d, 30d, 90d, 12m or all; default 30d, or all for a site tracked 30 days or less'),
  from: day.optional().describe('First day, inclusive; with `to` it wins over `range`'),
  to: day.optional().describe('Last day, inclusive; at most 10 years after `from`'),
  filters: filtersParam.optional(),
});
export const breakdownParams = rangeParams.extend({
  limit: limitOf(BREAKDOWN_LIMIT.max, BREAKDOWN_LIMIT.default),
  format: formatParam,
});
export const paymentsParams = rangeParams.extend({
  filter: z
    .enum(['all', 'attributed', 'unattributed', 'refunded'])
    .default('all')
    .describe('Which payments: all, attributed, unattributed or refunded'),
  limit: limitOf(PAYMENTS_LIMIT.max, PAYMENTS_LIMIT.default),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0).describe('Rows to skip, for paging'),
  format: formatParam,
});
/** The prefix of a custom property's breakdown, `breakdown/prop:<key>` (`docs/api.md`, "Breakdowns"). */
export const PROP_BREAKDOWN_PREFIX = 'prop:';
/** The property key of a `prop:<key>` breakdown dimension. */
export const propOfDimension = (dimension: `prop:${string}`): string => dimension.slice(PROP_BREAKDOWN_PREFIX.length);
/**
 * A breakdown's dimension: one of `DIMENSIONS`, or `prop:<key>`, a custom property, its key bounded as an
 * `event:props:<key>` filter's (`propKeyOf`: 1 to 300 UTF-8 bytes; any text, never more than data).
 */
export const dimensionParam = z.union(
  [
    z.enum(DIMENSIONS),
    z
      .templateLiteral([PROP_BREAKDOWN_PREFIX, z.string()])
      .refine((d) => propKeyOf(PROP_DIMENSION_PREFIX + propOfDimension(d)) !== null, {
        error: `a property key has 1 to ${PROPS_LIMITS.keyBytes} bytes`,
      }),
  ],
  { error: `must be one of ${DIMENSIONS.join(', ')}, or prop:<key> (a custom property)` },
);
/** A breakdown's dimension as parsed (`dimensionParam`). */
export type BreakdownDimension = z.output<typeof dimensionParam>;
export const goalsParams = rangeParams.extend({
  goal: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .describe(
      "Only this goal's rows; `Outbound Link: Click` gives one row per link URL. Without it, one row per goal name",
    ),
  limit: limitOf(BREAKDOWN_LIMIT.max, BREAKDOWN_LIMIT.default),
  format: formatParam,
});
export const timeseriesParams = rangeParams.extend({
  interval: z
    .enum(INTERVALS)
    .optional()
    .describe(
      `Points per local hour, day or month of the site's timezone; default hour for a one-day range, day up to ${INTERVAL_MAX_DAYS.day} days, month beyond. ` +
        `hour takes at most ${INTERVAL_MAX_DAYS.hour} days and day at most ${INTERVAL_MAX_DAYS.day} (longer is a 400)`,
    ),
});

export const rangeSchema = z.object({ from: day, to: day, timezone: z.string() });
export const siteSchema = z.object({ domain: z.string(), timezone: z.string() });
export const sitesResponse = z.object({ sites: z.array(siteSchema) });

/** The imported days of a response's range (`docs/api.md`, "Imported days"). */
export const importedSchema = z
  .object({
    source: z.literal('plausible').describe('Where they were imported from (`footfall import plausible`)'),
    from: day.describe('First imported day of the range (site-local)'),
    to: day.describe('Last imported day of the range (site-local)'),
  })
  .nullable()
  .describe(
    "The range's days whose numbers come from an imported export (daily aggregates: visitors summed over days, no revenue credit, no visitor timelines), or null when it has none",
  );

/** Present only on the answer to a request with `filters` (`docs/api.md`, "Filters"): what it left out. */
export const filteredSchema = z
  .object({
    imported_excluded: importedSchema.describe(
      "The range's imported days, left out of this filtered answer (imported days are daily totals, with no visits to filter), or null when it has none",
    ),
  })
  .optional()
  .describe('Present only when the request had filters; `imported` is then null');

export const totalsSchema = z.object({
  visitors: z.number().int(),
  sessions: z.number().int(),
  pageviews: z.number().int().describe('Page views of the visits that started in the range'),
  views_per_visit: z.number().nullable().describe('pageviews / sessions; null without a visit'),
  bounce_rate: z
    .number()
    .nullable()
    .describe('Visits with one page view and no goal / sessions, 0 to 1; null without a visit'),
  visit_duration: z
    .number()
    .int()
    .nullable()
    .describe(
      'Mean seconds from the first to the last event of the visits with more than one event, rounded; null when there is none',
    ),
  payments: z.number().int(),
  customers: z.number().int(),
  revenue_usd: z.number(),
  converted: z.number().int(),
  matched_payments: z.number().int(),
  matched_revenue_usd: z.number(),
  conversion: z.number().nullable(),
  revenue_per_visitor: z.number().nullable(),
});
export const overviewResponse = z.object({
  site: z.string(),
  range: rangeSchema,
  previous_range: rangeSchema,
  current: totalsSchema,
  previous: totalsSchema,
  change: z.object({
    visitors: z.number().nullable(),
    revenue_usd: z.number().nullable(),
    payments: z.number().nullable(),
    conversion: z.number().nullable(),
    revenue_per_visitor: z.number().nullable(),
    sessions: z.number().nullable(),
    pageviews: z.number().nullable(),
    views_per_visit: z.number().nullable(),
    bounce_rate: z.number().nullable(),
    visit_duration: z.number().nullable(),
  }),
  imported: importedSchema,
  previous_imported: importedSchema,
  filtered: filteredSchema,
});

export const breakdownRowSchema = z.object({
  key: z.string().nullable(),
  label: z.string(),
  unattributed: z.boolean(),
  visitors: z.number().int(),
  payments: z.number().int(),
  customers: z.number().int(),
  revenue_usd: z.number(),
  revenue_per_visitor: z.number().nullable(),
});
export const breakdownResponse = z.object({
  site: z.string(),
  range: rangeSchema,
  dimension: dimensionParam,
  total: z.number().int(),
  rows: z.array(breakdownRowSchema),
  imported: importedSchema,
  filtered: filteredSchema,
});

export const propertiesParams = rangeParams.extend({
  limit: limitOf(PROPERTIES_LIMIT.max, PROPERTIES_LIMIT.default),
  format: formatParam,
});
export const propKeyRowSchema = z.object({
  key: z.string().describe('A custom property key, as the site sent it'),
  visitors: z.number().int().describe('Distinct visitors of the visits that had the key (any value)'),
  visits: z.number().int().describe('Visits that started in the range in which an event had the key'),
  payments: z.number().int().describe('Counted payments of the range credited to those visits'),
  revenue_usd: z.number().describe('Their net USD'),
});
export const propertiesResponse = z.object({
  site: z.string(),
  range: rangeSchema,
  total: z.number().int().describe('Keys before `limit`'),
  rows: z.array(propKeyRowSchema).describe('Most visitors first, then most visits, then the key'),
  imported: importedSchema.describe('Always null: an imported day holds no properties'),
  filtered: filteredSchema,
});

/** Realtime `limit`: rows of pages, of referrers and of goals, default 10, at most 100. */
export const REALTIME_LIMIT = { default: 10, max: 100 } as const;
export const realtimeParams = z.object({ limit: limitOf(REALTIME_LIMIT.max, REALTIME_LIMIT.default) });
export const realtimeResponse = z.object({
  site: z.string(),
  as_of: z.string().describe('RFC 3339, UTC: the time the answer was computed'),
  window_seconds: z.number().int().describe('Visitors are current while their last event is at most this old (300)'),
  visitors: z
    .number()
    .int()
    .describe(
      'Distinct visitors with an event in the window, as far as the sessionizer has processed them (docs/api.md "Realtime": up to its batching window late)',
    ),
  pages: z
    .array(
      z.object({
        page: z.string(),
        visitors: z.number().int().describe('Current visitors who viewed it in the window'),
      }),
    )
    .describe('Most visitors first'),
  referrers: z
    .array(
      z.object({
        referrer: z.string().nullable().describe('Referring host of their visit; null for none (Direct)'),
        visitors: z.number().int(),
      }),
    )
    .describe('Most visitors first'),
  goals: z
    .array(
      z.object({
        goal: z.string(),
        visitors: z.number().int().describe('Current visitors who completed it in the window'),
      }),
    )
    .describe('Most visitors first'),
});

export const goalRowSchema = z.object({
  goal: z
    .string()
    .describe('The goal name; `(other goals)` on the row of goal names beyond the per-period cap (docs/data-model.md)'),
  link: z
    .string()
    .nullable()
    .describe("The link URL of an `Outbound Link: Click` row (with `goal=Outbound Link: Click`); null on a goal's row"),
  other: z.boolean().describe('True only on the `(other goals)` row'),
  visitors: z
    .number()
    .int()
    .describe(
      'Distinct visitors who completed it, in visits that started in the range (exact up to 32 a day or month, then 3.25% standard error)',
    ),
  visits: z.number().int().describe('Visits that started in the range in which it happened'),
  completions: z.number().int().describe('Its events in those visits'),
  conversion_rate: z
    .number()
    .nullable()
    .describe("visitors / the range's visitors, 0 to 1; null when the range has no visitor"),
  payments: z.number().int().describe('Payments of the range (not failed) credited to a visit in which it happened'),
  revenue_usd: z.number().describe('USD of those payments, net of refunds'),
});
export const goalsResponse = z.object({
  site: z.string(),
  range: rangeSchema,
  goal: z.string().nullable().describe('The `goal` parameter, or null'),
  visitors: z
    .number()
    .int()
    .describe("Distinct visitors of the range (the overview's), the denominator of conversion_rate"),
  total: z.number().int().describe('Rows before `limit`'),
  rows: z.array(goalRowSchema).describe('Most revenue first, then visitors, then name or URL'),
  imported: importedSchema,
  filtered: filteredSchema,
});

export const timeseriesPointSchema = z.object({
  start: z
    .string()
    .describe(
      "Local start of the point in the site's timezone: YYYY-MM-DDTHH:00 (hour), YYYY-MM-DD (day) or YYYY-MM (month; a partial month counts only the range's days)",
    ),
  visitors: z
    .number()
    .int()
    .describe(
      "Distinct visitors active in the point; a visitor active in two points counts in both, so these do not add up to the range's visitors",
    ),
  sessions: z.number().int().describe("Visits that started in the point; the points add up to the overview's sessions"),
  pageviews: z.number().int().describe('Page views of the visits that started in the point'),
  payments: z
    .number()
    .int()
    .describe("Payments (not failed) whose time is in the point; the points add up to the overview's payments"),
  revenue_usd: z
    .number()
    .describe("USD of those payments, net of refunds; the points add up to the overview's revenue_usd"),
});
export const timeseriesResponse = z.object({
  site: z.string(),
  range: rangeSchema,
  interval: z.enum(INTERVALS),
  points: z.array(timeseriesPointSchema).describe('Every point of the range, empty ones included, oldest first'),
  imported: importedSchema.describe(
    'The imported days of the range, as on the overview; null by hour (imported days have no hours)',
  ),
  filtered: filteredSchema,
});

const rfc3339 = z.string().describe('RFC 3339, UTC');
export const paymentRowSchema = z.object({
  provider: z.string(),
  provider_payment_id: z.string(),
  ts: rfc3339,
  amount: z.number().int().describe('Minor unit of currency'),
  currency: z.string(),
  amount_usd: z.number(),
  refunded: z.number().int().describe('Minor unit of currency'),
  net_usd: z.number(),
  status: z.enum(['paid', 'failed', 'refunded']),
  visitor_id: z.string().nullable(),
  customer_id: z.string().nullable(),
  is_renewal: z.boolean(),
  visitor: z.string().nullable(),
  touch: z
    .object({
      session_id: z.string(),
      ts: rfc3339,
      channel: z.string(),
      referrer_host: z.string().nullable(),
      source: z.string().nullable(),
      campaign: z.string().nullable(),
      landing_page: z.string(),
      country: z.string().nullable(),
      device: z.string(),
    })
    .nullable(),
  first_touch: z
    .object({ ts: rfc3339, channel: z.string(), referrer_host: z.string().nullable(), source: z.string().nullable() })
    .nullable(),
});
export const paymentsResponse = z.object({
  site: z.string(),
  range: rangeSchema,
  filter: z.enum(['all', 'attributed', 'unattributed', 'refunded']),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  rows: z.array(paymentRowSchema),
});

const stepSchema = z.union([
  z.object({ type: z.literal('page'), ts: rfc3339, path: z.string(), secs: z.number().int().nullable() }),
  z.object({ type: z.literal('goal'), ts: rfc3339, name: z.string() }),
  z.object({ type: z.literal('exit'), ts: rfc3339, page: z.string().nullable(), link: z.string().nullable() }),
  paymentRowSchema.extend({ type: z.literal('payment') }),
]);
export const visitEntrySchema = z.object({
  type: z.literal('visit'),
  start: rfc3339,
  end: rfc3339,
  channel: z.string(),
  referrer_host: z.string().nullable(),
  source: z.string().nullable(),
  campaign: z.string().nullable(),
  pageviews: z.number().int(),
  steps: z.array(stepSchema),
});
export const timelineResponse = z.object({
  site: z.string(),
  visitor_id: z.string(),
  country: z.string().nullable(),
  browser: z.string().nullable(),
  device: z.string().nullable(),
  entries: z.array(z.union([visitEntrySchema, paymentRowSchema.extend({ type: z.literal('payment') })])),
  payments: z.array(paymentRowSchema),
});

export const errorResponse = z.object({ error: z.string() });

/** A group of the retention response (fields and formulas in `docs/retention.md`). */
export const retentionGroupSchema = z.object({
  key: z
    .string()
    .nullable()
    .describe('The channel, referrer or campaign; null for All customers, Unattributed and (none)'),
  label: z.string(),
  unattributed: z.boolean().describe('True only for the group of customers whose first payment is unattributed'),
  customers: z.number().int().describe('Customers whose first payment is in the range'),
  still_paying: z
    .number()
    .int()
    .describe('Of those, still paying today (provider subscription status, else payment recency)'),
  first_payment_usd: z.number().describe('USD of their first payments, net of refunds'),
  refunded_usd: z.number().describe('USD refunded over all their payments'),
  net_ltv_usd: z.number().describe('USD of all their payments up to today, net of refunds'),
  avg_ltv_usd: z.number().nullable().describe('net_ltv_usd / customers; null when there are no customers'),
  refund_rate: z
    .number()
    .nullable()
    .describe('Customers with any refund / customers; null when there are no customers'),
  churn_customers: z
    .number()
    .int()
    .describe('Customers whose churn can be judged (subscription status known, or subscription-like payments)'),
  churned: z.number().int().describe('Of churn_customers, not still paying'),
  churn_30d: z
    .number()
    .nullable()
    .describe(
      'churned / churn_customers among the customers whose first payment was 30 to 60 days ago, whatever the range; null when there are none',
    ),
  share_customers: z.number().nullable().describe('customers / total customers'),
  share_still_paying: z
    .number()
    .nullable()
    .describe('still_paying / total still_paying; null when nobody is still paying'),
});
export const retentionResponse = z.object({
  site: z.string(),
  range: rangeSchema,
  days_of_data: z
    .number()
    .int()
    .describe('Local days from the first day with a payment to today, both inclusive; 0 without payments'),
  day_one: z.boolean().describe('True under 60 days of payments: LTV is not meaningful yet'),
  headline: z.string().nullable().describe('One-sentence finding; null when the data is too thin'),
  total: retentionGroupSchema,
  channels: z.array(retentionGroupSchema),
  referrers: z.array(retentionGroupSchema),
  campaigns: z.array(retentionGroupSchema),
  status_sources: z.array(
    z.object({
      provider: z.string(),
      subscription_status: z.boolean().describe('Whether the provider sent subscription status for any customer'),
    }),
  ),
});
