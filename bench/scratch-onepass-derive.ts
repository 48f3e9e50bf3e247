import { mkdirSync, readdirSync, symlinkSync, existsSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { distinctIds } from '../local/filter-sql.js';
import { benchSiteRoot } from './filtered-site.js';

/**
 * Scratch: a copy of the cached bench site's visit months with the two columns a writer could store
 * (`docs/data-model.md`, "The path to the 12-month budget"): `visitor_key`, the first 64 bits of SHA-1 of
 * the visitor id (the unfiltered sketch's hash), and `pages` as each visit's distinct pages in first-seen
 * order. Payments and dictionary are linked, not copied. Writes only under `ONEPASS_OUT`.
 */
/** The full-scale bench site `npm run bench -- --only filtered` writes (`bench/filtered.ts`'s options), unless `ONEPASS_ROOT` names another. */
const SRC =
  process.env.ONEPASS_ROOT ??
  benchSiteRoot({ visitsPerMonth: 1_000_000, paymentsPerMonth: 100_000, end: '2026-11-26', days: 365, seed: 33 });
const OUT = process.env.ONEPASS_OUT ?? '/tmp/onepass/site';
const SITE = 'site=bench.example';
const db = await (await DuckDBInstance.create(':memory:')).connect();
for (const dir of ['payments', 'dict']) {
  mkdirSync(`${OUT}/${dir}`, { recursive: true });
  if (!existsSync(`${OUT}/${dir}/${SITE}`)) symlinkSync(`${SRC}/${dir}/${SITE}`, `${OUT}/${dir}/${SITE}`);
}
for (const mo of readdirSync(`${SRC}/visits/${SITE}`)) {
  const dir = `${OUT}/visits/${SITE}/${mo}`;
  mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  await db.run(
    `COPY (SELECT * REPLACE (${distinctIds('pages')} AS pages), ('0x' || left(sha1(visitor_id), 16))::UBIGINT AS visitor_key ` +
      `FROM read_parquet('${SRC}/visits/${SITE}/${mo}/data.parquet')) TO '${dir}/data.parquet' (FORMAT parquet, ROW_GROUP_SIZE 20000)`,
  );
  process.stdout.write(`${mo} ${Math.round(performance.now() - t0)} ms\n`);
}
