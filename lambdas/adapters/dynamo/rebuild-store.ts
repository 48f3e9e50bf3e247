import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { batchWrite } from './batch.js';
import { rollupPk } from './rollup-store.js';
import { visitorPk, visitSk } from './visit-store.js';
import { ROLLUP_METRICS } from '../../domain/rollup.js';

/**
 * What `rebuild` clears before deriving again: a site's visit rollups of whole
 * months and the visits that started in a time span. Payment items are kept
 * (they come from providers, not from the archive) and credited again after.
 */
export class DynamoRebuildStore {
  constructor(private readonly conn: DynamoConnection) {}

  private async deleteQuery(pk: string, from: string, to: string): Promise<number> {
    let deleted = 0;
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
      ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
      ProjectionExpression: `${PK}, ${SK}`,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      const keys = page.Items ?? [];
      await batchWrite(this.conn, keys.map((Key) => ({ DeleteRequest: { Key } })));
      deleted += keys.length;
    }
    return deleted;
  }

  /** Deletes every visit rollup of the months `fromMonth`..`toMonth` (`YYYY-MM`): hourly, daily and monthly. */
  async deleteRollups(site: string, fromMonth: string, toMonth: string): Promise<number> {
    let deleted = 0;
    for (const metric of ROLLUP_METRICS) {
      deleted += await this.deleteQuery(rollupPk(site, metric), `D#${fromMonth}-01#`, `D#${toMonth}-31#~`);
      deleted += await this.deleteQuery(rollupPk(site, metric), `M#${fromMonth}#`, `M#${toMonth}#~`);
    }
    // Hourly items exist for `visits` only (lambdas/domain/rollup.ts).
    deleted += await this.deleteQuery(rollupPk(site, 'visits'), `H#${fromMonth}-01T`, `H#${toMonth}-31T~`);
    return deleted;
  }

  /** Deletes a visitor's visits that started in `fromMs`..`toMs` (their payments stay). */
  async deleteVisits(site: string, visitorId: string, fromMs: number, toMs: number): Promise<number> {
    return this.deleteQuery(visitorPk(site, visitorId), visitSk(fromMs, ''), `${visitSk(toMs, '')}~`);
  }
}
