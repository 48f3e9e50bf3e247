import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGED_COUNTRY_DATABASE } from '../../local/geo.js';
import { CountryDatabase } from '../../lambdas/adapters/country-database.js';
import { runCliInProcess } from '../support/cli.js';

describe('footfall geo: the documented refresh', async () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'country-cli-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('info names the packaged DB-IP Lite database, its build date and age, and the attribution', async () => {
    const { status, stdout } = await runCliInProcess(['--data', join(dir, 'fresh'), '--json', 'geo', 'info']);
    expect(status).toBe(0);
    const info = JSON.parse(stdout) as Record<string, unknown>;
    expect(info).toMatchObject({
      path: PACKAGED_COUNTRY_DATABASE,
      packaged: true,
      type: 'country ipvAll',
      attribution: { url: 'https://db-ip.com/' },
    });
    expect(info.built).toBe(CountryDatabase.open(PACKAGED_COUNTRY_DATABASE).info.built.toISOString().slice(0, 10));
    expect(typeof info.age_days).toBe('number');
    expect(info.stale).toBe((info.age_days as number) > 62);
  });

  it('update checks the file, installs it for the local service, and info then names it', async () => {
    const data = join(dir, 'updated');
    const ipv4 = PACKAGED_COUNTRY_DATABASE.replace(/dbip-country\.mmdb$/, 'dbip-country-ipv4.mmdb');
    const update = await runCliInProcess(['--data', data, 'geo', 'update', '--file', ipv4]);
    expect(update.status).toBe(0);
    expect(update.stdout).toContain('country ipv4');
    expect(update.stdout).toContain(`cdk deploy -c geoDatabase=${join(data, 'geo', 'country.mmdb')}`);
    const info = JSON.parse((await runCliInProcess(['--data', data, '--json', 'geo', 'info'])).stdout) as Record<
      string,
      unknown
    >;
    expect(info).toMatchObject({ path: join(data, 'geo', 'country.mmdb'), packaged: false, type: 'country ipv4' });
  });

  it.each([
    ['a missing file', 'absent.mmdb', /--file: cannot read .*absent\.mmdb: ENOENT/],
    ['a file that is not MMDB', 'text.mmdb', /--file: .*text\.mmdb is not a MaxMind DB/],
  ])('update refuses %s with exit 2 and installs nothing', async (_label, name, message) => {
    const data = join(dir, `bad-${name}`);
    if (name === 'text.mmdb') await writeFile(join(dir, name), 'not a database');
    const { status, stderr } = await runCliInProcess(['--data', data, 'geo', 'update', '--file', join(dir, name)]);
    expect(status).toBe(2);
    expect(stderr).toMatch(message);
    expect(existsSync(join(data, 'geo', 'country.mmdb'))).toBe(false);
  });
});
