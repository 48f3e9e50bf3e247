import { benchIngest } from './ingest.js';
import { benchSessionize } from './sessionize.js';
import { benchReports } from './reports.js';
import { DUCKDB_CHUNK_SIZE, coldStartMs, lambdaBundleSizes } from './bundle.js';
import { benchApp } from './app.js';
import { benchGeo } from './geo.js';
import { benchRebuild } from './rebuild.js';
import { benchImport } from './import.js';
import { benchCost } from './cost.js';
import { benchFiltered } from './filtered.js';
import { benchVisitTableWriter } from './visit-table-writer.js';
import { PACKAGED_COUNTRY_DATABASE } from '../local/geo.js';
import { writeReport, type Figure } from './report.js';
import { buildTrackerSync, trackerSizes } from '../tracker/build.js';

/**
 * `npm run bench`: every benchmark, one table, JSON in bench/results/.
 * `npm run bench -- --only reports,bundle` runs the named sections alone (a
 * partial run writes a dated JSON file and leaves `latest.json` alone), so a
 * change can be measured without the minutes the whole run takes.
 */
const sections: Record<string, () => Promise<Figure[]>> = {
  ingest: benchIngest,
  sessionize: benchSessionize,
  reports: () => benchReports(),
  bundle: benchBundles,
  tracker: async () => benchTracker(),
  app: () => benchApp(),
  geo: benchGeo,
  rebuild: () => benchRebuild(),
  import: benchImport,
  cost: benchCost,
  filtered: benchFiltered,
  writer: benchVisitTableWriter,
};

async function benchBundles(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const [name, size] of Object.entries(await lambdaBundleSizes())) {
    figures.push({
      section: 'bundle',
      name:
        name === DUCKDB_CHUNK_SIZE
          ? 'DuckDB chunk (report, MCP and operations, loaded at first use), minified'
          : `${name} Lambda, minified`,
      value: size.bytes / 1024,
      unit: 'KiB',
      target: name === 'event' ? '≤ 300 KB' : undefined,
    });
  }
  // The event function reads its country database during init, as in AWS (its layer's file).
  for (const [name, ms] of Object.entries(
    await coldStartMs({
      event: { GEO_DATABASE_PATH: PACKAGED_COUNTRY_DATABASE },
      operations: { ATHENA_WORKGROUP: 'bench', GLUE_DATABASE: 'bench', EVENTS_BUCKET: 'bench' },
    }),
  )) {
    figures.push({ section: 'bundle', name: `${name} Lambda, module load (cold start)`, value: ms, unit: 'ms' });
  }
  return figures;
}

function benchTracker(): Figure[] {
  const tracker = trackerSizes(buildTrackerSync());
  return [
    { section: 'tracker', name: 'v.js raw', value: tracker.raw, unit: 'B' },
    { section: 'tracker', name: 'v.js gzip', value: tracker.gzip, unit: 'B', target: '≤ 1,000' },
    { section: 'tracker', name: 'v.js brotli', value: tracker.brotli, unit: 'B' },
  ];
}

function selectedSections(argv: readonly string[]): string[] {
  const at = argv.indexOf('--only');
  if (at < 0) return Object.keys(sections);
  const names = (argv[at + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((name) => !(name in sections));
  if (names.length === 0 || unknown.length > 0) {
    process.stderr.write(
      `error: --only takes a comma-separated list of ${Object.keys(sections).join(', ')}; got '${argv[at + 1] ?? ''}'\n`,
    );
    process.exit(2);
  }
  return names;
}

const chosen = selectedSections(process.argv.slice(2));
const figures: Figure[] = [];
for (const name of chosen) {
  process.stderr.write(`${name}…\n`);
  figures.push(...(await sections[name]!()));
}
console.log(writeReport(figures, chosen.length < Object.keys(sections).length));
