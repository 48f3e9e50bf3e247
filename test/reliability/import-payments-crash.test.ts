import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, runCli } from '../support/cli.js';
import { paymentMix } from '../../bench/payment-mix.js';
import { startLocalService } from '../../local/service.js';
import { DynamoKeyStore } from '../../lambdas/adapters/dynamo/key-store.js';

const DAY = 86_400_000;
/** Payments of the stated mix (`bench/payment-mix.ts`); `FOOTFALL_CRASH_PAYMENTS` runs it at 100,000. */
const PAYMENTS = Number(process.env.FOOTFALL_CRASH_PAYMENTS ?? 1500);
const env = { ...process.env, FOOTFALL_DATA: '', PORT: '' };

async function siteWithVisits(root: string, name: string, events: string): Promise<string> {
  const dataDir = join(root, name);
  expect(runCli(['--data', dataDir, 'accounts', 'add', 'acme']).status).toBe(0);
  expect(
    runCli(['--data', dataDir, 'sites', 'add', 'bench.example', '--timezone', 'UTC', '--account', 'acme']).status,
  ).toBe(0);
  const imported = runCli(['--data', dataDir, 'import', 'events', events, '--site', 'bench.example'], 300_000);
  expect(imported.status, imported.stderr).toBe(0);
  return dataDir;
}

/** Every payment report, read through the report API. */
async function reports(dataDir: string) {
  const svc = await startLocalService({ dataDir, port: 0, app: true, sessionizeIntervalMs: 0 });
  try {
    const key = (await new DynamoKeyStore(svc.dynamo).create('acme', 'crash', new Date())).key;
    const get = async (path: string) =>
      (
        await fetch(`${svc.url}/api/v1/sites/bench.example${path}`, { headers: { authorization: `Bearer ${key}` } })
      ).json();
    const range = `from=${new Date(Date.now() - 400 * DAY).toISOString().slice(0, 10)}&to=${new Date().toISOString().slice(0, 10)}`;
    return {
      overview: await get(`/overview?${range}`),
      channels: await get(`/breakdown/channel?${range}`),
      payments: await get(`/payments?${range}&filter=all&limit=200`),
      retention: await get(`/retention?${range}`),
    };
  } finally {
    await svc.close();
  }
}

describe('kill -9 during import payments, then a rerun', () => {
  let root = '';
  afterAll(async () => rm(root, { recursive: true, force: true }));

  it('ends with the reports of an import that never stopped', async () => {
    root = await mkdtemp(join(tmpdir(), 'ff-import-crash-'));
    const mix = paymentMix(PAYMENTS, Date.now() - DAY);
    const [lines, events] = [join(root, 'payments.jsonl'), join(root, 'events.jsonl')];
    await writeFile(lines, mix.lines.join('\n') + '\n');
    await writeFile(events, mix.events.join('\n') + '\n');

    const crashed = await siteWithVisits(root, 'crashed', events);
    // Killed once the derived items are being written: the PAYMENT items are in, the rollups are not.
    const child = spawn(
      process.execPath,
      [CLI, '--data', crashed, 'import', 'payments', lines, '--site', 'bench.example'],
      {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let killedIn = '';
    child.stderr.on('data', (d: Buffer) => {
      const text = String(d);
      if (!killedIn && /writing payments\s+[1-9]/.test(text)) {
        killedIn = text.trim().split('\n').at(-1) ?? '';
        child.kill('SIGKILL');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(killedIn, 'the import was killed while writing').not.toBe('');
    expect(code).toBeNull();
    const rerun = runCli(
      ['--data', crashed, '--json', 'import', 'payments', lines, '--site', 'bench.example'],
      600_000,
    );
    expect(rerun.status, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ payments: mix.payments, invalid: 0 });

    const clean = await siteWithVisits(root, 'clean', events);
    const once = runCli(['--data', clean, '--json', 'import', 'payments', lines, '--site', 'bench.example'], 600_000);
    expect(once.status, once.stderr).toBe(0);

    const [after, reference] = [await reports(crashed), await reports(clean)];
    expect(after).toEqual(reference);
    // The reports hold the payments, each listed once.
    const listed = reference.payments as {
      total: number;
      rows: Array<{ provider: string; provider_payment_id: string }>;
    };
    expect(listed.total).toBeGreaterThan(0);
    const ids = listed.rows.map((r) => `${r.provider}:${r.provider_payment_id}`);
    expect(new Set(ids).size).toBe(ids.length);
  }, 900_000);
});
