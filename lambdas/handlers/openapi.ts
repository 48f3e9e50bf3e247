import * as z from 'zod';
import {
  breakdownParams,
  breakdownResponse,
  breakdownRowSchema,
  dimensionParam,
  goalRowSchema,
  errorResponse,
  goalsParams,
  realtimeParams,
  realtimeResponse,
  goalsResponse,
  overviewResponse,
  paymentsParams,
  paymentRowSchema,
  paymentsResponse,
  rangeParams,
  retentionResponse,
  sitesResponse,
  timelineResponse,
  timeseriesParams,
  timeseriesResponse,
} from '../domain/reports/schemas.js';
import { csvColumns } from '../domain/reports/csv.js';

type Schema = z.ZodType;

function parameters(
  schema: z.ZodObject,
  pathParams: Array<{ name: string; schema: Schema; description: string }> = [],
) {
  const query = Object.entries(schema.shape).map(([name, field]) => {
    const json = z.toJSONSchema(field as Schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    const { description, ...rest } = json;
    return { name, in: 'query', required: false, description, schema: rest };
  });
  const path = pathParams.map((p) => ({
    name: p.name,
    in: 'path',
    required: true,
    description: p.description,
    schema: z.toJSONSchema(p.schema),
  }));
  return [...path, ...query];
}

const errors = {
  '400': {
    description: 'A parameter is not valid',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  '401': {
    description: 'Missing, malformed, wrong or revoked API key',
    headers: {
      'WWW-Authenticate': {
        description:
          'RFC 6750 §3 challenge: `Bearer realm="footfall"`, with `error="invalid_token"` when a bearer key was sent',
        schema: { type: 'string' },
      },
    },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  '404': {
    description: "Unknown site (or another account's), or unknown visitor",
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
  '503': {
    description: 'The data could not be read; retry later',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  },
};

const ok = (ref: string) => ({
  '200': { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } },
  ...errors,
});
/** A report that also answers CSV (`format=csv` or `Accept: text/csv`): the rows' columns, RFC 4180. */
const okOrCsv = (ref: string, columns: string) => ({
  '200': {
    description: `OK. With \`format=csv\` or \`Accept: text/csv\`: the rows as CSV (RFC 4180, CRLF, header line), columns ${columns}`,
    headers: {
      'Content-Disposition': {
        description: 'With CSV: `attachment; filename="<site>-<report>-<from>-to-<to>.csv"`',
        schema: { type: 'string' },
      },
    },
    content: {
      'application/json': { schema: { $ref: `#/components/schemas/${ref}` } },
      'text/csv': { schema: { type: 'string' } },
    },
  },
  ...errors,
});
const domain = { name: 'domain', schema: z.string(), description: 'A site domain from /sites' };

let cached: unknown;

/** The OpenAPI 3.1 document of the report API, generated from the zod schemas the handler uses. */
export function openApiDocument(): unknown {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'Footfall report API',
      version: '1',
      description:
        'Read-only reports of a Footfall installation (spec §4). Every request needs `Authorization: Bearer <API key>`, or, from the app, its session cookie (docs/app.md).',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { session: [] }],
    paths: {
      '/api/v1/sites': {
        get: { summary: 'The sites the key can read', operationId: 'listSites', responses: ok('Sites') },
      },
      '/api/v1/sites/{domain}/overview': {
        get: {
          summary: 'Totals for the range and the period before it',
          operationId: 'getOverview',
          parameters: parameters(rangeParams, [domain]),
          responses: ok('Overview'),
        },
      },
      '/api/v1/sites/{domain}/timeseries': {
        get: {
          summary:
            'Visitors, sessions, page views, payments and revenue per local hour, day or month; the points add up to the overview (visitors excepted: distinct per point)',
          operationId: 'getTimeseries',
          parameters: parameters(timeseriesParams, [domain]),
          responses: ok('Timeseries'),
        },
      },
      '/api/v1/sites/{domain}/breakdown/{dimension}': {
        get: {
          summary: 'Visitors and credited revenue per value of a dimension',
          operationId: 'getBreakdown',
          parameters: parameters(breakdownParams, [
            domain,
            { name: 'dimension', schema: dimensionParam, description: 'The dimension' },
          ]),
          responses: okOrCsv('Breakdown', csvColumns(breakdownRowSchema).join(', ')),
        },
      },
      '/api/v1/sites/{domain}/goals': {
        get: {
          summary:
            'Per goal: visitors who completed it, visits, completions, conversion rate and credited revenue; `goal=Outbound Link: Click` gives one row per link URL',
          operationId: 'getGoals',
          parameters: parameters(goalsParams, [domain]),
          responses: okOrCsv('Goals', csvColumns(goalRowSchema).join(', ')),
        },
      },
      '/api/v1/sites/{domain}/realtime': {
        get: {
          summary:
            "Current visitors (an event in the last 5 minutes), their pages and referrers; as late as the sessionizer's batching window",
          operationId: 'getRealtime',
          parameters: parameters(realtimeParams, [domain]),
          responses: ok('Realtime'),
        },
      },
      '/api/v1/sites/{domain}/payments': {
        get: {
          summary: 'Payments, newest first',
          operationId: 'listPayments',
          parameters: parameters(paymentsParams, [domain]),
          responses: okOrCsv('Payments', csvColumns(paymentRowSchema).join(', ')),
        },
      },
      '/api/v1/sites/{domain}/retention': {
        get: {
          summary:
            'Customers whose first payment is in the range, by credited channel, referrer and campaign: LTV, refunds, still paying, churn',
          operationId: 'getRetention',
          parameters: parameters(rangeParams, [domain]),
          responses: ok('Retention'),
        },
      },
      '/api/v1/sites/{domain}/visitors/{visitor_id}': {
        get: {
          summary: "One visitor's visits, pages, goals, exits and payments",
          operationId: 'getVisitorTimeline',
          parameters: parameters(z.object({}), [
            domain,
            { name: 'visitor_id', schema: z.string(), description: 'A visitor id, as in payment rows' },
          ]),
          responses: ok('Timeline'),
        },
      },
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "An API key (ff_…) from the app's settings or `footfall keys create`",
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'ff_session',
          description:
            "The app's session cookie, set by `POST /api/app/sign-in` (docs/app.md); used when no Authorization header is sent",
        },
      },
      schemas: {
        Sites: z.toJSONSchema(sitesResponse),
        Overview: z.toJSONSchema(overviewResponse),
        Timeseries: z.toJSONSchema(timeseriesResponse),
        Breakdown: z.toJSONSchema(breakdownResponse),
        Goals: z.toJSONSchema(goalsResponse),
        Realtime: z.toJSONSchema(realtimeResponse),
        Payments: z.toJSONSchema(paymentsResponse),
        Retention: z.toJSONSchema(retentionResponse),
        Timeline: z.toJSONSchema(timelineResponse),
        Error: z.toJSONSchema(errorResponse),
      },
    },
  };
  return cached;
}
