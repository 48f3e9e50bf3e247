import { Command } from 'commander';
import {
  CountryDatabase,
  CountryDatabaseError,
  type CountryDatabaseInfo,
} from '../lambdas/adapters/country-database.js';
import {
  COUNTRY_DATABASE_ATTRIBUTION,
  PACKAGED_COUNTRY_DATABASE,
  countryDatabasePath,
  installCountryDatabase,
  installedCountryDatabase,
} from '../local/geo.js';
import { UsageError, contextOf } from './main.js';

/** A database older than this is reported stale: DB-IP publishes the Lite edition monthly. */
export const STALE_AFTER_DAYS = 62;

const DAY_MS = 86_400_000;

/** The JSON shape of `geo info` and `geo update`: snake_case, dates as YYYY-MM-DD. */
function describe(path: string, info: CountryDatabaseInfo, now: number) {
  const ageDays = Math.floor((now - info.built.getTime()) / DAY_MS);
  return {
    path,
    packaged: path === PACKAGED_COUNTRY_DATABASE,
    type: info.type,
    built: info.built.toISOString().slice(0, 10),
    age_days: ageDays,
    stale: ageDays > STALE_AFTER_DAYS,
    bytes: info.bytes,
  };
}

function line(d: ReturnType<typeof describe>): string {
  const origin = d.packaged ? 'packaged DB-IP Lite' : 'installed';
  const warning = d.stale ? ` — older than ${STALE_AFTER_DAYS} days: refresh it (docs/ingestion.md "Country")` : '';
  return `${origin} country database ${d.path}: ${d.type}, built ${d.built} (${d.age_days} days ago), ${(d.bytes / 1e6).toFixed(1)} MB${warning}`;
}

/**
 * `geo info` and `geo update`: the IP-to-country database of the local
 * service (`docs/ingestion.md` "Country"). A deployed stack ships the file
 * named by the CDK context `geoDatabase` (default: the packaged one) in the
 * event function's layer, so an update reaches AWS with the next `cdk deploy`.
 */
export function registerGeoCommands(program: Command): void {
  const geo = program
    .command('geo')
    .description('the IP-to-country database (country of visitors without a CDN country header)');

  geo
    .command('info')
    .description('print which country database the local service reads, when it was built, and whether it is stale')
    .action((_opts: unknown, command: Command) => {
      const ctx = contextOf(command);
      const path = countryDatabasePath(ctx.dataDir);
      const d = describe(path, CountryDatabase.open(path).info, Date.now());
      if (ctx.json) ctx.printJson({ ...d, attribution: COUNTRY_DATABASE_ATTRIBUTION });
      else
        ctx.print(
          `${line(d)}\n${COUNTRY_DATABASE_ATTRIBUTION.text} (${COUNTRY_DATABASE_ATTRIBUTION.url}) for the packaged database`,
        );
    });

  geo
    .command('update')
    .description(
      'install a country database (.mmdb: DB-IP Lite country, GeoLite2-Country or any MMDB with country codes) for the local service; restart it to use it',
    )
    .requiredOption('--file <path>', 'the .mmdb file, downloaded beforehand (this command does not go online)')
    .action(async (opts: { file: string }, command: Command) => {
      const ctx = contextOf(command);
      let info: CountryDatabaseInfo;
      try {
        info = await installCountryDatabase(ctx.dataDir, opts.file);
      } catch (error) {
        if (error instanceof CountryDatabaseError) throw new UsageError(`--file: ${error.message}`);
        throw error;
      }
      const d = describe(installedCountryDatabase(ctx.dataDir), info, Date.now());
      const deploy = `for a deployed stack: cdk deploy -c geoDatabase=${d.path}`;
      if (ctx.json) ctx.printJson({ ...d, deploy });
      else ctx.print(`${line(d)}\nrestart start/serve to use it; ${deploy}`);
    });
}
