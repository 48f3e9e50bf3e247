import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  paginateQuery,
} from '@aws-sdk/lib-dynamodb';
import type { DynamoConnection } from './client.js';
import { bumpChangeCounter } from './change-counter.js';
import { PK, SK } from './table.js';
import { BULK_CONCURRENCY, batchWrite } from './batch.js';
import { inParallel } from '../../domain/parallel.js';
import type { RecomputeBatch } from './payment-list-store.js';
import type { Payment } from '../../domain/payments/payment.js';
import { PROVIDERS, type Provider } from '../../domain/payments/facts.js';
import type { Customer, SubscriptionState } from '../../domain/payments/customer.js';
import { customerKey } from '../../domain/payments/contribution.js';
import type { UsdRate } from '../../domain/payments/money.js';
import type { PeriodSpan } from '../../domain/reports/periods.js';
import {
  GROUPINGS,
  cohortOf,
  keptFrom,
  deserializeGroups,
  emptyCohort,
  mergeCohorts,
  payerPaymentOf,
  payerSummary,
  serializeGroups,
  type CohortGroups,
  type Grouping,
  type PayerPayment,
  type PayerSummary,
} from '../../domain/reports/cohorts.js';
import { PARTITIONS, periodSk } from './items.js';
import { payerCustomerId, payerProvider, type PayerFacts } from '../../domain/payments/payer.js';
import { dict } from '../../domain/dict.js';

/**
 * Retention's items (`docs/data-model.md`, "Retention: payer summaries and
 * cohorts"), three partitions per site namespace:
 *
 * - PAYER_PAYMENT `CP#<site>` / `<payer id>P#<provider:id>`: one countable
 *   payment of a payer (`PayerPayment`, `e`), with the payment's `rev`; a
 *   payment that stopped being countable keeps its key without `e` (so an
 *   older revision cannot bring it back). `pending` until the payer's summary
 *   took it in. ≤ 1 KB (a campaign and a referrer host of the credit).
 * - PAYER_STATE `CP#<site>` / `<payer id>S`: the payer's change counter `n`,
 *   the cohort days its summary may be held on (`held`, a string set of at
 *   most two days while a move runs, one after), `pend` while a recompute
 *   runs. < 200 B.
 * - COHORT_MEMBER `CM#<site>` / `<first day>#<payer>`: the payer's summary
 *   (`PayerSummary`, `m`) on the local day of its first countable payment,
 *   with the payer counter it was computed from (`src`). ≤ 1 KB.
 * - COHORT `CH#<site>` / `D#<day>#<grouping>`, `M#<month>#<grouping>`
 *   (grouping: channels, referrers, campaigns): counters per group id
 *   (`serializeGroups`, `v`), `n` the payers of the period (channels items),
 *   `src` the change counter `C#<period>` it was computed from. Referrers and
 *   campaigns hold at most `COHORT_KEYS_PER_ITEM` ids; "paying until" days
 *   before the day of the recompute are dropped, so a group's histogram has
 *   at most 375 days: ≤ 100 × (≤ 2.3 KB id + 5 KB histogram) worst case,
 *   a few KB in practice.
 * - `CH#<site>` / `SRC`: `p_<provider>` 0 (seen) or 1 (sent a subscription
 *   status).
 *
 * `<payer id>` is the payer key (`customerKey`) with its length in front,
 * `<length>:<payer>#`, so no payer's prefix is another's.
 */
export const payerPk = (site: string) => PARTITIONS.payer.key(site);
export const memberPk = (site: string) => PARTITIONS.cohortMember.key(site);
export const cohortPk = (site: string) => PARTITIONS.cohort.key(site);
const { PAYER_PAYMENT, PAYER_STATE } = PARTITIONS.payer.items;
const { COHORT_MEMBER } = PARTITIONS.cohortMember.items;
const { COHORT, COHORT_CHANGE, COHORT_SOURCES } = PARTITIONS.cohort.items;
const entrySk = PAYER_PAYMENT.key;
const stateSk = PAYER_STATE.key;
const memberSk = COHORT_MEMBER.key;
const SOURCES_SK = COHORT_SOURCES.key();
/** The payer key of a PAYER_PAYMENT or PAYER_STATE sort key (`<length>:<payer>#…`). */
const payerOfSk = (sk: string) => {
  const colon = sk.indexOf(':');
  return sk.slice(colon + 1, colon + 1 + Number(sk.slice(0, colon)));
};
/** Summary items (PAYER_STATE, COHORT_MEMBER) a bulk load holds before writing them: ≤ 1 KB each, so at most about 1 MB. */
const SUMMARY_WRITE_BUFFER = 1_000;

