import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import { DynamoFxStore, FxRates } from '../lambdas/adapters/dynamo/fx-store.js';
import { FxFormatError, parseFxFile, rateInForce, type FxTable } from '../lambdas/domain/payments/fx.js';
import { UsageError, contextOf, parseArgs } from './main.js';
import { withStore } from './store.js';

const daySchema = z.iso.date('must be a date YYYY-MM-DD');
const currencySchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code such as EUR')
  .transform((c) => c.toUpperCase());

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

/** `fx update` and `fx rate`: the dated USD rate table (DESIGN.md "Money", `data/fx/SOURCES.md`). */
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
      else ctx.print(`stored ${summary.days} days of rates for ${summary.currencies} currencies (${summary.from} to ${summary.to})`);
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
      if (ctx.json) ctx.printJson({ currency: code, date, usd_per_unit: found.rate, rate_date: found.since });
      else ctx.print(`1 ${code} = ${found.rate} USD on ${date}${found.since ? ` (rate of ${found.since})` : ''}`);
    });
}
