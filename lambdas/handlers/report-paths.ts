/**
 * The path of each report of `/api/v1` (`docs/api.md` "Reports"); `{name}` is one path
 * segment, `{domain}` the site's. Declared apart from the report table
 * (`report-table.ts`) only so that the app can import these strings without
 * the table's schemas and services: the table takes each report's path from
 * here, and a test of its type holds the two to the same names.
 */
export const REPORT_PATHS = {
  sites: '/api/v1/sites',
  overview: '/api/v1/sites/{domain}/overview',
  timeseries: '/api/v1/sites/{domain}/timeseries',
  breakdown: '/api/v1/sites/{domain}/breakdown/{dimension}',
  properties: '/api/v1/sites/{domain}/properties',
  goals: '/api/v1/sites/{domain}/goals',
  realtime: '/api/v1/sites/{domain}/realtime',
  retention: '/api/v1/sites/{domain}/retention',
  payments: '/api/v1/sites/{domain}/payments',
  visitor: '/api/v1/sites/{domain}/visitors/{visitor_id}',
} as const;

/** The names of a path's parameters: `'domain' | 'dimension'` for the breakdown's. */
export type PathNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? Name | PathNames<Rest>
  : never;

/**
 * A path with its parameters filled in, each percent-encoded as one segment.
 * @throws Error when a parameter of the path is missing from `values`
 */
export function fillPath<P extends string>(path: P, values: { [K in PathNames<P>]: string }): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = (values as Record<string, string | undefined>)[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(value);
  });
}
