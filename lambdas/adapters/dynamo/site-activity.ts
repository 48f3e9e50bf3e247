import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { rollupPk } from './rollup-store.js';

/**
 * Whether a site's events have arrived: the newest daily `visits` rollup
 * (`R#<site>#visits`, `D#<day>#…`), one Query of one item, newest first.
 */
export class DynamoSiteActivity {
  constructor(private readonly conn: DynamoConnection) {}

  /** The last local day (`YYYY-MM-DD`) with a sessionized visit, or null. */
  async lastDay(domain: string): Promise<string | null> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :d)`,
        ExpressionAttributeValues: { ':pk': rollupPk(domain, 'visits'), ':d': 'D#' },
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    return Items[0] ? (String(Items[0][SK]).split('#')[1] ?? null) : null;
  }
}
