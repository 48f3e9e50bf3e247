import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { archiveTableColumns, trackedEventFromRow } from '../domain/archive-schema.js';
import { domainSchema } from '../domain/site.js';
import type { TrackedEvent } from '../domain/tracked-event.js';
import type { ArchiveReader } from '../ports.js';

/** A query Athena did not finish: failed, cancelled, or still running at the deadline. */
export class AthenaQueryError extends Error {}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Where and how a query runs: the stack's workgroup and Glue database; polling every `pollMs` (1 s) until `timeoutMs` (15 min). */
export interface AthenaQueryOptions {
  workGroup: string;
  database: string;
  pollMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** A page of a query's result: the column names, and rows of text values (null for SQL NULL). */
export interface AthenaPage {
  names: string[];
  rows: Array<Array<string | null>>;
}

/**
 * Runs `sql` in the workgroup, waits until it succeeded, and pages its result (1,000 rows a page,
 * the header row dropped); a statement without rows (`UNLOAD`) yields no page.
 * @throws AthenaQueryError when the query failed, was cancelled, or ran past the deadline
 */
export async function runAthenaQuery(
  client: AthenaClient,
  options: AthenaQueryOptions,
  sql: string,
): Promise<AsyncIterable<AthenaPage>> {
  const { QueryExecutionId: id } = await client.send(
    new StartQueryExecutionCommand({
      QueryString: sql,
      WorkGroup: options.workGroup,
      QueryExecutionContext: { Database: options.database },
    }),
  );
  if (!id) throw new AthenaQueryError('Athena returned no query execution id');
  await waitFor(client, options, id);
  return (async function* pages() {
    let token: string | undefined;
    let names: string[] | undefined;
    do {
      const page = await client.send(
        new GetQueryResultsCommand({ QueryExecutionId: id, NextToken: token, MaxResults: 1000 }),
      );
      names ??= (page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? []).map((c) => c.Name ?? '');
      const rows = (page.ResultSet?.Rows ?? []).map((r) => (r.Data ?? []).map((d) => d.VarCharValue ?? null));
      // The first row of the first page repeats the column names.
      if (!token && rows[0]?.every((v, i) => v === names?.[i])) rows.shift();
      if (rows.length > 0) yield { names: names ?? [], rows };
      token = page.NextToken;
    } while (token);
  })();
}

async function waitFor(client: AthenaClient, options: AthenaQueryOptions, id: string): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const { QueryExecution } = await client.send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
    const state = QueryExecution?.Status?.State;
    if (state === 'SUCCEEDED') return;
    if (state === 'FAILED' || state === 'CANCELLED') {
      throw new AthenaQueryError(
        `Athena query ${id} ${state.toLowerCase()}: ${QueryExecution?.Status?.StateChangeReason ?? 'no reason given'}`,
      );
    }
    if (Date.now() > deadline)
      throw new AthenaQueryError(`Athena query ${id} still ${state ?? 'unknown'} at the deadline`);
    await sleep(options.pollMs ?? 1000);
  }
}

/**
 * The raw archive through Athena (`rebuild --aws`): one query over the Glue
 * table per call, partition-pruned on `site` and `dt`, polled until it
 * succeeds, then its result pages (1,000 rows each, the first page's first
 * row being the header).
 */
export class AthenaArchiveReader implements ArchiveReader {
  constructor(
    private readonly client: AthenaClient,
    private readonly options: AthenaQueryOptions & { table?: string },
  ) {}

  async events(site: string, fromDt: string, toDt: string): Promise<AsyncIterable<TrackedEvent[]>> {
    const columns = archiveTableColumns()
      .map((c) => `"${c.name}"`)
      .join(', ');
    const rows = await this.query(
      `SELECT ${columns} FROM ${this.table()} WHERE ${this.where(site, fromDt, toDt)} ORDER BY ts, event_id`,
    );
    return (async function* pages() {
      for await (const { names, rows: page } of rows) yield page.map((row) => trackedEventFromRow(names, row));
    })();
  }

  async firstDay(site: string): Promise<string | null> {
    const domain = domainSchema.parse(site);
    for await (const { rows } of await this.query(`SELECT min(dt) FROM ${this.table()} WHERE site = '${domain}'`))
      return rows[0]?.[0] ?? null;
    return null;
  }

  async visitors(site: string, fromDt: string, toDt: string): Promise<AsyncIterable<string[]>> {
    const rows = await this.query(
      `SELECT DISTINCT visitor_id FROM ${this.table()} WHERE ${this.where(site, fromDt, toDt)}`,
    );
    return (async function* pages() {
      for await (const { rows: page } of rows) yield page.flatMap((row) => (row[0] ? [row[0]] : []));
    })();
  }

  private table(): string {
    return `"${this.options.database}"."${this.options.table ?? 'events'}"`;
  }

  /** The partition filter; the values go into SQL text, so only a valid domain and dates get there. */
  private where(site: string, fromDt: string, toDt: string): string {
    const domain = domainSchema.parse(site);
    if (!DAY.test(fromDt) || !DAY.test(toDt)) throw new AthenaQueryError(`bad dates ${fromDt}..${toDt}`);
    return `site = '${domain}' AND dt BETWEEN '${fromDt}' AND '${toDt}'`;
  }

  private query(sql: string): Promise<AsyncIterable<AthenaPage>> {
    return runAthenaQuery(this.client, this.options, sql);
  }
}
