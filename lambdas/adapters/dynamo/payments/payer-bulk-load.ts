import type { DynamoConnection } from '../client.js';
import { PK, SK } from '../table.js';
import { BULK_CONCURRENCY, batchWrite } from '../batch.js';
import { writeBehind } from '../../../domain/parallel.js';
import type { Payment } from '../../../domain/payments/payment.js';
import type { Customer } from '../../../domain/payments/customer.js';
import type { UsdRate } from '../../../domain/payments/money.js';
import { customerKey } from '../../../domain/payments/contribution.js';
import { memberMove, payerProvider, statusSources, statusesOf } from '../../../domain/payments/payer.js';
import { payerPaymentOf, payerSummary } from '../../../domain/reports/cohorts.js';
import { entryItem, stateItem } from './payer-items.js';
import { memberItem, memberKey } from './cohort-member-items.js';
import { PayerStore, type PayerItems } from './payer-store.js';
import type { CohortRecompute } from './cohort-recompute.js';

/** Summary items (PAYER_STATE, COHORT_MEMBER) a bulk load holds before writing them: ≤ 1 KB each, so about 1 MB a buffer (one written while the next fills). */
const SUMMARY_WRITE_BUFFER = 1_000;

/** A put, or (`delete`) the delete of the item's key, for BatchWriteItem. */
type BufferedWrite = Record<string, unknown> & { delete?: true };

/**
 * Writes the retention items of payments and customers no other writer is changing (the report
 * benchmark, an import, a bulk load) with BatchWriteItem: the items `PayerCohortStore.syncPayment`
 * would leave, in two halves, `write` for each chunk of payments, then `summarize` once.
 */
export class PayerBulkLoad {
  private readonly payers: PayerStore;

  constructor(
    private readonly conn: DynamoConnection,
    private readonly recompute: CohortRecompute,
  ) {
    this.payers = new PayerStore(conn);
  }

  /**
   * The first half, taken in chunks: writes the chunk's PAYER_PAYMENT items (its countable
   * payments; a payment that is not countable writes nothing) and adds their payer keys
   * (`customerKey`) to `payers`. A payer's payments may be spread over any number of chunks: its
   * summary is computed in `summarize`, from the table.
   */
  async write(site: string, payments: readonly Payment[], rate: UsdRate, payers: Set<string>): Promise<void> {
    const items: Array<Record<string, unknown>> = [];
    for (const p of payments) {
      const payer = customerKey(p);
      payers.add(payer);
      const e = payerPaymentOf({ ...p, site }, rate);
      if (e) items.push(entryItem(site, payer, e.key, p.rev, e, false));
    }
    await batchWrite(
      this.conn,
      items.map((Item) => ({ PutRequest: { Item } })),
      BULK_CONCURRENCY,
    );
  }

  /**
   * The second half: for each of `payers`, its summary from its entries read back
   * (`PayerStore.everyPayer`) with its customer's subscription statuses from `customers`; its
   * PAYER_STATE and COHORT_MEMBER written (buffered, `SUMMARY_WRITE_BUFFER` items at a time, a
   * buffer written while the partition's next pages are read); a payer already summarized (its
   * PAYER_STATE holds days) loses the member items of days it no longer starts on; then each day
   * with a member, or left by one, and its month recomputed once, and the status sources. Memory: the payer keys, the customers and one payer's entries, not the
   * payments.
   * @param now ms since epoch ("paying until" days before its local day are dropped); omitted, none is
   */
  async summarize(
    site: string,
    timezone: string,
    payers: ReadonlySet<string>,
    customers: readonly Customer[],
    now?: number,
  ): Promise<void> {
    const customerOf = new Map(customers.map((c) => [`${c.provider}:${c.customer_id}`, c]));
    const sources = statusSources(customers);
    const days = new Set<string>();
    // A buffer written while the partition's next pages are read.
    const writes = writeBehind<BufferedWrite>(SUMMARY_WRITE_BUFFER, (items) =>
      batchWrite(
        this.conn,
        items.map(({ delete: remove, ...Item }) =>
          remove ? { DeleteRequest: { Key: { [PK]: Item[PK], [SK]: Item[SK] } } } : { PutRequest: { Item } },
        ),
        BULK_CONCURRENCY,
      ),
    );
    const summarize = async ({ payer, entries, held }: PayerItems) => {
      const summary = payerSummary(entries, statusesOf(customerOf.get(payer)), timezone);
      const move = memberMove(held, summary?.day ?? null);
      for (const day of move.left) {
        days.add(day);
        await writes.add({ delete: true, ...memberKey(site, day, payer) });
      }
      if (!summary) {
        if (held.length > 0) await writes.add(stateItem(site, payer, null));
        return;
      }
      sources.set(payerProvider(payer), sources.get(payerProvider(payer)) ?? false);
      days.add(summary.day);
      await writes.add(stateItem(site, payer, summary));
      await writes.add(memberItem(site, payer, summary, 0));
    };
    for await (const payer of this.payers.everyPayer(site)) if (payers.has(payer.payer)) await summarize(payer);
    await writes.done();
    await this.recompute.bulk(site, timezone, days, now);
    for (const [provider, status] of sources) await this.recompute.cohorts.markSource(site, provider, status);
  }
}
