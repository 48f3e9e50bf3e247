import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import { DynamoFxStore, FxRates } from '../lambdas/adapters/dynamo/fx-store.js';
import { FxFormatError, parseFxFile, rateInForce, type FxTable } from '../lambdas/domain/payments/fx.js';
import { UsageError, contextOf, parseArgs } from './main.js';
import { withStore } from './store.js';
import { daysBetween } from '../lambdas/domain/range.js';

const daySchema = z.iso.date('must be a date YYYY-MM-DD');
const currencySchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code such as EUR')
  .transform((c) => c.toUpperCase());

/**
 * A rate older than this many days is worth a warning: the ECB publishes a
 * reference rate every working day (https://www.ecb.europa.eu/stats/policy_and_exchange_rates/euro_reference_exchange_rates/html/index.en.html),
 * so a week covers weekends and holidays; beyond it the table has not been updated.
 */
export const STALE_RATE_DAYS = 7;

/** Whole days from the rate's table day to the day it is used for (negative: the rate is from a later day). */
export function rateAgeDays(rateDay: string, day: string): number {
  return daysBetween(rateDay, day) - 1;
}

/** `same day`, `1 day old`, `236 days old`, or `3 days after 2026-01-02` for a rate from a later day. */
export function describeAge(age: number, day: string): string {
  if (age === 0) return 'same day';
  const n = Math.abs(age);
  const days = `${n} day${n === 1 ? '' : 's'}`;
  return age > 0 ? `${days} old` : `${days} after ${day}`;
}

/** Reads and parses a rate file; any problem with it is a usage error (exit 2, one line). */
async function readRates(file: string): Promise<FxTable> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  try {
    return parseFxFile(text);
  } catch (error) {
    if (error instanceof FxFormatError) throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }
}

/** `fx update` and `fx rate`: the dated USD rate table (`docs/payments.md` "Money", `data/fx/SOURCES.md`). */
export function registerFxCommands(program: Command): void {
  const fx = program.command('fx').description('the dated USD rate table used when a provider gives no USD value');

  fx.command('update')
    .description('store rate overrides from an ECB rate CSV (eurofxref-hist.csv, eurofxref.csv) or our JSON format')
    .requiredOption('--file <path>', 'the rate file')
    .option('--from <YYYY-MM-DD>', 'store only the days on or after this date')
    .action(async (opts: { file: string; from?: string }, command: Command) => {
      const ctx = contextOf(command);
      const from = opts.from === undefined ? undefined : parseArgs(daySchema, opts.from, '--from');
      const parsed = await readRates(opts.file);
      const days = Object.keys(parsed.rates)
        .filter((d) => from === undefined || d >= from)
        .sort();
      if (days.length === 0) throw new UsageError(`${opts.file}: no days on or after ${from}`);
      const table: FxTable = { rates: Object.fromEntries(days.map((d) => [d, parsed.rates[d]!])) };
      await withStore(ctx, (db) => new DynamoFxStore(db).putRates(table));
      const summary = {
        days: days.length,
        currencies: new Set(days.flatMap((d) => Object.keys(table.rates[d]!))).size,
        from: days[0]!,
        to: days.at(-1)!,
      };
      if (ctx.json) ctx.printJson(summary);
      else
        ctx.print(
          `stored ${summary.days} days of rates for ${summary.currencies} currencies (${summary.from} to ${summary.to})`,
        );
    });

  fx.command('rate <currency>')
    .description('print the USD value of one unit of a currency in force on a day')
    .option('--date <YYYY-MM-DD>', 'the day (default: today, UTC)')
    .action(async (currency: string, opts: { date?: string }, command: Command) => {
      const ctx = contextOf(command);
      const code = parseArgs(currencySchema, currency, '<currency>');
      const date = parseArgs(daySchema, opts.date ?? new Date().toISOString().slice(0, 10), '--date');
      const table = await withStore(ctx, (db) => new FxRates(new DynamoFxStore(db)).table());
      const found = rateInForce(table, code, date);
      if (!found) throw new Error(`no USD rate for ${code}`);
      const age = found.since === null ? null : rateAgeDays(found.since, date);
      if (age !== null && Math.abs(age) > STALE_RATE_DAYS) {
        process.stderr.write(
          `warning: the ${code} rate used for ${date} is ${describeAge(age, date)} (rate of ${found.since}); newer rates: footfall fx update --file <ECB eurofxref-hist.csv> (data/fx/SOURCES.md)\n`,
        );
      }
      if (ctx.json)
        ctx.printJson({ currency: code, date, usd_per_unit: found.rate, rate_date: found.since, rate_age_days: age });
      else
        ctx.print(
          `1 ${code} = ${found.rate} USD on ${date}${found.since && age !== null ? ` (rate of ${found.since}, ${describeAge(age, date)})` : ''}`,
        );
    });
}
