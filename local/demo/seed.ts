import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Stripe } from 'stripe';
import { DynamoConfigStore } from '../../lambdas/adapters/dynamo/config-store.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';
import { importEventLines } from '../import-events.js';
import { localImportedIds } from '../imported-ids.js';
import { localPaths, type LocalService } from '../service.js';
import { generateDemo } from './generator.js';
import { CountryDatabase } from '../../lambdas/adapters/country-database.js';
import { countryDatabasePath } from '../geo.js';

export const DEMO_ACCOUNT = 'demo';
export const DEMO_SITE = 'demo.footfall.dev';
export const DEMO_TIMEZONE = 'Europe/Berlin';

/** The demo key is kept in the data directory so every `npm start` can print it (a local demo only). */
const keyFile = (dataDir: string) => join(dataDir, 'demo-key');

export async function demoKey(dataDir: string): Promise<string | null> {
  return readFile(keyFile(dataDir), 'utf8').then(
    (k) => k.trim(),
    () => null,
  );
}

export interface SeedOptions {
  days: number;
  visitsPerDay: number;
  /** Progress lines ("importing events 40%"). */
  onProgress?: (stage: string, done: number, total: number) => void;
}

/**
 * Seeds a running local service with the demo site through the real paths:
 * the account, site, Stripe connection and an API key through the stores the
 * CLI uses, the traffic through `import events`, the sessionizer and the
 * archive, and the payments as signed Stripe webhooks to the service's own
 * endpoint. Returns the demo key.
 */
export async function seedDemo(
  service: LocalService,
  options: SeedOptions,
): Promise<{ key: string; events: number; webhooks: number }> {
  const progress = options.onProgress ?? (() => undefined);
  const config = new DynamoConfigStore(service.dynamo, service.secrets);
  if (!(await config.getAccount(DEMO_ACCOUNT))) await config.addAccount(DEMO_ACCOUNT, new Date());
  if (!(await config.getSite(DEMO_SITE))) {
    await config.addSite({
      domain: DEMO_SITE,
      timezone: DEMO_TIMEZONE,
      account: DEMO_ACCOUNT,
      attribution: 'last_non_direct',
      lookback_days: 30,
      rate_limit: 1000,
      created: new Date().toISOString(),
    });
  }
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  await config.connectProvider(DEMO_SITE, 'stripe', secret, new Date());
  let key = await demoKey(service.dataDir);
  if (!key) {
    key = (await new DynamoKeyStore(service.dynamo).create(DEMO_ACCOUNT, 'demo', new Date())).key;
    await writeFile(keyFile(service.dataDir), `${key}\n`, { mode: 0o600 });
  }

  // The demo's events carry addresses, not countries: the import looks them up in the service's database.
  const countries = CountryDatabase.open(countryDatabasePath(service.dataDir));
  const demo = generateDemo({
    site: DEMO_SITE,
    days: options.days,
    visitsPerDay: options.visitsPerDay,
    now: Date.now(),
    countries,
  });
  const total = demo.events.length;
  await importEventLines(service.dynamo, localPaths(service.dataDir).stream, demo.events, {
    countries,
    known: (site) => localImportedIds(localPaths(service.dataDir), site),
    onLine: (n) => {
      if (n % 2000 === 0 || n === total) progress('importing events', n, total);
    },
  });
  progress('sessionizing', 0, total);
  await service.sessionize();
  progress('sessionizing', total, total);

  let sent = 0;
  const webhooks = demo.webhooks;
  // In order, one at a time: a customer's events must arrive as the provider sent them.
  const send = async () => {
    for (const w of webhooks) {
      const payload = JSON.stringify({
        id: w.id,
        object: 'event',
        api_version: '2024-06-20',
        type: w.type,
        created: w.created,
        livemode: false,
        data: { object: w.object },
      });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
      const res = await fetch(`${service.url}/api/webhooks/stripe/${DEMO_SITE}`, {
        method: 'POST',
        headers: { 'stripe-signature': signature, 'content-type': 'application/json' },
        body: payload,
      });
      if (res.status !== 200) throw new Error(`demo webhook ${w.type} answered ${res.status}: ${await res.text()}`);
      sent++;
      if (sent % 50 === 0 || sent === webhooks.length) progress('sending Stripe webhooks', sent, webhooks.length);
    }
  };
  await send();
  await service.archive();
  return { key, events: total, webhooks: webhooks.length };
}
