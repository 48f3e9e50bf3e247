import { benchIngest } from './ingest.js';
import { benchSessionize } from './sessionize.js';
import { benchReports } from './reports.js';
import { coldStartMs, lambdaBundleSizes } from './bundle.js';
import { writeReport, type Figure } from './report.js';
import { buildTrackerSync, trackerSizes } from '../tracker/build.js';

/** `npm run bench`: every benchmark, one table, JSON in bench/results/. */
const figures: Figure[] = [];
process.stderr.write('ingest…\n');
figures.push(...(await benchIngest()));
process.stderr.write('sessionize…\n');
figures.push(...(await benchSessionize()));
process.stderr.write('reports (a year of traffic; takes a few minutes)…\n');
figures.push(...(await benchReports(Number(process.env.FOOTFALL_BENCH_EVENTS ?? 3_400_000))));
process.stderr.write('bundles…\n');
for (const [name, size] of Object.entries(await lambdaBundleSizes())) {
  figures.push({ section: 'bundle', name: `${name} Lambda, minified`, value: size.bytes / 1024, unit: 'KiB', target: name === 'event' ? '≤ 300 KB' : undefined });
}
for (const [name, ms] of Object.entries(await coldStartMs())) {
  figures.push({ section: 'bundle', name: `${name} Lambda, module load (cold start)`, value: ms, unit: 'ms' });
}
const tracker = trackerSizes(buildTrackerSync());
figures.push(
  { section: 'tracker', name: 'v.js raw', value: tracker.raw, unit: 'B' },
  { section: 'tracker', name: 'v.js gzip', value: tracker.gzip, unit: 'B', target: '≤ 1,000' },
  { section: 'tracker', name: 'v.js brotli', value: tracker.brotli, unit: 'B' },
);
console.log(writeReport(figures));
