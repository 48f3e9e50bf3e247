import { describe, expect, it } from 'vitest';
import {
  DATA_LAYOUT,
  dataNamespace,
  layoutMismatch,
  namespaceOf,
  siteConfigSchema,
  writeTargets,
  type SiteConfig,
} from '../../lambdas/domain/site.js';

const site: SiteConfig = siteConfigSchema.parse({
  domain: 'example.com',
  timezone: 'UTC',
  account: 'acme',
  created: '2026-11-01T00:00:00Z',
});

describe('data namespaces (docs/data-model.md "Generations")', () => {
  it.each([
    ['example.com', undefined, 'example.com'],
    ['example.com', 0, 'example.com'],
    ['example.com', 1, 'example.com~1'],
    ['shop.example.co.uk', 42, 'shop.example.co.uk~42'],
  ])('%s generation %s is %s', (domain, generation, expected) => {
    expect(dataNamespace(domain, generation)).toBe(expected);
  });

  it('a site stored before generations existed reads and writes the domain itself', () => {
    expect(namespaceOf(site)).toBe('example.com');
    expect(writeTargets(site)).toEqual([site]);
  });

  it('the live generation is the namespace readers use', () => {
    expect(namespaceOf({ ...site, generation: 3 })).toBe('example.com~3');
  });

  it('while a rebuild builds a generation, writes go to the live one first, then the one being built', () => {
    const targets = writeTargets({ ...site, generation: 2, building: 3 });
    expect(targets.map(namespaceOf)).toEqual(['example.com~2', 'example.com~3']);
    // Each target is written once, however often it is fanned out again.
    for (const t of targets) expect(writeTargets(t)).toEqual([t]);
  });

  it("a namespace is never a domain, so no site writes into another site's items", () => {
    expect(siteConfigSchema.safeParse({ ...site, domain: 'example.com~1' }).success).toBe(false);
  });

  it('generations are whole numbers', () => {
    expect(siteConfigSchema.safeParse({ ...site, building: -1 }).success).toBe(false);
    expect(siteConfigSchema.safeParse({ ...site, generation: 1.5 }).success).toBe(false);
    expect(siteConfigSchema.parse({ ...site, generation: 2, building: 3, retired: 1 })).toMatchObject({
      generation: 2,
      building: 3,
      retired: 1,
    });
  });

  it.each([
    ['no layout (data stored before layouts were versioned) is layout 1', undefined, (DATA_LAYOUT as number) === 1],
    ["this release's layout", DATA_LAYOUT, true],
    ['another layout (written by a later or an earlier release)', DATA_LAYOUT + 1, false],
  ])('readers read a site whose data is in %s: %s', (_name, layout, readable) => {
    const stored = layout === undefined ? site : { ...site, layout };
    expect(layoutMismatch(stored) === null).toBe(readable);
    if (!readable) expect(layoutMismatch(stored)).toContain('footfall rebuild --site example.com');
  });
});