/**
 * The three COHORT items of a period (`D#<day>` or `M#<month>`): one per
 * grouping, the channels one carrying the period's payers (`n`).
 */
export function cohortItems(
  site: string,
  period: string,
  cohort: CohortGroups,
  payers: number,
  src: number,
): Array<Record<string, unknown>> {
  return GROUPINGS.map((grouping) => ({
    [PK]: cohortPk(site),
    [SK]: COHORT.key(period, grouping),
    type: 'COHORT',
    v: serializeGroups(cohort[grouping]),
    ...(grouping === 'channels' ? { n: payers } : {}),
    src,
  }));
}

/** The payers a recompute batch waits to recompute (their states marked `pend`). */
interface Deferred {
  site: string;
  timezone: string;
  now: number;
  payers: Set<string>;
}

function ignoreCondition(error: unknown): void {
  if (!(error instanceof ConditionalCheckFailedException)) throw error;
}

/** The cohort rollups of retention and the per-payer items they are recomputed from. */
export class CohortStore {
  constructor(private readonly conn: DynamoConnection) {}

  /**
   * Brings a payer's retention items in line with one of its payments: its
   * PAYER_PAYMENT item takes the payment's entry unless a newer revision
   * wrote one, then the payer's summary and cohorts are recomputed. A
   * payment already in line costs one read. Idempotent; safe after a crash
   * anywhere (the entry stays `pending` until the recompute finished; in a batch, the payer's state `pend`).
   *
   * @param now ms since epoch, the caller's clock ("paying until" days before its local day are dropped)
   * @param batch when given (a re-credit of many payments), the payer recomputes wait for the
   *   batch's end (`RecomputeBatch.after`), each payer and each cohort day and month recomputed once.
   *   The payer's state is then marked `pend` once, before its first entry of the batch is written,
   *   instead of each entry `pending` (one write per payer, not two per payment: the sessionizer's write budget, `docs/benchmarks.md` "Budgets");
   *   a retry finds the mark, since only the payer's recompute clears it
   */
  async syncPayment(
    site: string,
    timezone: string,
    payment: Payment,
    rate: UsdRate,
    now: number,
    batch?: RecomputeBatch,
  ): Promise<void> {
    const payer = customerKey(payment);
    const entry = payerPaymentOf(payment, rate);
    const key = { [PK]: payerPk(site), [SK]: entrySk(payer, `${payment.provider}:${payment.provider_payment_id}`) };
    const { Item } = await this.conn.doc.send(
      new GetCommand({ TableName: this.conn.table, Key: key, ConsistentRead: true }),
    );
    const wanted = entry ? JSON.stringify(entry) : null;
    if (!Item && wanted === null) return;
    if (Item && Number(Item.rev) > payment.rev) return;
    if (Item && !Item.pending && ((Item.e as string | undefined) ?? null) === wanted) {
      // In line; in a batch, the retry of one that crashed before its payers' recomputes finished finds their marks.
      if (batch && (await this.payerMarked(site, payer))) this.defer(batch, site, timezone, now, payer);
      return;
    }
    if (batch) await this.markPayer(batch, site, payer);
    try {
      await this.conn.doc.send(
        new PutCommand({
          TableName: this.conn.table,
          Item: {
            ...key,
            type: 'PAYER_PAYMENT',
            rev: payment.rev,
            ...(batch ? {} : { pending: 1 }),
            ...(wanted !== null ? { e: wanted } : {}),
          },
          ConditionExpression: `attribute_not_exists(${PK}) OR rev <= :rev`,
          ExpressionAttributeValues: { ':rev': payment.rev },
        }),
      );
    } catch (error) {
      ignoreCondition(error);
      // A newer revision's entry is in: its own sync recomputes the payer; in a batch, this one's mark is released too.
      if (batch) this.defer(batch, site, timezone, now, payer);
      return;
    }
    if (batch) {
      this.defer(batch, site, timezone, now, payer);
      return;
    }
    await this.recomputePayer(site, timezone, payer, now);
    await this.settled({ key, rev: payment.rev });
  }

