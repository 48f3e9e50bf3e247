import type { DynamoConnection } from '../adapters/dynamo/client.js';
import { DynamoConfigStore } from '../adapters/dynamo/config-store.js';
import { DynamoKeyStore } from '../adapters/dynamo/key-store.js';
import { DynamoUserStore } from '../adapters/dynamo/user-store.js';
import { DynamoSessionStore } from '../adapters/dynamo/session-store.js';
import { DynamoAttemptStore } from '../adapters/dynamo/attempt-store.js';
import { DynamoWebhookLogStore } from '../adapters/dynamo/webhook-log-store.js';
import { DynamoSiteActivity } from '../adapters/dynamo/site-activity.js';
import { dynamoPaymentDeps } from './payment-deps.js';
import { DynamoSiteDeletionStore } from '../adapters/dynamo/site-deletion-store.js';
import { DynamoErasureStore } from '../adapters/dynamo/erasure-store.js';
import { randomUUID } from 'node:crypto';
import { recreditSite } from '../services/payments.js';
import type { AuthDeps } from '../services/auth.js';
import type { SettingsDeps } from '../services/account-settings.js';
import type { SecretBox } from '../ports.js';
import type { OpenShareDeps } from '../services/share-links.js';
import { DynamoShareLinkStore } from '../adapters/dynamo/share-link-store.js';

/** Sign-in and sessions on the single table. */
export function dynamoAuthDeps(conn: DynamoConnection, clock: () => number = Date.now): AuthDeps {
  return {
    users: new DynamoUserStore(conn),
    sessions: new DynamoSessionStore(conn),
    attempts: new DynamoAttemptStore(conn),
    clock,
  };
}

/** Account settings on the single table; webhook secrets sealed by `secrets` through the config store (the secret seam of `SettingsDeps.providers`). */
export function dynamoSettingsDeps(
  conn: DynamoConnection,
  secrets: SecretBox,
  clock: () => number = Date.now,
): SettingsDeps {
  const config = new DynamoConfigStore(conn, secrets);
  const payments = dynamoPaymentDeps(conn, clock);
  return {
    sites: config,
    activity: new DynamoSiteActivity(conn),
    providers: config,
    webhooks: new DynamoWebhookLogStore(conn),
    keys: new DynamoKeyStore(conn),
    users: new DynamoUserStore(conn),
    deletions: new DynamoSiteDeletionStore(conn),
    erasures: new DynamoErasureStore(conn),
    newId: randomUUID,
    recredit: (site) => recreditSite(payments, site),
    clock,
  };
}

/** Shared links on the single table: the links, the sites they open, and the attempt counters of their passwords. */
export function dynamoShareDeps(conn: DynamoConnection, clock: () => number = Date.now): OpenShareDeps {
  return {
    links: new DynamoShareLinkStore(conn),
    sites: new DynamoConfigStore(conn),
    attempts: new DynamoAttemptStore(conn),
    clock,
  };
}
