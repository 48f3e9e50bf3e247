import { describe, expect, it } from 'vitest';
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { mockClient } from 'aws-sdk-client-mock';
import { AthenaArchiveReader, AthenaQueryError } from '../../lambdas/adapters/athena-archive.js';
import { archiveTableColumns } from '../../lambdas/domain/archive-schema.js';
import { trackedEvent } from '../support/events.js';

const columns = archiveTableColumns().map((c) => c.name);
/** A row as Athena returns it: every value a string, timestamps without a zone. */
function row(e: ReturnType<typeof trackedEvent>) {
  return {
    Data: columns.map((name) => {
      if (name === 'ts') return { VarCharValue: new Date(e.ts).toISOString().replace('T', ' ').replace('Z', '') };
      if (name === 'dt') return { VarCharValue: new Date(e.ts).toISOString().slice(0, 10) };
      const value = (e as Record<string, unknown>)[name];
      return value === null || value === undefined ? {} : { VarCharValue: String(value) };
    }),
  };
}

const reader = (client: AthenaClient) =>
  new AthenaArchiveReader(client, {
    workGroup: 'footfall',
    database: 'footfall',
    pollMs: 1,
    sleep: async () => undefined,
  });

describe('AthenaArchiveReader (aws-sdk-client-mock)', () => {
  it('runs one query for the site and days, waits for it, and pages the result into events', async () => {
    const mock = mockClient(AthenaClient);
    const a = trackedEvent({ event_id: 'a', screen_width: 390 });
    const b = trackedEvent({ event_id: 'b', referrer_host: 'news.ycombinator.com', channel: 'Communities' });
    mock.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q1' });
    mock
      .on(GetQueryExecutionCommand)
      .resolvesOnce({ QueryExecution: { Status: { State: 'RUNNING' } } })
      .resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    const meta = { ColumnInfo: columns.map((Name) => ({ Name, Type: 'varchar' })) };
    mock
      .on(GetQueryResultsCommand)
      .resolvesOnce({
        ResultSet: { ResultSetMetadata: meta, Rows: [{ Data: columns.map((c) => ({ VarCharValue: c })) }, row(a)] },
        NextToken: 't2',
      })
      .resolvesOnce({ ResultSet: { ResultSetMetadata: meta, Rows: [row(b)] } });
    const pages = [];
    for await (const page of await reader(new AthenaClient({})).events('example.com', '2026-11-20', '2026-11-22'))
      pages.push(page);
    expect(pages).toEqual([[a], [b]]);
    const query = mock.commandCalls(StartQueryExecutionCommand)[0]?.args[0].input;
    expect(query?.WorkGroup).toBe('footfall');
    expect(query?.QueryString).toContain(
      `WHERE site = 'example.com' AND dt BETWEEN '2026-11-20' AND '2026-11-22' ORDER BY ts, event_id`,
    );
    expect(mock.commandCalls(GetQueryExecutionCommand)).toHaveLength(2);
    mock.restore();
  });

  it('fails with the reason Athena gives, before any page is read', async () => {
    const mock = mockClient(AthenaClient);
    mock.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q2' });
    mock.on(GetQueryExecutionCommand).resolves({
      QueryExecution: {
        Status: {
          State: 'FAILED',
          StateChangeReason: 'TABLE_NOT_FOUND: line 1:1: Table footfall.events does not exist',
        },
      },
    });
    await expect(reader(new AthenaClient({})).events('example.com', '2026-11-20', '2026-11-22')).rejects.toThrow(
      /TABLE_NOT_FOUND/,
    );
    expect(mock.commandCalls(GetQueryResultsCommand)).toHaveLength(0);
    mock.restore();
  });

  it('refuses a site that is not a domain, so nothing but a domain reaches the SQL', async () => {
    const mock = mockClient(AthenaClient);
    await expect(reader(new AthenaClient({})).events("x' OR 1=1 --", '2026-11-20', '2026-11-22')).rejects.toThrow();
    await expect(
      reader(new AthenaClient({})).events('example.com', "2026-11-20' --", '2026-11-22'),
    ).rejects.toBeInstanceOf(AthenaQueryError);
    expect(mock.commandCalls(StartQueryExecutionCommand)).toHaveLength(0);
    mock.restore();
  });

  it('finds the first archived day and the distinct visitors of a span, each in one partition-pruned query (rebuild, cleanup)', async () => {
    const mock = mockClient(AthenaClient);
    mock.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q3' });
    mock.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
    const header = (name: string) => ({ ResultSetMetadata: { ColumnInfo: [{ Name: name, Type: 'varchar' }] } });
    mock
      .on(GetQueryResultsCommand)
      .resolvesOnce({
        ResultSet: {
          ...header('_col0'),
          Rows: [{ Data: [{ VarCharValue: '_col0' }] }, { Data: [{ VarCharValue: '2025-01-07' }] }],
        },
      })
      .resolvesOnce({
        ResultSet: {
          ...header('visitor_id'),
          Rows: [{ Data: [{ VarCharValue: 'visitor_id' }] }, { Data: [{ VarCharValue: 'visitor-a' }] }],
        },
        NextToken: 'n',
      })
      .resolvesOnce({
        ResultSet: { ...header('visitor_id'), Rows: [{ Data: [{ VarCharValue: 'visitor-b' }] }, { Data: [{}] }] },
      });
    const athena = reader(new AthenaClient({}));
    expect(await athena.firstDay('example.com')).toBe('2025-01-07');
    const pages = [];
    for await (const page of await athena.visitors('example.com', '2025-01-07', '2026-11-24')) pages.push(page);
    expect(pages).toEqual([['visitor-a'], ['visitor-b']]);
    const queries = mock.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input.QueryString);
    expect(queries).toEqual([
      `SELECT min(dt) FROM "footfall"."events" WHERE site = 'example.com'`,
      `SELECT DISTINCT visitor_id FROM "footfall"."events" WHERE site = 'example.com' AND dt BETWEEN '2025-01-07' AND '2026-11-24'`,
    ]);
    mock.restore();
  });
});
