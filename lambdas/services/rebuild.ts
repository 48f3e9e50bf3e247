import { classifyChannel } from '../domain/channel.js';
import { addDays, dayStart } from '../domain/range.js';
import { namespaceOf, type SiteConfig } from '../domain/site.js';
import type { TrackedEvent } from '../domain/tracked-event.js';
import type { ArchiveReader } from '../ports.js';
import { sessionizeBatch, type SessionizeDeps } from './sessionize.js';
import { recreditSite, type PaymentDeps } from './payments.js';
import type { DynamoRebuildStore } from '../adapters/dynamo/rebuild-store.js';

export interface RebuildDeps {
  archive: ArchiveReader;
  clear: Pick<DynamoRebuildStore, 'deleteRollups' | 'deleteVisits'>;
  sessionize: SessionizeDeps;
  payments: PaymentDeps;
}

export interface RebuildOutcome {
  /** The local days rebuilt: whole months. */
  from: string;
  to: string;
  events: number;
  visitors: number;
  rollupsDeleted: number;
  visitsDeleted: number;
  recredited: number;
}

/** An archived event with its channel and source classified again by today's rules. */
export function reclassify(event: TrackedEvent): TrackedEvent {
  const { channel, source } = classifyChannel({
    referrerHost: event.referrer_host,
    utmSource: event.utm_source,
    utmMedium: event.utm_medium,
    utmCampaign: event.utm_campaign,
    clickIds: event.click_ids ? event.click_ids.split(',') : [],
  });
  return { ...event, channel, source };
}

const BATCH = 1000;

/**
 * Derives a site's visits and rollups again from the raw archive
 * (`footfall rebuild`; DESIGN.md: everything in DynamoDB can be rebuilt from
 * the archive), so a changed channel rule is replayed over history.
 *
 * The span is widened to whole months (rollups are kept by month). The
 * archive query runs first and must succeed before anything is deleted; then
 * the span's rollups and the visits of its visitors are cleared, the events
 * are sessionized again in time order with today's channel rules (as their
 * own shard, so the stream's checkpoints stay valid), and the site's payments
 * are credited again.
 *
 * @param from first local day wanted (`YYYY-MM-DD`); @param to last one
 */
export async function rebuildSite(deps: RebuildDeps, site: SiteConfig, from: string, to: string, onProgress?: (events: number) => void): Promise<RebuildOutcome> {
  const first = `${from.slice(0, 7)}-01`;
  const last = addDays(`${addDays(`${to.slice(0, 7)}-28`, 4).slice(0, 7)}-01`, -1);
  const startMs = dayStart(first, site.timezone);
  const endMs = dayStart(addDays(last, 1), site.timezone);
  // Partitions are UTC days: a day either side covers every timezone.
  const pages = await deps.archive.events(site.domain, addDays(first, -1), addDays(last, 1));

  const outcome: RebuildOutcome = { from: first, to: last, events: 0, visitors: 0, rollupsDeleted: 0, visitsDeleted: 0, recredited: 0 };
  outcome.rollupsDeleted = await deps.clear.deleteRollups(namespaceOf(site), first.slice(0, 7), last.slice(0, 7));
  const cleared = new Set<string>();
  const shard = `rebuild-${Date.now()}`;
  let sequence = 0;
  let batch: TrackedEvent[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const events = batch;
    batch = [];
    for (const visitor of new Set(events.map((e) => e.visitor_id))) {
      if (cleared.has(visitor)) continue;
      cleared.add(visitor);
      outcome.visitsDeleted += await deps.clear.deleteVisits(namespaceOf(site), visitor, startMs, endMs - 1);
    }
    sequence++;
    await sessionizeBatch(deps.sessionize, { shard, sequence: String(sequence) }, events.map((e) => ({ sequenceNumber: String(sequence), data: Buffer.from(JSON.stringify(e)) })));
    outcome.events += events.length;
    onProgress?.(outcome.events);
  };
  for await (const page of pages) {
    for (const event of page) {
      if (event.ts < startMs || event.ts >= endMs) continue;
      batch.push(reclassify(event));
      if (batch.length >= BATCH) await flush();
    }
  }
  await flush();
  outcome.visitors = cleared.size;
  outcome.recredited = await recreditSite(deps.payments, site);
  return outcome;
}
