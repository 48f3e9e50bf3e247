import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Reader, type Response } from 'maxmind';
import { countryCode, type CountryLookup } from '../domain/country.js';

/**
 * A country record as the two families of MMDB country databases write it:
 * ip-location-db's (DB-IP Lite, geo-whois-asn-country, …) `{ country_code }`,
 * and MaxMind's GeoIP2/GeoLite2 and DB-IP's own downloads `{ country: { iso_code } }`.
 */
interface CountryRecord {
  country_code?: string;
  country?: { iso_code?: string };
}

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** What is known of a database file: its MMDB metadata (https://maxmind.github.io/MaxMind-DB/). */
export interface CountryDatabaseInfo {
  /** `database_type` of the metadata, e.g. `country ipvAll` or `DBIP-Country-Lite`. */
  type: string;
  /** When the database was built (metadata `build_epoch`). */
  built: Date;
  /** 4 (IPv4 only) or 6 (IPv4 and IPv6). */
  ipVersion: number;
  bytes: number;
}

/** The file is not a usable MMDB country database; the message says why. */
export class CountryDatabaseError extends Error {
  override readonly name = 'CountryDatabaseError';
}

/**
 * An IP-to-country database in MaxMind DB format, held in memory and read by
 * the `maxmind` package's `Reader` (pure JS, no native code). Built once per
 * Lambda execution environment (cold start) or local process; a lookup is a
 * walk down the search tree in memory, no I/O, so no answer cache is kept.
 *
 * The address is only looked up, never kept: no method stores or logs it.
 */
export class CountryDatabase implements CountryLookup {
  private constructor(
    private readonly reader: Reader<Response>,
    readonly info: CountryDatabaseInfo,
  ) {}

  /**
   * Reads `path` whole (the DB-IP Lite country file is 8 MB: about 10 ms).
   * @throws CountryDatabaseError when the file cannot be read, is not an MMDB
   *   file, or its records carry no country code
   */
  static open(path: string): CountryDatabase {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      throw new CountryDatabaseError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    return CountryDatabase.fromBuffer(bytes, path);
  }

  /** As `open`, from the file's bytes; `name` is used in error messages. */
  static fromBuffer(bytes: Buffer, name = 'the database'): CountryDatabase {
    let reader: Reader<Response>;
    try {
      reader = new Reader<Response>(bytes);
    } catch (error) {
      throw new CountryDatabaseError(`${name} is not a MaxMind DB (.mmdb) file: ${(error as Error).message}`);
    }
    const { metadata } = reader;
    const db = new CountryDatabase(reader, {
      type: metadata.databaseType,
      built: metadata.buildEpoch,
      ipVersion: metadata.ipVersion,
      bytes: bytes.length,
    });
    // A city or ASN database would open fine and answer nothing useful: check that
    // addresses every IP database places (Google's and Cloudflare's resolvers) get a country.
    if (!['8.8.8.8', '1.1.1.1'].some((ip) => db.countryOf(ip))) {
      throw new CountryDatabaseError(
        `${name} (${metadata.databaseType}) gives no country_code or country.iso_code for well-known addresses`,
      );
    }
    return db;
  }

  /** ISO 3166-1 alpha-2 code of `ip`, or null when `ip` is not an address or the database has no country for it. */
  countryOf(ip: string): string | null {
    // An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, what a dual-stack socket reports) is looked up as IPv4.
    const address = IPV4_MAPPED.exec(ip)?.[1] ?? ip;
    const version = isIP(address);
    if (version === 0 || (version === 6 && this.info.ipVersion === 4)) return null;
    // The reader's types are MaxMind's; ip-location-db's records are `{ country_code }`.
    const record = this.reader.get(address) as CountryRecord | null;
    return countryCode(record?.country_code ?? record?.country?.iso_code);
  }
}
