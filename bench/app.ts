import { APP_GZIP_BUDGET, ensureAppBuilt, firstPageAssets } from '../app/build.js';
import type { Figure } from './report.js';

/**
 * The app's bench rows (issue 17): the JavaScript and CSS the first page
 * loads, gzipped (level 9, as a CDN would serve it), against the 150 KB
 * budget.
 */
export async function benchApp(): Promise<Figure[]> {
  await ensureAppBuilt();
  const assets = firstPageAssets();
  const size = (ext: string) => assets.filter((a) => a.file.endsWith(ext)).reduce((sum, a) => sum + a.gzip, 0);
  return [
    { section: 'app', name: 'first page JS, gzip', value: size('.js') / 1024, unit: 'KiB' },
    { section: 'app', name: 'first page CSS, gzip', value: size('.css') / 1024, unit: 'KiB' },
    { section: 'app', name: 'first page JS+CSS, gzip', value: (size('.js') + size('.css')) / 1024, unit: 'KiB', target: `≤ ${APP_GZIP_BUDGET / 1024}` },
  ];
}
