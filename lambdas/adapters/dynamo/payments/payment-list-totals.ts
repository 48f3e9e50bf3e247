import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from '../client.js';
import { bumpChangeCounter, type CounterRange } from '../change-counter.js';
import { PARTITIONS } from '../items.js';
import { PK, SK } from '../table.js';
import type { Granularity } from '../../../domain/rollup.js';
import type { PeriodTotals } from '../../../domain/payments/contribution.js';
import { queryBetween, writeGuarded } from './payment-list-items.js';
import type { StoredPeriod } from '../../../ports.js';

/**
 * PAYMENT_TOTALS and PAYMENT_CHANGE, partition `PT#<site>` (`docs/data-model.md`, "Payments"):
 * a period's counters (`D#<day>`, `M#<month>`: `t`, the `PeriodTotals` as JSON), and its change
 * counter (`C#<day>`, `C#<month>`), bumped before every recompute of the period; a recompute writes
 * its result only if no recompute that started later already wrote (`src`).
 */
export const totalsPk = (site: string) => PARTITIONS.paymentTotals.key(site);
const { PAYMENT_TOTALS, PAYMENT_CHANGE } = PARTITIONS.paymentTotals.items;

/** The PAYMENT_TOTALS and PAYMENT_CHANGE items of a site's namespace. */
export class PaymentTotalsItems {
  constructor(private readonly conn: DynamoConnection) {}

  /** Bumps a period's change counter and returns its new value (the recompute that follows owns it). */
  bump(site: string, period: string): Promise<number> {
    return bumpChangeCounter(this.conn, totalsPk(site), PAYMENT_CHANGE.key(period), 'PAYMENT_CHANGE');
  }

  /** Where the change counters of the periods `from` to `to` are (`readChangeCounters`, `checkedBatchWrite`). */
  counters(site: string, from: string, to: string): CounterRange {
    return { pk: totalsPk(site), sk: PAYMENT_CHANGE.key, from, to };
  }

  /** A period's PAYMENT_TOTALS item holding `totals`, without the `src` its write adds. */
  item(site: string, g: Granularity, period: string, totals: PeriodTotals): Record<string, unknown> {
    return {
      [PK]: totalsPk(site),
      [SK]: PAYMENT_TOTALS.key(g, period),
      type: 'PAYMENT_TOTALS',
      t: JSON.stringify(totals),
    };
  }

  /** Writes a period's recomputed counters, read after its change counter became `src` (`writeGuarded`). */
  write(site: string, g: Granularity, period: string, src: number, totals: PeriodTotals): Promise<void> {
    return writeGuarded(this.conn, this.item(site, g, period, totals), src);
  }

  /** Period counters of `g` from `from` to `to` (inclusive), oldest first. */
  async periods(site: string, g: Granularity, from: string, to: string, consistent = false): Promise<StoredPeriod[]> {
    const range = PAYMENT_TOTALS.range;
    return (await queryBetween(this.conn, totalsPk(site), range.from(g, from), range.to(g, to), consistent)).map(
      (item) => ({
        granularity: g,
        period: String(item[SK]).slice(2),
        totals: JSON.parse(String(item.t)) as PeriodTotals,
      }),
    );
  }

  /** The months (`YYYY-MM`) that have a month counter, oldest first: one consistent Query of the month keys. */
  async months(site: string): Promise<string[]> {
    const range = PAYMENT_TOTALS.range;
    return (await queryBetween(this.conn, totalsPk(site), range.from('M', ''), range.to('M', ''), true)).map((item) =>
      String(item[SK]).slice(2),
    );
  }

  /** The first local day with a day counter, or null. */
  async firstDay(site: string): Promise<string | null> {
    const { Items = [] } = await this.conn.doc.send(
      new QueryCommand({
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :d)`,
        ExpressionAttributeValues: { ':pk': totalsPk(site), ':d': PAYMENT_TOTALS.range.granularity('D') },
        Limit: 1,
      }),
    );
    return Items[0] ? String(Items[0][SK]).slice(2) : null;
  }
}