  /** Marks a payer's state `pend` (its recompute owed) once per batch, before the batch writes its first entry of the payer. */
  private async markPayer(batch: RecomputeBatch, site: string, payer: string): Promise<void> {
    if (this.deferred.get(batch)?.payers.has(payer)) return;
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: { [PK]: payerPk(site), [SK]: stateSk(payer) },
        UpdateExpression: 'SET pend = :one, #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': 'PAYER_STATE' },
      }),
    );
  }

  /** Whether a payer's state says a recompute of it is owed (`pend`). */
  private async payerMarked(site: string, payer: string): Promise<boolean> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: { [PK]: payerPk(site), [SK]: stateSk(payer) },
        ConsistentRead: true,
      }),
    );
    return Item?.pend !== undefined;
  }

  /** Removes a PAYER_PAYMENT item's `pending`, if it still holds the revision synced. */
  private async settled(entry: { key: Record<string, unknown>; rev: number }): Promise<void> {
    await this.conn.doc
      .send(
        new UpdateCommand({
          TableName: this.conn.table,
          Key: entry.key,
          UpdateExpression: 'REMOVE pending',
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': entry.rev },
        }),
      )
      .catch(ignoreCondition);
  }

  /** The payers (and their pending payment items) a recompute batch waits to recompute. */
  private readonly deferred = new WeakMap<RecomputeBatch, Deferred>();

  private defer(batch: RecomputeBatch, site: string, timezone: string, now: number, payer: string): void {
    let waiting = this.deferred.get(batch);
    if (!waiting) {
      const created: Deferred = { site, timezone, now, payers: new Set<string>() };
      this.deferred.set(batch, created);
      batch.after.push(async () => {
        this.deferred.delete(batch);
        await this.finishDeferred(created);
      });
      waiting = created;
    }
    waiting.payers.add(payer);
  }

  /** A batch's end: each payer recomputed, then the cohort days and months they touched once, then their states released. */
  private async finishDeferred(w: Deferred): Promise<void> {
    const days = new Set<string>();
    const release: Array<() => Promise<void>> = [];
    for (const payer of [...w.payers].sort()) {
      const done = await this.recomputePayer(w.site, w.timezone, payer, w.now, days);
      if (done) release.push(done);
    }
    await this.recomputeCohorts(w.site, w.timezone, [...days].sort(), w.now);
    for (const done of release) await done();
  }

  /**
   * Takes a payment away from a payer it no longer belongs to (its customer
   * id changed, or it was folded into another payment), then recomputes that
   * payer. Idempotent.
   */
  async dropPayment(site: string, timezone: string, payer: string, paymentKey: string, now: number): Promise<void> {
    const key = { [PK]: payerPk(site), [SK]: entrySk(payer, paymentKey) };
    await this.conn.doc.send(new DeleteCommand({ TableName: this.conn.table, Key: key }));
    // Always recomputed (a read when in line): a crash after the delete left the summary to mend.
    await this.recomputePayer(site, timezone, payer, now);
  }

  /** Recomputes a provider customer's summary after its CUSTOMER item changed (subscription statuses; a new customer is a status source). */
  async syncCustomer(site: string, timezone: string, provider: string, customerId: string, now: number): Promise<void> {
    await this.recomputePayer(site, timezone, `${provider}:${customerId}`, now);
  }

  /**
   * The payments (`provider`, `id`) of a payer that hold a PAYER_PAYMENT entry: every payment of it that was
   * ever countable. Keys only, a Query page of 200 at a time.
   */
  async payerPaymentKeys(site: string, payer: string): Promise<Array<{ provider: Provider; id: string }>> {
    const prefix = PAYER_PAYMENT.range.of(payer);
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :p)`,
      ExpressionAttributeValues: { ':pk': payerPk(site), ':p': prefix },
      ProjectionExpression: SK,
      ConsistentRead: true,
      Limit: 200,
    };
    const keys: Array<{ provider: Provider; id: string }> = [];
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) {
        // `<provider>:<id>`: a provider name has no colon, an id may.
        const key = String(item[SK]).slice(prefix.length);
        const colon = key.indexOf(':');
        const provider = PROVIDERS.find((name) => name === key.slice(0, colon));
        if (provider) keys.push({ provider, id: key.slice(colon + 1) });
      }
    return keys;
  }

  private async readPayer(site: string, payer: string, timezone: string): Promise<PayerFacts> {
    const entries: PayerPayment[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :p)`,
      ExpressionAttributeValues: { ':pk': payerPk(site), ':p': PAYER_PAYMENT.range.of(payer) },
      ConsistentRead: true,
      Limit: 200,
    };
    const customerId = payerCustomerId(payer);
    const [customer] = await Promise.all([
      customerId === null
        ? Promise.resolve(undefined)
        : this.conn.doc
            .send(
              new GetCommand({
                TableName: this.conn.table,
                Key: {
                  [PK]: PARTITIONS.customer.key(site),
                  [SK]: PARTITIONS.customer.items.CUSTOMER.key(payerProvider(payer), customerId),
                },
                ConsistentRead: true,
              }),
            )
            .then((r) => r.Item),
      (async () => {
        for await (const page of paginateQuery({ client: this.conn.doc }, query))
          for (const item of page.Items ?? [])
            if (typeof item.e === 'string') entries.push(JSON.parse(item.e) as PayerPayment);
      })(),
    ]);
    const statuses = Object.values(
      ((customer as Customer | undefined)?.subscriptions ?? {}) as Record<string, SubscriptionState>,
    );
    return { summary: payerSummary(entries, statuses, timezone), statuses, customerExists: customer !== undefined };
  }

  /**
   * Recomputes a payer's summary and moves its COHORT_MEMBER item, then the
   * cohorts of every day (and month) it left or joined. Reads first: when the
   * stored member, the days held and the status sources already match, and
   * no recompute was left half done (`pend`), nothing is written. Otherwise
   * the payer's counter is bumped before reading again, and the member is
   * written only over one computed from an older counter, so of two racing
   * recomputes the one that read later wins.
   *
   * @param collect when given, the cohort days to recompute are added to it and the payer's
   *   release (its state's `pend`) is returned, to run after the caller recomputed them
   */
  private async recomputePayer(
    site: string,
    timezone: string,
    payer: string,
    now: number,
    collect?: Set<string>,
  ): Promise<(() => Promise<void>) | null> {
    const stateKey = { [PK]: payerPk(site), [SK]: stateSk(payer) };
    const provider = payerProvider(payer);
    const sourcesOk = (facts: PayerFacts, sources: Record<string, boolean>) =>
      !(facts.summary !== null || facts.customerExists) ||
      (provider in sources && (facts.statuses.length === 0 || sources[provider] === true));
    const [{ Item: state }, before, { sources }] = await Promise.all([
      this.conn.doc.send(new GetCommand({ TableName: this.conn.table, Key: stateKey, ConsistentRead: true })),
      this.readPayer(site, payer, timezone),
      this.sourceFlags(site, true),
    ]);
    const heldBefore = [...((state?.held as Set<string> | undefined) ?? [])];
    const dayBefore = before.summary?.day ?? null;
    if (
      !state?.pend &&
      sourcesOk(before, sources) &&
      heldBefore.length === (dayBefore === null ? 0 : 1) &&
      heldBefore.every((d) => d === dayBefore)
    ) {
      const stored =
        dayBefore === null
          ? undefined
          : (
              await this.conn.doc.send(
                new GetCommand({
                  TableName: this.conn.table,
                  Key: { [PK]: memberPk(site), [SK]: memberSk(dayBefore, payer) },
                  ConsistentRead: true,
                }),
              )
            ).Item;
      if (((stored?.m as string | undefined) ?? null) === (before.summary ? JSON.stringify(before.summary) : null))
        return null;
    }
    const { Attributes: bumped } = await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: stateKey,
        UpdateExpression: 'ADD n :one SET pend = :one, #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':one': 1, ':type': 'PAYER_STATE' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const src = Number(bumped?.n ?? 1);
    const facts = await this.readPayer(site, payer, timezone);
    const day = facts.summary?.day ?? null;
    if (!sourcesOk(facts, sources)) await this.markSource(site, provider, facts.statuses.length > 0);
    const held = new Set<string>((bumped?.held as Set<string> | undefined) ?? []);
    if (day !== null && facts.summary) {
      if (!held.has(day)) {
        await this.conn.doc.send(
          new UpdateCommand({
            TableName: this.conn.table,
            Key: stateKey,
            UpdateExpression: 'ADD held :day',
            ExpressionAttributeValues: { ':day': new Set([day]) },
          }),
        );
      }
      await this.conn.doc
        .send(
          new PutCommand({
            TableName: this.conn.table,
            Item: {
              [PK]: memberPk(site),
              [SK]: memberSk(day, payer),
              type: 'COHORT_MEMBER',
              m: JSON.stringify(facts.summary),
              src,
            },
            ConditionExpression: `attribute_not_exists(${PK}) OR src < :src`,
            ExpressionAttributeValues: { ':src': src },
          }),
        )
        .catch(ignoreCondition);
    }
    for (const d of held) {
      if (d === day) continue;
      await this.conn.doc
        .send(
          new DeleteCommand({
            TableName: this.conn.table,
            Key: { [PK]: memberPk(site), [SK]: memberSk(d, payer) },
            ConditionExpression: 'src < :src',
            ExpressionAttributeValues: { ':src': src },
          }),
        )
        .catch(ignoreCondition);
    }
    const days = [...new Set([...held, ...(day !== null ? [day] : [])])].sort();
    const release = async () => {
      await this.conn.doc
        .send(
          new UpdateCommand({
            TableName: this.conn.table,
            Key: stateKey,
            UpdateExpression: day !== null ? 'SET held = :held REMOVE pend' : 'REMOVE pend, held',
            ConditionExpression: 'n = :src',
            ExpressionAttributeValues: { ':src': src, ...(day !== null ? { ':held': new Set([day]) } : {}) },
          }),
        )
        .catch(ignoreCondition);
    };
    if (collect) {
      for (const d of days) collect.add(d);
      return release;
    }
    await this.recomputeCohorts(site, timezone, days, now);
    await release();
    return null;
  }

  /** Recomputes the cohorts of `days` and then of their months. */
  private async recomputeCohorts(site: string, timezone: string, days: readonly string[], now?: number): Promise<void> {
    // Each period's items are its own (their counter guards them): several at once, months after their days.
    await inParallel(days, BULK_CONCURRENCY, (day) => this.recomputeDay(site, timezone, day, now));
    await inParallel([...new Set(days.map((d) => d.slice(0, 7)))], BULK_CONCURRENCY, (month) =>
      this.recomputeMonth(site, timezone, month, now),
    );
  }

  /** Bumps a cohort period's change counter and returns its new value (the recompute that follows owns it). */
  private async bump(site: string, period: string): Promise<number> {
    return bumpChangeCounter(this.conn, cohortPk(site), COHORT_CHANGE.key(period), 'COHORT_CHANGE');
  }

  /** The summaries of the payers whose first payment is on a local day, read consistently. */
  async dayMembers(site: string, day: string): Promise<PayerSummary[]> {
    const out: PayerSummary[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :day)`,
      ExpressionAttributeValues: { ':pk': memberPk(site), ':day': COHORT_MEMBER.range.day(day) },
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) out.push(JSON.parse(String(item.m)) as PayerSummary);
    return out;
  }

  /**
   * Recomputes a day's three cohort items from its members (change counter
   * bumped before the Query; each item written only over one computed from
   * an older counter, as the payment counters are).
   */
  async recomputeDay(site: string, timezone: string, day: string, now?: number): Promise<void> {
    const src = await this.bump(site, day);
    await this.writeDay(site, timezone, day, src, await this.dayMembers(site, day), now);
  }

  /** Writes a day's three cohort items computed from `members`, read after its counter became `src`. */
  private async writeDay(
    site: string,
    timezone: string,
    day: string,
    src: number,
    members: readonly PayerSummary[],
    now?: number,
  ): Promise<void> {
    await this.writeCohort(
      site,
      periodSk('D', day),
      cohortOf(members, keptFrom(now, timezone), true),
      members.length,
      src,
    );
  }

  /** Recomputes a month's three cohort items from its days' items (same guard as `recomputeDay`). */
  async recomputeMonth(site: string, timezone: string, month: string, now?: number): Promise<void> {
    const src = await this.bump(site, month);
    const days = await this.read(site, { granularity: 'D', from: `${month}-01`, to: `${month}-31` }, true);
    await this.writeCohort(
      site,
      periodSk('M', month),
      mergeCohorts(
        days.map((d) => d.cohort),
        keptFrom(now, timezone),
        true,
      ),
      days.reduce((n, d) => n + d.payers, 0),
      src,
    );
  }

  private async writeCohort(
    site: string,
    period: string,
    cohort: CohortGroups,
    payers: number,
    src: number,
  ): Promise<void> {
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

  /** The cohort items of one span, per period, with the payers of each (from its channels item). */
  private async read(
    site: string,
    span: PeriodSpan,
    consistent: boolean,
  ): Promise<Array<{ period: string; cohort: CohortGroups; payers: number }>> {
    const byPeriod = new Map<string, { period: string; cohort: CohortGroups; payers: number }>();
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND ${SK} BETWEEN :from AND :to`,
      ExpressionAttributeValues: {
        ':pk': cohortPk(site),
        ':from': COHORT.range.from(span.granularity, span.from),
        ':to': COHORT.range.to(span.granularity, span.to),
      },
      ConsistentRead: consistent,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        const [, period = '', grouping] = String(item[SK]).split('#');
        const entry = byPeriod.get(period) ?? { period, cohort: emptyCohort(), payers: 0 };
        entry.cohort[grouping as Grouping] = deserializeGroups(String(item.v));
        if (grouping === 'channels') entry.payers = Number(item.n ?? 0);
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
          ExpressionAttributeValues: { ':pk': cohortPk(site), ':d': COHORT.range.granularity('D') },
          ProjectionExpression: `${SK}, n`,
          Limit: 60,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of Items) {
        if (Number(item.n ?? 0) > 0) return String(item[SK]).slice(2, 12);
      }
      start = LastEvaluatedKey;
    } while (start);
    return null;
  }

  /** The status sources seen (`p_<provider>`: 1 when it sent a subscription status). */
  async sourceFlags(site: string, consistent = false): Promise<{ sources: Record<string, boolean> }> {
    const { Item } = await this.conn.doc.send(
      new GetCommand({
        TableName: this.conn.table,
        Key: { [PK]: cohortPk(site), [SK]: SOURCES_SK },
        ConsistentRead: consistent,
      }),
    );
    const sources = dict<boolean>();
    for (const [k, v] of Object.entries(Item ?? {})) if (k.startsWith('p_')) sources[k.slice(2)] = Number(v) === 1;
    return { sources };
  }

  /** Records a provider as a status source (monotone: customers are never deleted, statuses never removed). */
  private async markSource(site: string, provider: string, status: boolean): Promise<void> {
    await this.conn.doc.send(
      new UpdateCommand({
        TableName: this.conn.table,
        Key: { [PK]: cohortPk(site), [SK]: SOURCES_SK },
        UpdateExpression: status ? 'SET #p = :one, #type = :type' : 'SET #p = if_not_exists(#p, :zero), #type = :type',
        ExpressionAttributeNames: { '#p': `p_${provider}`, '#type': 'type' },
        ExpressionAttributeValues: { ...(status ? { ':one': 1 } : { ':zero': 0 }), ':type': 'COHORT_SOURCES' },
      }),
    );
  }

  /**
   * Writes the retention items of payments and customers no other writer is
   * changing (the report benchmark, an import, a bulk load):
   * every PAYER_PAYMENT, PAYER_STATE and COHORT_MEMBER with BatchWriteItem,
   * each touched day's and month's cohorts recomputed once, and the status
   * sources. The items `syncPayment` would leave.
   * `bulkWrite` then `bulkSummarize`.
   * @returns payers written
   */
  async bulkLoad(
    site: string,
    timezone: string,
    payments: readonly Payment[],
    customers: readonly Customer[],
    rate: UsdRate,
    now?: number,
  ): Promise<number> {
    const payers = new Set<string>();
    await this.bulkWrite(site, payments, rate, payers);
    await this.bulkSummarize(site, timezone, payers, customers, now);
    return payers.size;
  }

  /**
   * The first half of a bulk load taken in chunks: writes the chunk's
   * PAYER_PAYMENT items (its countable payments; a payment that is not
   * countable writes nothing, as in `bulkLoad`) with BatchWriteItem and adds
   * their payer keys (`customerKey`) to `payers`. A payer's payments may be
   * spread over any number of chunks: its summary is computed in
   * `bulkSummarize`, from the table.
   */
  async bulkWrite(site: string, payments: readonly Payment[], rate: UsdRate, payers: Set<string>): Promise<void> {
    const items: Array<Record<string, unknown>> = [];
    for (const p of payments) {
      const payer = customerKey(p);
      payers.add(payer);
      const e = payerPaymentOf({ ...p, site }, rate);
      if (e)
        items.push({
          [PK]: payerPk(site),
          [SK]: entrySk(payer, e.key),
          type: 'PAYER_PAYMENT',
          rev: p.rev,
          e: JSON.stringify(e),
        });
    }
    await batchWrite(
      this.conn,
      items.map((Item) => ({ PutRequest: { Item } })),
      BULK_CONCURRENCY,
    );
  }

  /**
   * The second half of a bulk load: for each of `payers`, its summary from
   * its PAYER_PAYMENT entries read back (one paged, consistent Query of the
   * site's `CP#` partition, where a payer's entries are contiguous: the
   * payer id is length-prefixed), with its customer's subscription statuses
   * from `customers`; its PAYER_STATE and COHORT_MEMBER written with
   * BatchWriteItem (buffered, `SUMMARY_WRITE_BUFFER` items at a time); a
   * payer already summarized (its PAYER_STATE, read by the same Query) loses
   * the COHORT_MEMBER items of days it no longer starts on; then each day
   * with a member, or left by one, and its month recomputed once, and the
   * status sources. Memory: the payer keys, the customers and one
   * payer's entries, not the payments.
   * @param now ms since epoch ("paying until" days before its local day are dropped); omitted, none is
   */
  async bulkSummarize(
    site: string,
    timezone: string,
    payers: ReadonlySet<string>,
    customers: readonly Customer[],
    now?: number,
  ): Promise<void> {
    const customerOf = new Map(customers.map((c) => [`${c.provider}:${c.customer_id}`, c]));
    const sources = new Map<string, boolean>();
    for (const c of customers)
      sources.set(c.provider, (sources.get(c.provider) ?? false) || Object.keys(c.subscriptions).length > 0);
    const days = new Set<string>();
    let items: Array<Record<string, unknown>> = [];
    const flush = async () => {
      await batchWrite(
        this.conn,
        items.map(({ delete: remove, ...Item }) =>
          remove ? { DeleteRequest: { Key: { [PK]: Item[PK], [SK]: Item[SK] } } } : { PutRequest: { Item } },
        ),
        BULK_CONCURRENCY,
      );
      items = [];
    };
    // `held`: the days a payer's member items stood on before (its PAYER_STATE); those it left are deleted and recomputed.
    const summarize = async (payer: string, entries: readonly PayerPayment[], held: readonly string[]) => {
      const summary = payerSummary(entries, Object.values(customerOf.get(payer)?.subscriptions ?? {}), timezone);
      for (const day of held) {
        if (day === summary?.day) continue;
        days.add(day);
        items.push({ delete: true, [PK]: memberPk(site), [SK]: memberSk(day, payer) });
      }
      if (!summary) {
        if (held.length > 0) items.push({ [PK]: payerPk(site), [SK]: stateSk(payer), type: 'PAYER_STATE', n: 0 });
        return;
      }
      sources.set(payerProvider(payer), sources.get(payerProvider(payer)) ?? false);
      days.add(summary.day);
      items.push({
        [PK]: payerPk(site),
        [SK]: stateSk(payer),
        type: 'PAYER_STATE',
        n: 0,
        held: new Set([summary.day]),
      });
      items.push({
        [PK]: memberPk(site),
        [SK]: memberSk(summary.day, payer),
        type: 'COHORT_MEMBER',
        m: JSON.stringify(summary),
        src: 0,
      });
      if (items.length >= SUMMARY_WRITE_BUFFER) await flush();
    };
    let current: string | null = null;
    let entries: PayerPayment[] = [];
    let held: string[] = [];
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk`,
      ExpressionAttributeValues: { ':pk': payerPk(site) },
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query)) {
      for (const item of page.Items ?? []) {
        const state = item.type === 'PAYER_STATE';
        if (!state && (item.type !== 'PAYER_PAYMENT' || item.e === undefined)) continue;
        const payer = payerOfSk(String(item[SK]));
        if (payer !== current) {
          if (current !== null && payers.has(current)) await summarize(current, entries, held);
          [current, entries, held] = [payer, [], []];
        }
        if (state) held = [...((item.held as Set<string> | undefined) ?? [])];
        else entries.push(JSON.parse(String(item.e)) as PayerPayment);
      }
    }
    if (current !== null && payers.has(current)) await summarize(current, entries, held);
    await flush();
    await this.bulkRecompute(site, timezone, days, now);
    for (const [provider, status] of sources) await this.markSource(site, provider, status);
  }

  /**
   * `recomputeCohorts` for a bulk load's days: a month's days are read
   * together, their change counters bumped first, then one paged Query of
   * the month's COHORT_MEMBER items (instead of one per day), so each day's
   * result carries the guard `recomputeDay`'s would; then each month.
   * Memory: one month's members at a time.
   */
  private async bulkRecompute(site: string, timezone: string, days: Iterable<string>, now?: number): Promise<void> {
    const byMonth = new Map<string, string[]>();
    for (const day of new Set(days)) byMonth.set(day.slice(0, 7), [...(byMonth.get(day.slice(0, 7)) ?? []), day]);
    for (const [month, monthDays] of [...byMonth].sort(([a], [b]) => a.localeCompare(b))) {
      const src = new Map<string, number>();
      await inParallel(monthDays, BULK_CONCURRENCY, async (day) => void src.set(day, await this.bump(site, day)));
      const members = await this.monthMembers(site, month);
      await inParallel(monthDays.sort(), BULK_CONCURRENCY, (day) =>
        this.writeDay(site, timezone, day, src.get(day) ?? 0, members.get(day) ?? [], now),
      );
    }
    await inParallel([...byMonth.keys()], BULK_CONCURRENCY, (month) => this.recomputeMonth(site, timezone, month, now));
  }

  /** The summaries of the payers whose first payment is in a month, by local day, read consistently (`dayMembers`' order). */
  private async monthMembers(site: string, month: string): Promise<Map<string, PayerSummary[]>> {
    const out = new Map<string, PayerSummary[]>();
    const query = {
      TableName: this.conn.table,
      KeyConditionExpression: `${PK} = :pk AND begins_with(${SK}, :month)`,
      ExpressionAttributeValues: { ':pk': memberPk(site), ':month': COHORT_MEMBER.range.month(month) },
      ConsistentRead: true,
    };
    for await (const page of paginateQuery({ client: this.conn.doc }, query))
      for (const item of page.Items ?? []) {
        const summary = JSON.parse(String(item.m)) as PayerSummary;
        const day = out.get(summary.day);
        if (day) day.push(summary);
        else out.set(summary.day, [summary]);
      }
    return out;
  }
}
