import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Logger } from '@aws-lambda-powertools/logger';
import { createMcpServer } from '../../lambdas/handlers/mcp-tools.js';
import { openApiDocument } from '../../lambdas/handlers/openapi.js';
import { REPORTS, REPORT_LIST } from '../../lambdas/handlers/report-table.js';
import { rangeParams } from '../../lambdas/domain/reports/schemas.js';
import { REPORT_PATHS, fillPath } from '../../lambdas/handlers/report-paths.js';
import type { ReportDeps } from '../../lambdas/services/reports.js';

/** The names a report takes: its path's (site for {domain}), then its query's (format apart), as MCP sees them. */
const argNames = (path: string, query: string[]) => [
  ...[...path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => (name === 'domain' ? 'site' : name)),
  ...query.filter((name) => name !== 'format'),
];

/** MCP's `tools/list`, read through the SDK client as a model's host reads it. */
async function listTools() {
  const server = createMcpServer({} as ReportDeps, 'account', new Logger({ logLevel: 'SILENT' }));
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  const { tools } = await client.listTools();
  await client.close();
  return tools;
}

type Operation = { operationId: string; parameters?: Array<{ name: string; in: string }> };

describe('the report table: one declaration per report, from which the API, OpenAPI and MCP derive', () => {
  it('documents each report at its path, with its path and query parameters', () => {
    const doc = openApiDocument() as { paths: Record<string, { get: Operation }> };
    expect(Object.keys(doc.paths)).toEqual(REPORT_LIST.map((r) => r.path));
    for (const report of REPORT_LIST) {
      const op = doc.paths[report.path]!.get;
      expect(op.operationId).toBe(report.operationId);
      const query = Object.keys(report.query?.shape ?? {});
      // `format` is what asks for the CSV export, so exactly the reports with one take it.
      expect(query.includes('format'), report.path).toBe(report.csv !== undefined);
      expect(
        (op.parameters ?? []).map((p) => `${p.in}:${p.name}`),
        report.path,
      ).toEqual([
        ...[...report.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => `path:${name}`),
        ...query.map((name) => `query:${name}`),
      ]);
    }
  });

  it('gives each report an MCP tool taking the same arguments, read through the SDK client', async () => {
    const tools = await listTools();
    expect(tools.map((t) => t.name)).toEqual(REPORT_LIST.map((r) => r.tool.name));
    for (const report of REPORT_LIST) {
      const tool = tools.find((t) => t.name === report.tool.name)!;
      const query = Object.keys(report.query?.shape ?? {});
      expect(Object.keys(tool.inputSchema.properties ?? {}), tool.name).toEqual(argNames(report.path, query));
      for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {}))
        expect((schema as { description?: string }).description, `${tool.name} ${name}`).toBeTruthy();
    }
  });

  it('gives every report of a range the range parameters themselves, described once for a model, so one added there (filters) reaches each', async () => {
    const ranged = REPORT_LIST.filter((r) => r.query?.shape.range !== undefined);
    const { overview, timeseries, breakdown, properties, goals, retention, payments } = REPORTS;
    expect(ranged).toEqual([overview, timeseries, breakdown, properties, goals, retention, payments]);
    const tools = await listTools();
    const described = (tool: string, arg: string) =>
      (tools.find((t) => t.name === tool)?.inputSchema.properties?.[arg] as { description?: string } | undefined)
        ?.description;
    for (const report of ranged)
      for (const [name, schema] of Object.entries(rangeParams.shape)) {
        // The same schema object, not a copy: a field added to `rangeParams` is a field of this report.
        expect(report.query?.shape[name], `${report.path} ${name}`).toBe(schema);
        expect(described(report.tool.name, name), `${report.tool.name} ${name}`).toBe(
          described(REPORTS.overview.tool.name, name),
        );
      }
  });

  it('takes each path from REPORT_PATHS, which the app fills in segment by segment', () => {
    expect(REPORT_LIST.map((r) => r.path)).toEqual(Object.values(REPORT_PATHS));
    expect(fillPath(REPORT_PATHS.visitor, { domain: 'a.test', visitor_id: 'x/y?z' })).toBe(
      '/api/v1/sites/a.test/visitors/x%2Fy%3Fz',
    );
  });
});
