import { DeleteCommand, GetCommand, PutCommand, QueryCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { PARTITIONS } from './items.js';
import { batchWrite, BULK_CONCURRENCY } from './batch.js';
import { deletePartition } from './rebuild-store.js';
import { rollupPk } from './rollup-keys.js';
import { dict } from '../../domain/dict.js';
import {
  IMPORTED_METRICS,
  importStateSchema,
  type ImportState,
  type ImportedMetric,
  type ImportedPeriod,
  type ImportedSpan,
} from '../../domain/imported/aggregate.js';
import type { PeriodSpan } from '../../domain/reports/periods.js';

/** JSON bytes of one IMPORTED item's entries at most: a period's values beyond go to its next part. */
export const IMPORTED_PART_BYTES = 32 * 1024;
/** Items per page of a Query of imported periods. */
const PAGE = 100;

const items = PARTITIONS.imported.items;
const statePk = (domain: string) => PARTITIONS.imported.key(domain, 'visits');
const stateKey = (domain: string) => ({ [PK]: statePk(domain), [SK]: items.IMPORT_STATE.key() });

const entriesSchema = z.array(z.tuple([z.string()], z.number()));

/** A period's entries as parts of at most `IMPORTED_PART_BYTES` of JSON each (at least one part). */
export function importedParts(entries: Readonly<Record<string, readonly number[]>>): string[] {
  const parts: string[] = [];
  let current: string[] = [];
  let bytes = 2;
  for (const [key, numbers] of Object.entries(entries)) {
    const json = JSON.stringify([key, ...numbers]);
    const size = Buffer.byteLength(json) + 1;
    if (current.length > 0 && bytes + size > IMPORTED_PART_BYTES) {
      parts.push(`[${current.join(',')}]`);
      current = [];
      bytes = 2;
    }
    current.push(json);
    bytes += size;
  }
  parts.push(`[${current.join(',')}]`);
  return parts;
}

/**
 * The imported daily aggregates of a site (items IMPORTED and IMPORT_STATE, `docs/data-model.md`), keyed
 * by its domain: written and removed by `footfall import plausible`, read by the reports.
 */
export class DynamoImportedStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** The site's import, or null (one GetItem: a site without one reads nothing else). */
  async state(domain: string): Promise<ImportState | null> {
    const { Item } = await this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: stateKey(domain) }));
    if (!Item) return null;
    return importStateSchema.parse(Item);
  }

  /** A metric's imported periods over the spans (parts of a period merged), one paged Query per span. */
  async periods(domain: string, metric: ImportedMetric, spans: readonly PeriodSpan[]): Promise<ImportedPeriod[]> {
    const reads = await Promise.all(spans.map((s) => this.span(domain, metric, s)));
    return reads.flat();
  }

  private async span(domain: string, metric: ImportedMetric, s: PeriodSpan): Promise<ImportedPeriod[]> {
    if (s.granularity === 'H') return [];
    const granularity = s.granularity;
    const byPeriod = new Map<string, ImportedPeriod>();
    const pages = paginateQuery(
      { client: this.conn.doc, pageSize: PAGE },
      {
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
        ExpressionAttributeValues: {
          ':pk': PARTITIONS.imported.key(domain, metric),
          ':from': items.IMPORTED.range.from(granularity, s.from),
          ':to': items.IMPORTED.range.to(granularity, s.to),
        },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        const period = String(item[SK]).split('#')[1] ?? '';
        let p = byPeriod.get(period);
        if (!p) byPeriod.set(period, (p = { metric, granularity, period, entries: dict() }));
        for (const [key, ...numbers] of entriesSchema.parse(JSON.parse(String(item.v)))) p.entries[key] = numbers;
      }
    }
    return [...byPeriod.values()];
  }

  /**
   * Replaces the site's import with `periods` and `state`: the state first deleted (reports stop reading
   * the old import), every old item deleted, the new ones written, the state written last. A rerun after a
   * crash does the same from the start, so nothing is left twice.
   * @returns the items written
   */
  async replace(domain: string, periods: readonly ImportedPeriod[], state: ImportState): Promise<number> {
    await this.remove(domain);
    const writes = periods.flatMap((p) =>
      importedParts(p.entries).map((v, part) => ({
        PutRequest: {
          Item: {
            [PK]: PARTITIONS.imported.key(domain, p.metric),
            [SK]: items.IMPORTED.key(p.granularity, p.period, part),
            type: 'IMPORTED',
            v,
          },
        },
      })),
    );
    await batchWrite(this.conn, writes, BULK_CONCURRENCY);
    await this.conn.doc.send(
      new PutCommand({
        TableName: this.conn.table,
        Item: { ...stateKey(domain), type: 'IMPORT_STATE', ...importStateSchema.parse(state) },
      }),
    );
    return writes.length;
  }

  /** Deletes the site's import, its state first. @returns the items deleted, the state included */
  async remove(domain: string): Promise<number> {
    const { Attributes } = await this.conn.doc.send(
      new DeleteCommand({ TableName: this.conn.table, Key: stateKey(domain), ReturnValues: 'ALL_OLD' }),
    );
    let deleted = Attributes ? 1 : 0;
    for (const metric of IMPORTED_METRICS)
      deleted += await deletePartition(this.conn, PARTITIONS.imported.key(domain, metric));
    return deleted;
  }

  /** The first local day of the namespace's tracked visits (its first daily `visits` rollup), or null. */
  async firstTrackedDay(namespace: string): Promise<string | null> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :d)`,
        ExpressionAttributeValues: {
          ':pk': rollupPk(namespace, 'visits'),
          ':d': PARTITIONS.rollup.items.ROLLUP.range.granularity('D'),
        },
        Limit: 1,
      }),
    );
    return Items[0] ? (String(Items[0][SK]).split('#')[1] ?? null) : null;
  }
}

/** The span an import state covers, for the reports. */
export const importedSpanOf = (state: ImportState | null): ImportedSpan | null =>
  state ? { source: state.source, from: state.from, to: state.to } : null;
