import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { PROVIDERS, type Provider } from '../../domain/payments/facts.js';
import type { ImportJob, ImportJobStore } from '../../services/history-import.js';
import type { DynamoConnection } from './client.js';
import { PARTITIONS } from './items.js';
import { PK, SK } from './table.js';

const jobKey = (site: string, provider: Provider) => ({
  [PK]: PARTITIONS.importJobs.key(site),
  [SK]: PARTITIONS.importJobs.items.IMPORT_JOB.key(provider),
});

const count = z.number().int().nonnegative();
/** The stored item, checked as it is read (a job written by another release reads or is refused, never guessed). */
const itemSchema = z.object({
  provider: z.enum(PROVIDERS),
  status: z.enum(['running', 'done', 'failed']),
  since: z.number().nullable(),
  until: z.number().nullable(),
  scope: z.string().nullable(),
  kind: count,
  cursor: z.string().nullable(),
  counts: z.object({ read: count, imported: count, skipped: count, failed: count }),
  invalid: z.array(z.string()),
  error: z.string().nullable(),
  started: z.number(),
  updated: z.number(),
  by: z.string(),
  run: z.string(),
  sealed_key: z.string().nullable(),
});

/**
 * Import jobs (item IMPORT_JOB, `docs/data-model.md`): one item per site and provider (< 4 KB), read
 * with a consistent GetItem, written whole with a condition on the previous `run` and `updated`, so
 * two writers never both win.
 */
export class DynamoImportJobStore implements ImportJobStore {
  constructor(private readonly conn: DynamoConnection) {}

  async get(site: string, provider: Provider): Promise<ImportJob | null> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: jobKey(site, provider), ConsistentRead: true }),
    );
    if (!Item) return null;
    const { sealed_key: sealedKey, ...job } = itemSchema.parse(Item);
    return { ...job, site, sealedKey };
  }

  async put(job: ImportJob, expected: Pick<ImportJob, 'run' | 'updated'> | null): Promise<boolean> {
    const { site, sealedKey, ...rest } = job;
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: { ...jobKey(site, job.provider), type: 'IMPORT_JOB', ...rest, sealed_key: sealedKey },
          ...(expected
            ? {
                ConditionExpression: '#run = :run AND updated = :updated',
                ExpressionAttributeNames: { '#run': 'run' },
                ExpressionAttributeValues: { ':run': expected.run, ':updated': expected.updated },
              }
            : { ConditionExpression: `attribute_not_exists(${PK})` }),
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
