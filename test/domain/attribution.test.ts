import { describe, expect, it } from 'vitest';
import { creditVisit, firstVisit, touchOf } from '../../lambdas/domain/payments/attribution.js';
import type { AttributionModel } from '../../lambdas/domain/site.js';
import type { Visit } from '../../lambdas/domain/visit.js';

const DAY = 86_400_000;
const PAY = Date.UTC(2026, 5, 30, 12);

function visit(id: string, daysBefore: number, channel: string): Visit {
  const start = PAY - daysBefore * DAY;
  return {
    id,
    site: 'example.com',
    visitor_id: 'visitor-0001',
    start,
    end: start + 60_000,
    landing_page: `/${id}`,
    attrs: {
      channel,
      referrer_host: null,
      source: null,
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
      utm_term: null,
      utm_content: null,
      country: 'DE',
      device: 'Desktop',
      browser: null,
      os: null,
      language: null,
    },
    events: [],
  };
}

const search = visit('search', 20, 'Search');
const direct = visit('direct', 2, 'Direct');
const ai = visit('ai', 10, 'AI');
const old = visit('old', 45, 'Social');
const after = visit('after', -1, 'Email');
const sameInstant = { ...visit('same', 0, 'Referral') };

describe('creditVisit: the attribution models', () => {
  it.each<[string, Visit[], AttributionModel, number, string | null]>([
    ['last non-direct skips a later Direct visit', [search, ai, direct], 'last_non_direct', 30, 'ai'],
    ['last touch takes the latest visit, Direct or not', [search, ai, direct], 'last_touch', 30, 'direct'],
    ['first touch takes the earliest visit in the window', [search, ai, direct], 'first_touch', 30, 'search'],
    [
      'only Direct visits: last non-direct falls back to the latest Direct',
      [visit('d1', 5, 'Direct'), direct],
      'last_non_direct',
      30,
      'direct',
    ],
    ['payment before any visit: Unattributed', [after], 'last_non_direct', 30, null],
    ['a visit after the payment never earns it', [ai, after], 'last_touch', 30, 'ai'],
    ['a visit at the payment instant counts', [ai, sameInstant], 'last_touch', 30, 'same'],
    ['visits outside the window are ignored', [old, direct], 'last_non_direct', 30, 'direct'],
    ['first touch inside the window, not ever', [old, ai], 'first_touch', 30, 'ai'],
    ['a longer window reaches the older visit', [old, direct], 'last_non_direct', 60, 'old'],
    ['a window of one day', [ai, direct], 'last_touch', 1, null],
    [
      'a visit exactly lookback_days before the payment counts',
      [visit('edge', 30, 'Social')],
      'last_touch',
      30,
      'edge',
    ],
    [
      'a visit a moment more than lookback_days before does not',
      [visit('past', 30.001, 'Social')],
      'last_touch',
      30,
      null,
    ],
    ['no visits at all: Unattributed', [], 'first_touch', 30, null],
    ['order of the input does not matter', [direct, ai, search], 'first_touch', 30, 'search'],
  ])('%s', (_name, visits, model, lookback, expected) => {
    expect(creditVisit(visits, PAY, model, lookback)?.id ?? null).toBe(expected);
  });

  it('gives the first visit ever for first_touch rows', () => {
    expect(firstVisit([ai, old, direct])?.id).toBe('old');
    expect(firstVisit([])).toBeNull();
  });

  it('maps a visit to the touch fields of a payment row', () => {
    expect(touchOf(ai)).toEqual({
      session_id: 'ai',
      ts: ai.start,
      channel: 'AI',
      referrer_host: null,
      source: null,
      campaign: null,
      landing_page: '/ai',
      country: 'DE',
      device: 'Desktop',
    });
  });
});
