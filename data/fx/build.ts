// Rebuilds data/fx/usd-rates.json from the ECB's eurofxref-hist.csv (see SOURCES.md):
//   node bin/run-ts.js data/fx/build.ts eurofxref-hist.csv [2023-01] > data/fx/usd-rates.json
// Keeps, for each month from the given one, the first ECB business day's rates,
// converted to USD per unit by the same parser as `footfall fx update`.
import { readFileSync } from 'node:fs';
import { parseEcbCsv } from '../../lambdas/domain/payments/fx.js';

const [file, fromMonth = '2023-01'] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: build.ts <eurofxref-hist.csv> [YYYY-MM]\n');
  process.exit(2);
}
const { rates } = parseEcbCsv(readFileSync(file, 'utf8'));
const monthly: Record<string, Record<string, number>> = {};
for (const day of Object.keys(rates).sort()) {
  if (day.slice(0, 7) < fromMonth || Object.keys(monthly).some((d) => d.slice(0, 7) === day.slice(0, 7))) continue;
  const row = rates[day]!;
  monthly[day] = Object.fromEntries(
    Object.keys(row)
      .sort((a, b) => (a === 'EUR' ? -1 : b === 'EUR' ? 1 : a.localeCompare(b)))
      .map((c) => [c, row[c]!]),
  );
}
const out = {
  source:
    'European Central Bank, euro foreign exchange reference rates (eurofxref-hist.csv): the first ECB business day of each month; USD per unit = USD per EUR / currency per EUR. See data/fx/SOURCES.md.',
  unit: 'USD per 1 unit of currency',
  rates: monthly,
};
// One day per line keeps diffs readable.
const body = Object.entries(monthly)
  .map(([day, row]) => `    ${JSON.stringify(day)}: ${JSON.stringify(row)}`)
  .join(',\n');
process.stdout.write(
  `{\n  "source": ${JSON.stringify(out.source)},\n  "unit": ${JSON.stringify(out.unit)},\n  "rates": {\n${body}\n  }\n}\n`,
);
