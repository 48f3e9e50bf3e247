import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { parseUserAgent } from '../../lambdas/domain/user-agent.js';
import { VISITOR_LIMITS } from '../../lambdas/domain/visitor-sketch.js';

const doc = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

/** What the README and docs/tracking.md tell a new user is what the code does. */
describe('claims in the docs', () => {
  it('README "Exact numbers" says where distinct visitors become an estimate, with the sketch\'s own limit and error', async () => {
    const readme = await doc('README.md');
    const section = readme.slice(
      readme.indexOf('## Exact numbers'),
      readme.indexOf('\n## ', readme.indexOf('## Exact numbers') + 1),
    );
    expect(section).toContain(`at most ${VISITOR_LIMITS.exact.toLocaleString('en-US')} of them`);
    // HyperLogLog's relative standard error 1.04/√m with m = 2^precision registers (Flajolet et al. 2007).
    const error = ((1.04 / Math.sqrt(2 ** VISITOR_LIMITS.precision)) * 100).toFixed(2);
    expect(section).toContain(`relative standard error of ${error}%`);
    expect(section).toContain('(docs/data-model.md#distinct-visitors)');
    expect(await doc('docs/data-model.md')).toContain('## Distinct visitors');
  });

  it('docs/tracking.md: the headless agent it quotes is dropped as a bot, and the override it shows is not', async () => {
    const tracking = await doc('docs/tracking.md');
    const headless = /`(Mozilla\/5\.0 [^`]*HeadlessChrome\/[^`]*)`/.exec(tracking)?.[1];
    const override = /userAgent: '([^']+)'/.exec(tracking)?.[1];
    expect(headless, "docs/tracking.md quotes headless Chromium's User-Agent").toBeDefined();
    expect(override, 'docs/tracking.md shows a userAgent override').toBeDefined();
    expect(parseUserAgent(headless).bot).toBe(true);
    expect(parseUserAgent(override)).toMatchObject({ bot: false, browser: 'Chrome', os: 'Linux' });
    expect(tracking).toMatch(/Headless browsers are dropped as bots/);
  });
});
