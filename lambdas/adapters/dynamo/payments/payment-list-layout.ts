import type { PaymentListLayout } from '../../../ports.js';
import { RecomputeBatch } from './payment-list-batch.js';
import { listKeys, positionId } from './payment-list-positions.js';

/** The payment list's layout on the single table (PAYMENT_LIST and its refunded copies, `docs/data-model.md`). */
export const dynamoPaymentListLayout: PaymentListLayout = {
  positions: (site, c) => listKeys(site, c).map(positionId),
  batch: () => new RecomputeBatch(),
};
