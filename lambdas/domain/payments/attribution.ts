import type { AttributionModel } from '../site.js';
import type { Visit } from '../visit.js';

const DAY_MS = 86_400_000;

/** The credited visit as a payment row shows it (`docs/api.md` "Payments" `touch`). */
export interface Touch {
  session_id: string;
  /** Visit start, ms since epoch. */
  ts: number;
  channel: string;
  referrer_host: string | null;
  source: string | null;
  campaign: string | null;
  landing_page: string;
  country: string | null;
  device: string;
}

/** The payer's first visit (`docs/api.md` "Payments" `first_touch`). */
export interface FirstTouch {
  ts: number;
  channel: string;
  referrer_host: string | null;
  source: string | null;
}

export function touchOf(visit: Visit): Touch {
  return {
    session_id: visit.id,
    ts: visit.start,
    channel: visit.attrs.channel,
    referrer_host: visit.attrs.referrer_host,
    source: visit.attrs.source,
    campaign: visit.attrs.utm_campaign,
    landing_page: visit.landing_page,
    country: visit.attrs.country,
    device: visit.attrs.device,
  };
}

export function firstTouchOf(visit: Visit): FirstTouch {
  return {
    ts: visit.start,
    channel: visit.attrs.channel,
    referrer_host: visit.attrs.referrer_host,
    source: visit.attrs.source,
  };
}

/**
 * The models (`docs/payments.md` "Customers and attribution"), each picking one visit from
 * the visits inside the lookback window, oldest first. `last_non_direct`
 * falls back to the latest Direct visit when every visit is Direct.
 */
const MODELS: Readonly<Record<AttributionModel, (inWindow: readonly Visit[]) => Visit | undefined>> = {
  last_touch: (visits) => visits[visits.length - 1],
  first_touch: (visits) => visits[0],
  last_non_direct: (visits) =>
    [...visits].reverse().find((v) => v.attrs.channel !== 'Direct') ?? visits[visits.length - 1],
};

/**
 * The visit a payment is credited to, or null (Unattributed).
 *
 * A visit counts when it started at or before the payment and no more than
 * `lookbackDays` days before it (visits that start after the payment never
 * earned it). With no visitor or no visit in the window the payment is
 * Unattributed.
 *
 * @param visits the payer visitor's visits, any order
 * @param paymentTs payment time, ms since epoch
 */
export function creditVisit(
  visits: readonly Visit[],
  paymentTs: number,
  model: AttributionModel,
  lookbackDays: number,
): Visit | null {
  const from = paymentTs - lookbackDays * DAY_MS;
  const inWindow = visits.filter((v) => v.start <= paymentTs && v.start >= from).sort((a, b) => a.start - b.start);
  if (inWindow.length === 0) return null;
  return MODELS[model](inWindow) ?? null;
}

/** The visitor's first visit ever (for `first_touch`), or null when they have none. */
export function firstVisit(visits: readonly Visit[]): Visit | null {
  return visits.reduce<Visit | null>((first, v) => (!first || v.start < first.start ? v : first), null);
}
