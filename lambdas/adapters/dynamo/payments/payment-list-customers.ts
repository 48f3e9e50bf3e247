import type { DynamoConnection } from '../client.js';
import { PARTITIONS } from '../items.js';
import { PK, SK } from '../table.js';
import type { Granularity } from '../../../domain/rollup.js';
import type { PeriodCustomers } from '../../../domain/payments/contribution.js';
import { packCustomers, unpackCustomers } from './payment-counter-codec.js';
import { queryBetween, writeGuarded } from './payment-list-items.js';

/**
 * PAYMENT_CUSTOMERS, partition `PU#<site>`, sort keys `D#<day>`, `M#<month>` (`docs/data-model.md`,
 * "Payments"): a period's distinct payers, packed by `packCustomers`, recomputed under the
 * period's change counter (PAYMENT_CHANGE, `PaymentTotalsItems.bump`).
 */
export const customersPk = (site: string) => PARTITIONS.paymentCustomers.key(site);
const { PAYMENT_CUSTOMERS } = PARTITIONS.paymentCustomers.items;

/** The PAYMENT_CUSTOMERS items of a site's namespace. */
export class PaymentCustomersItems {
  constructor(private readonly conn: DynamoConnection) {}

  /** A period's PAYMENT_CUSTOMERS item holding `customers`, without the `src` its write adds. */
  item(site: string, g: Granularity, period: string, customers: PeriodCustomers): Record<string, unknown> {
    const key = { [PK]: customersPk(site), [SK]: PAYMENT_CUSTOMERS.key(g, period), type: 'PAYMENT_CUSTOMERS' };
    return { ...key, ...packCustomers(customers) };
  }

  /** Writes a period's recomputed payers, read after its change counter became `src` (`writeGuarded`). */
  write(site: string, g: Granularity, period: string, src: number, customers: PeriodCustomers): Promise<void> {
    return writeGuarded(this.conn, this.item(site, g, period, customers), src);
  }

  /** Period payers of `g` from `from` to `to` (inclusive), oldest first (`unpackCustomers`). */
  async read(site: string, g: Granularity, from: string, to: string, consistent = false): Promise<PeriodCustomers[]> {
    const range = PAYMENT_CUSTOMERS.range;
    return (await queryBetween(this.conn, customersPk(site), range.from(g, from), range.to(g, to), consistent)).map(
      unpackCustomers,
    );
  }
}
