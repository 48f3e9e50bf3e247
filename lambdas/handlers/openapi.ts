import * as z from 'zod';
import { errorResponse } from '../domain/reports/schemas.js';
import { csvColumns } from '../domain/reports/csv.js';
import { REPORT_LIST, type ReportSpec } from './report-table.js';

type Schema = z.ZodType;

/** A report's parameters: its path's, in order, then its query's. */
function parameters(report: ReportSpec) {
  const query = Object.entries(report.query?.shape ?? {}).map(([name, field]) => {
    const json = z.toJSONSchema(field as Schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    const { description, ...rest } = json;
    return { name, in: 'query', required: false, description, schema: rest };
  });
  const path = [...report.path.matchAll(/\{([^}]+)\}/g)].map(([, name = '']) => {
    const param = name === 'domain' ? domain : (report.params[name] ?? { schema: z.string(), description: name });
    return { name, in: 'path', required: true, description: param.description, schema: z.toJSONSchema(param.schema) };
  });
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
const domain = { schema: z.string(), description: 'A site domain from /sites' };

/** A report's operation: summary, parameters, and its JSON (and CSV) answer. */
function operation(report: ReportSpec) {
  const params = parameters(report);
  return {
    summary: report.summary,
    operationId: report.operationId,
    ...(params.length ? { parameters: params } : {}),
    responses: report.csv ? okOrCsv(report.schemaName, csvColumns(report.csv.rows).join(', ')) : ok(report.schemaName),
  };
}

let cached: unknown;

/** The OpenAPI 3.1 document of the report API, generated from the zod schemas the handler uses. */
export function openApiDocument(): unknown {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'Footfall report API',
      version: '1',
      description:
        'Read-only reports of a Footfall installation (docs/api.md). Every request needs `Authorization: Bearer <API key>`, or, from the app, its session cookie (docs/app.md).',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { session: [] }],
    paths: Object.fromEntries(REPORT_LIST.map((report) => [report.path, { get: operation(report) }])),
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
        ...Object.fromEntries(REPORT_LIST.map((report) => [report.schemaName, z.toJSONSchema(report.response)])),
        Error: z.toJSONSchema(errorResponse),
      },
    },
  };
  return cached;
}
