import type { DynamoConnection } from '../client.js';
import { readChangeCounters } from '../change-counter.js';
import type { Contribution } from '../../../domain/payments/contribution.js';
import type { PaymentRecordStore, PaymentTableSource } from '../../../ports.js';
import { PaymentListPositions } from './payment-list-positions.js';
import { PaymentTotalsItems } from './payment-list-totals.js';

/** A month's period key, `YYYY-MM` (the day counters share the partition). */
const MONTH = /^\d{4}-\d{2}$/;

/**
 * The payments table writer's reads of the single table (`docs/data-model.md`, "Filtered reports",
 * *Payments*): the month change counters of `PT#<site>` and a month's PAYMENT_LIST partition; the
 * whole PAYMENT partition only through `records` (list items in the old form).
 */
export class PaymentTableReads implements PaymentTableSource {
  private readonly positions: PaymentListPositions;
  private readonly totals: PaymentTotalsItems;

  constructor(
    private readonly conn: DynamoConnection,
    private readonly records: Pick<PaymentRecordStore, 'listPayments'>,
  ) {
    this.positions = new PaymentListPositions(conn);
    this.totals = new PaymentTotalsItems(conn);
  }

  listPayments(site: string) {
    return this.records.listPayments(site);
  }

  /** Reads every change counter (`C#…`, days included: under 100 B each) and keeps the months'. */
  async monthCounters(site: string): Promise<Map<string, number>> {
    const all = await readChangeCounters(this.conn, this.totals.counters(site, '0000', '9999~'));
    return new Map([...all].filter(([period]) => MONTH.test(period)));
  }

  async listedMonth(site: string, month: string): Promise<Contribution[]> {
    return [...(await this.positions.month(site, month)).values()].flat();
  }
}
