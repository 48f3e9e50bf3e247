import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { readPendingParts } from './rollup-reader.js';
import { rollupPk } from './rollup-keys.js';
import { PARTITIONS } from './items.js';

const { ROLLUP } = PARTITIONS.rollup.items;

/**
 * Whether a site's events have arrived: the newest hour of its pending
 * rollup deltas, else the newest hourly `visits` rollup
 * (`R#<site>#visits`, `H#<local hour>#…`), else the newest daily one (data
 * sessionized before hourly rollups existed); a Query of one item each,
 * newest first.
 */
export class DynamoSiteActivity {
  constructor(private readonly conn: DynamoConnection) {}

  /** The last local hour (`YYYY-MM-DDTHH`) or, failing that, day (`YYYY-MM-DD`) with activity, or null. */
  async lastActive(domain: string): Promise<string | null> {
    // Deltas not compacted yet are the newest activity (`docs/data-model.md`, "Rollups: a delta log, compacted").
    const logged = (await readPendingParts(this.conn, domain)).flatMap((p) =>
      p.deltas.filter((d) => d.key.metric === 'visits' && d.key.granularity === 'H').map((d) => d.key.period),
    );
    if (logged.length > 0) return logged.sort()[logged.length - 1] ?? null;
    for (const prefix of [ROLLUP.range.granularity('H'), ROLLUP.range.granularity('D')]) {
      const { Items = [] } = await this.conn.doc.send(
        new QueryCommand({
          TableName: this.conn.table,
          KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :p)`,
          ExpressionAttributeValues: { ':pk': rollupPk(domain, 'visits'), ':p': prefix },
          ScanIndexForward: false,
          Limit: 1,
        }),
      );
      const period = Items[0] ? String(Items[0][SK]).split('#')[1] : undefined;
      if (period) return period;
    }
    return null;
  }
}
