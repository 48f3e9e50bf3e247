import { readFile } from 'node:fs/promises';
import type { StandInAnswer } from './api-stand-in.js';

type Json = Record<string, unknown>;
const dataOf = async (name: string) =>
  (
    JSON.parse(await readFile(new URL(`../fixtures/payments/paddle/${name}.json`, import.meta.url), 'utf8')) as {
      data: Json;
    }
  ).data;
/** Entities a page: fewer than asked, as an API may answer. */
const PER_PAGE = 2;

// Paddle (https://developer.paddle.com/api-reference/transactions/overview, /adjustments/…, /subscriptions/…):
// a first payment and its renewal, a EUR purchase, a paid (not completed) transaction; refunds pending, partial, full.
export const PADDLE: Record<string, Json[]> = {
  transactions: [
    await dataOf('transaction.paid'),
    await dataOf('transaction.completed'),
    await dataOf('transaction.completed.eur'),
    await dataOf('transaction.completed.renewal'),
  ],
  adjustments: [
    { ...(await dataOf('adjustment.created')), id: 'adj_01h8c6tbrkpdd7vx61w7b1pend' },
    await dataOf('adjustment.updated'),
    await dataOf('adjustment.updated.full'),
  ],
  subscriptions: [await dataOf('subscription.canceled')],
};

/** Oldest id first, `after` the cursor, `status`/`action`/`created_at[…]` filters (https://developer.paddle.com/api-reference/about/pagination). */
export function paddleApi(path: string, q: URLSearchParams): StandInAnswer {
  const gte = q.get('created_at[GTE]');
  const lt = q.get('created_at[LT]');
  let list = [...(PADDLE[path.slice(1)] ?? [])]
    .filter((e) => !q.get('status') || e.status === q.get('status'))
    .filter((e) => !q.get('action') || e.action === q.get('action'))
    .filter((e) => !gte || Date.parse(String(e.created_at)) >= Date.parse(gte))
    .filter((e) => !lt || Date.parse(String(e.created_at)) < Date.parse(lt))
    .sort((a, b) => String(a.id).localeCompare(String(b.id)));
  const after = q.get('after');
  if (after) list = list.filter((e) => String(e.id) > after);
  const data = list.slice(0, PER_PAGE);
  return {
    status: 200,
    body: {
      data,
      meta: {
        request_id: 'req',
        pagination: {
          per_page: PER_PAGE,
          next: 'http://stand-in',
          has_more: list.length > PER_PAGE,
          estimated_total: 9,
        },
      },
    },
  };
}
