import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { measuredFrom, stackBill, totalOf, type Measured } from './cost-model.js';
import { againstGoal, billTable, largest } from './cost-table.js';
import { synthesizedResources } from './stack-template.js';
import type { Figure } from './report.js';
import { ensureAppBuilt } from '../app/build.js';

/**
 * The sessionize runs the cost model reads (`bench/results/`): the documented run at 1M, 10M and
 * 100M events a month, and the small levels (10k, 100k) measured apart, since the sessionize
 * section does not run them (`FOOTFALL_BENCH_SESSIONIZE_RATE=10000 npm run bench -- --only
 * sessionize`). `FOOTFALL_BENCH_COST_FROM` (comma-separated files) reads others.
 */
const DEFAULT_RUNS = ['sessionize-cost.json', 'sessionize-small.json'];

const runSchema = z.object({
  figures: z.array(z.object({ section: z.string(), name: z.string(), value: z.number(), unit: z.string() })),
});

/** The measured levels of the runs named by `FOOTFALL_BENCH_COST_FROM` or `DEFAULT_RUNS`, by traffic level. */
export function measuredLevels(files = process.env.FOOTFALL_BENCH_COST_FROM?.split(',') ?? DEFAULT_RUNS): Measured[] {
  const figures = files.flatMap((file) => {
    const path = file.includes('/') ? file : fileURLToPath(new URL(`./results/${file}`, import.meta.url));
    return runSchema.parse(JSON.parse(readFileSync(path, 'utf8'))).figures;
  });
  return measuredFrom(figures);
}

const levelName = (events: number) => (events >= 1e6 ? `${events / 1e6}M` : `${events / 1e3}k`);

/**
 * `npm run bench -- --only cost`: the monthly bill of the stack as `cdk synth` builds it (with the
 * dashboard, `-c app=true`, and without), every line priced from the template and the measured
 * levels; prints the table of `docs/cost.md` and returns each level's total against the goal.
 */
export async function benchCost(): Promise<Figure[]> {
  const levels = measuredLevels();
  await ensureAppBuilt();
  const stacks = [
    ['with the dashboard (-c app=true)', synthesizedResources({ app: true })],
    ['default (no dashboard)', synthesizedResources()],
  ] as const;
  process.stdout.write(`\n${billTable(levels, stacks[0][1])}\n\n`);
  const figures: Figure[] = [];
  for (const [label, resources] of stacks) {
    for (const m of levels) {
      const bill = stackBill(resources, m);
      const total = totalOf(bill);
      const { goal, over } = againstGoal(m, total);
      figures.push({
        section: 'cost',
        name: `stack ${label}, ${levelName(m.eventsPerMonth)} events/month${over !== undefined && over > 0 ? ` (misses by $${over.toFixed(2)}: ${largest(bill)})` : ''}`,
        value: total,
        unit: 'USD/month',
        target: goal === undefined ? undefined : `≤ ${goal}`,
        detail: Object.fromEntries(bill),
      });
    }
  }
  return figures;
}

if (process.argv[1]?.endsWith('cost.ts')) {
  // node bin/run-ts.js bench/cost.ts [bench/results/<run>.json …]: the table of docs/cost.md, from the runs given.
  const files = process.argv.slice(2);
  const levels = measuredLevels(files.length > 0 ? files : undefined);
  await ensureAppBuilt();
  console.log(billTable(levels, synthesizedResources({ app: true })));
}
