import { QueryCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { PK, SK } from './table.js';
import { readRollups, readVisitCounts } from './rollup-reader.js';
import { assembleVisits, visitorPk } from './visit-store.js';
import { readPendingParts } from './rollup-reader.js';
import { rollupPk } from './rollup-keys.js';
import type { PendingPart } from './rollup-log.js';
import { batchGet } from './batch.js';
import { DynamoRealtimeStore } from './realtime-store.js';
import type { RealtimeSlice } from '../../domain/realtime.js';
import type { PaymentDimension, RollupMetric } from '../../domain/rollup.js';
import type { PeriodSpan } from '../../domain/reports/periods.js';
import { countVisitors, deserializeSketch, type VisitorSketch } from '../../domain/visitor-sketch.js';
import type { ListClass, PeriodCustomers, ValueCounters } from '../../domain/payments/contribution.js';
import { PaymentListStore } from './payments/payment-list-store.js';
import { CohortStore } from './payments/cohort-store.js';
import { CohortMemberStore } from './payments/cohort-member-store.js';
import type { PayerSummary } from '../../domain/reports/cohorts.js';
import type { RetentionCohorts } from '../../domain/reports/retention.js';
import type { Payment } from '../../domain/payments/payment.js';
import type { Visit } from '../../domain/visit.js';
import type { PaymentRef, ReportReads, RollupRead, StoredPeriod, VisitCountsRead } from '../../ports.js';
import { PARTITIONS } from './items.js';
import { DynamoImportedStore } from './imported-store.js';
import { paymentItemKey, paymentOf, paymentRefOf } from './payments/payment-items.js';

/**
 * The reads of the report API (`docs/data-model.md`, "Reports"): rollups by
 * period spans, payment entries, a visitor's partition, payments by key.
 * One store per report: the site's pending rollup deltas are read once and
 * shared by its reads. What a report's reads cost is counted at the SDK
 * client (`CapacityMeter.measure`, scoped to the report's async context).
 */
export class DynamoReportStore implements ReportReads {
  constructor(private readonly conn: DynamoConnection) {
    this.list = new PaymentListStore(conn);
    this.cohortStore = new CohortStore(conn);
    this.members = new CohortMemberStore(conn);
    this.imported = new DynamoImportedStore(conn);
  }

  /** The site's imported days (a Plausible export). */
  readonly imported: DynamoImportedStore;

  private readonly list: PaymentListStore;
  private readonly cohortStore: CohortStore;
  private readonly members: CohortMemberStore;

  /** Each site's pending rollup deltas, read once per store (a report's reads share them). */
  private readonly pendingBySite = new Map<string, Promise<PendingPart[]>>();

  private pending(site: string): Promise<PendingPart[]> {
    let read = this.pendingBySite.get(site);
    if (!read) {
      read = readPendingParts(this.conn, site);
      this.pendingBySite.set(site, read);
    }
    return read;
  }

  /**
   * Visits, page views, named counters, visitor sketches, value counts and
   * per-value visitor sketches of a metric over the spans, each with its period.
   */
  async rollups(site: string, metric: RollupMetric, spans: readonly PeriodSpan[]): Promise<RollupRead[]> {
    const pending = await this.pending(site);
    const reads = await Promise.all(
      spans.map((s) => readRollups(this.conn, site, metric, s.granularity, s.from, s.to, pending)),
    );
    return reads.flat().map((item) => ({
      period: item.period,
      visits: item.visits,
      pageviews: item.pageviews,
      counters: item.counters,
      sketch: deserializeSketch(item),
      counts: item.counts,
      valueSketches: item.valueSketches,
    }));
  }

  /**
   * The `visits` rollups of the spans' periods with each period's distinct
   * visitors, for the time series: with their visitor sets only for the
   * spans that ask (`sketches`: a point that unions periods); else the
   * counts alone (`readVisitCounts`), so 365 days read 365 items of ~200 B,
   * not 365 sets.
   */
  async visitRollups(
    site: string,
    spans: ReadonlyArray<PeriodSpan & { sketches: boolean }>,
  ): Promise<Array<VisitCountsRead & { sketch: VisitorSketch | null }>> {
    const pending = await this.pending(site);
    const reads = await Promise.all(
      spans.map(async (s) => {
        if (!s.sketches)
          return (await readVisitCounts(this.conn, site, s.granularity, s.from, s.to, { pending })).map((r) => ({
            ...r,
            sketch: null,
          }));
        return (await readRollups(this.conn, site, 'visits', s.granularity, s.from, s.to, pending)).map((item) => {
          const sketch = deserializeSketch(item);
          return {
            period: item.period,
            visits: item.visits,
            pageviews: item.pageviews,
            counters: item.counters,
            visitors: countVisitors(sketch),
            sketch,
          };
        });
      }),
    );
    return reads.flat();
  }

  /** The payment counters of the spans' periods (`PaymentListStore.periods`). */
  async paymentTotals(site: string, spans: readonly PeriodSpan[]): Promise<StoredPeriod[]> {
    return (await Promise.all(spans.map((s) => this.list.periods(site, s.granularity, s.from, s.to, false)))).flat();
  }

  /** The distinct payers of the spans' periods. */
  async paymentCustomers(site: string, spans: readonly PeriodSpan[]): Promise<PeriodCustomers[]> {
    return (await Promise.all(spans.map((s) => this.list.customers(site, s.granularity, s.from, s.to, false)))).flat();
  }

  /** Payment keys of a class from local day `startDay` back to `fromDay`, newest first, from `offset`, at most `limit` (`PaymentListStore.page`). */
  async paymentPage(
    site: string,
    cls: ListClass,
    fromDay: string,
    startDay: string,
    offset: number,
    limit: number,
  ): Promise<string[]> {
    return this.list.page(site, cls, fromDay, startDay, offset, limit);
  }

  /** A payment dimension's counters per value over the spans' periods, one map per item read. */
  async paymentDimension(
    site: string,
    dimension: PaymentDimension,
    spans: readonly PeriodSpan[],
  ): Promise<Array<Record<string, ValueCounters>>> {
    const reads = await Promise.all(
      spans.map((s) => this.list.dimension(site, dimension, s.granularity, s.from, s.to, false)),
    );
    return reads.flat().map((r) => r.values);
  }

  /** The realtime slices of a site from the minute of `sinceMs` on (`docs/api.md`, "Realtime"). */
  async realtime(site: string, sinceMs: number): Promise<RealtimeSlice[]> {
    return new DynamoRealtimeStore(this.conn).read(site, sinceMs);
  }

  /** The first local day with a visit or a payment, or null (the start of range `all`). */
  async firstDay(site: string): Promise<string | null> {
    const first = async (pk: string) => {
      const { Items = [] } = await this.conn.doc.send(
        new QueryCommand({
          TableName: this.conn.table,
          KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :d)`,
          ExpressionAttributeValues: { ':pk': pk, ':d': PARTITIONS.rollup.items.ROLLUP.range.granularity('D') },
          Limit: 1,
        }),
      );
      return Items[0] ? (String(Items[0][SK]).split('#')[1] ?? null) : null;
    };
    const [visits, payments, pending] = await Promise.all([
      first(rollupPk(site, 'visits')),
      this.list.firstDay(site),
      this.pending(site),
    ]);
    // Visits not compacted yet count too (a new site's first minutes).
    const logged = pending.flatMap((p) =>
      p.deltas.filter((d) => d.key.metric === 'visits' && d.key.granularity === 'D').map((d) => d.key.period),
    );
    const days = [visits, payments, ...logged].filter((d): d is string => d !== null);
    return days.sort()[0] ?? null;
  }

  /** Everything in a visitor's partition: visits and the keys of their payments. */
  async visitor(site: string, visitorId: string): Promise<{ visits: Visit[]; payments: PaymentRef[] }> {
    const visitItems: Array<Record<string, unknown>> = [];
    const payments: PaymentRef[] = [];
    for await (const page of paginateQuery(
      { client: this.conn.doc },
      {
        TableName: this.conn.table,
        KeyConditionExpression: `${PK} = :pk`,
        ExpressionAttributeValues: { ':pk': visitorPk(site, visitorId) },
      },
    )) {
      for (const item of page.Items ?? []) {
        if (item.type === 'VISIT' || item.type === 'VISIT_CHUNK') visitItems.push(item);
        else if (item.type === 'VISITOR_PAYMENT') payments.push(paymentRefOf(String(item.payment_key)));
      }
    }
    return { visits: assembleVisits(visitItems, site, visitorId), payments };
  }

  /**
   * Retention's cohort counters (`CohortStore`): the range's periods, the
   * `churn_30d` window's, the first day with a payer, and the status
   * sources. Four kinds of reads, at
   * most 3 Queries per span list, each paged at 1 MB.
   */
  async retentionCohorts(
    site: string,
    range: readonly PeriodSpan[],
    window: readonly PeriodSpan[],
  ): Promise<RetentionCohorts> {
    const [flags, considered, churn, firstDay] = await Promise.all([
      this.cohortStore.sourceFlags(site, false),
      this.cohortStore.cohorts(site, range),
      this.cohortStore.cohorts(site, window),
      this.cohortStore.firstDay(site),
    ]);
    return { considered, window: churn, firstDay, sources: flags.sources };
  }

  /** The cohort members whose first payment is on a local day `from`..`to` (one paged Query). */
  cohortMembers(site: string, from: string, to: string): Promise<Array<{ payer: string; summary: PayerSummary }>> {
    return this.members.between(site, from, to);
  }

  /** The stored payments of `keys` (one BatchGetItem per 100 keys). */
  async payments(site: string, keys: readonly PaymentRef[]): Promise<Payment[]> {
    if (keys.length === 0) return [];
    const items = await batchGet(
      this.conn,
      keys.map((k) => paymentItemKey(site, k.provider, k.id)),
    );
    return items.map(paymentOf);
  }
}
