import { GetCommand, PutCommand, QueryCommand, UpdateCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { PK, SK } from '../table.js';
import { bumpChangeCounter, type CounterRange } from '../change-counter.js';
import { emptyCohort, mergeCohorts, type CohortGroups, type PeriodCohort } from '../../../domain/reports/cohorts.js';
import type { PeriodSpan } from '../../../domain/reports/periods.js';
import {
  changeKey,
  cohortItemOf,
  cohortItems,
  cohortPk,
  cohortRange,
  dayOfSk,
  sourcesKey,
  sourcesOf,
} from './cohort-items.js';
import { ignoreCondition } from './payer-store.js';

/**
 * The cohort items (`cohort-items.ts`): each period's counters, written only over ones computed
 * from an older change counter (`docs/data-model.md`, "Payments: a list, and counters recomputed
 * from it"), and the site's status sources; the reads retention's report makes.
 */
export class CohortStore {
  constructor(private readonly conn: DynamoConnection) {}

  /** Bumps the change counter of a period (`YYYY-MM-DD` or `YYYY-MM`) and returns its new value (the recompute that follows owns it). */
  async bump(site: string, period: string): Promise<number> {
    return bumpChangeCounter(this.conn, cohortPk(site), changeKey(period), 'COHORT_CHANGE');
  }

  /** Where the change counters of the periods `from` to `to` are (`readChangeCounters`, `checkedBatchWrite`). */
  counters(site: string, from: string, to: string): CounterRange {
    return { pk: cohortPk(site), sk: changeKey, from, to };
  }

  /** Writes a period's three items (`D#<day>`, `M#<month>`), each unless one from counter `src` or later is there. */
  async write(site: string, period: string, { cohort, payers }: PeriodCohort, src: number): Promise<void> {
    await Promise.all(
      cohortItems(site, period, cohort, payers, src).map((Item) =>
        this.conn.doc
          .send(
            new PutCommand({
              TableName: this.conn.table,
              Item,
              ConditionExpression: `attribute_not_exists(${PK}) OR src < :src`,
              ExpressionAttributeValues: { ':src': src },
            }),
          )
          .catch(ignoreCondition),
      ),
    );
  }

  /** The cohorts of one span's periods, with the payers of each (from its channels item): one paged Query. */
  async read(site: string, span: PeriodSpan, consistent: boolean): Promise<Array<PeriodCohort & { period: string }>> {
    const byPeriod = new Map<string, PeriodCohort & { period: string }>();
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
      ExpressionAttributeValues: {
        ':pk': cohortPk(site),
        ':from': cohortRange.from(span.granularity, span.from),
        ':to': cohortRange.to(span.granularity, span.to),
      },
      ConsistentRead: consistent,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        const { period, grouping, groups, payers } = cohortItemOf(item);
        const entry = byPeriod.get(period) ?? { period, cohort: emptyCohort(), payers: 0 };
        entry.cohort[grouping] = groups;
        if (payers !== null) entry.payers = payers;
        byPeriod.set(period, entry);
      }
    }
    return [...byPeriod.values()];
  }

  /** The cohorts of the spans' periods together (a report's range, or the `churn_30d` window). */
  async cohorts(site: string, spans: readonly PeriodSpan[]): Promise<CohortGroups> {
    const read = await Promise.all(spans.map((s) => this.read(site, s, false)));
    return mergeCohorts(read.flat().map((r) => r.cohort));
  }

  /** The first local day with a payer's first countable payment, or null (pages of day keys until one has payers). */
  async firstDay(site: string): Promise<string | null> {
    let start: Record<string, unknown> | undefined;
    do {
      const { Items = [], LastEvaluatedKey } = await this.conn.doc.send(
        new QueryCommand({
          TableName: this.conn.table,
          KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :d)`,
          ExpressionAttributeValues: { ':pk': cohortPk(site), ':d': cohortRange.granularity('D') },
          ProjectionExpression: `${SK}, n`,
          Limit: 60,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of Items) {
        if (Number(item.n ?? 0) > 0) return dayOfSk(String(item[SK]));
      }
      start = LastEvaluatedKey;
    } while (start);
    return null;
  }

  /** The status sources seen (`p_<provider>`: true when it sent a subscription status). */
  async sourceFlags(site: string, consistent = false): Promise<{ sources: Record<string, boolean> }> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: sourcesKey(site), ConsistentRead: consistent }),
    );
    return { sources: sourcesOf(Item) };
  }

  /** Records a provider as a status source (monotone: customers are never deleted, statuses never removed). */
  async markSource(site: string, provider: string, status: boolean): Promise<void> {
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: sourcesKey(site),
        UpdateExpression: status ? 'SET #p = :one, #type = :type' : 'SET #p = if_not_exists(#p, :zero), #type = :type',
        ExpressionAttributeNames: { '#p': `p_${provider}`, '#type': 'type' },
        ExpressionAttributeValues: { ...(status ? { ':one': 1 } : { ':zero': 0 }), ':type': 'COHORT_SOURCES' },
      }),
    );
  }
}
