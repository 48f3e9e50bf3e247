import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FILTER_DIMENSIONS, filtersParam, type FilterDimension } from '../../lambdas/domain/reports/filters.js';
import {
  MAX_CHIPS,
  apiFilters,
  filterOfBreakdown,
  filterParams,
  filtersFromSearch,
  negatedAt,
  searchWithFilters,
  withChip,
  withoutAt,
  type FilterChip,
} from '../../app/src/filters.js';
import { DIMENSIONS as BREAKDOWNS } from '../../lambdas/domain/rollup.js';

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
const DIMENSIONS = Object.keys(FILTER_DIMENSIONS) as FilterDimension[];

describe('the app\'s filters in the address (docs/app.md "Filters")', () => {
  it('reads Plausible-style f parameters, a value keeping its commas', () => {
    const { chips, ignored } = filtersFromSearch('?range=30d&f=is,channel,Search&f=is_not,page,/a,b&f=is,goal,');
    expect(ignored).toBe(0);
    expect(chips).toEqual([
      { op: 'is', dimension: 'visit:channel', value: 'Search' },
      { op: 'is_not', dimension: 'event:page', value: '/a,b' },
      { op: 'is', dimension: 'event:goal', value: '' },
    ]);
    expect(apiFilters(chips)).toBe(
      '[["is","visit:channel",["Search"]],["is_not","event:page",["/a,b"]],["is","event:goal",[""]]]',
    );
    expect(apiFilters([])).toBeUndefined();
  });

  it('leaves out and counts what it cannot read, and keeps the last condition of a dimension', () => {
    const { chips, ignored } = filtersFromSearch(
      '?f=contains,page,/a&f=is,city,Paris&f=is&f=is,__proto__,x&f=is,country,US&f=is,country,FR',
    );
    expect(ignored).toBe(4);
    expect(chips).toEqual([{ op: 'is', dimension: 'visit:country', value: 'FR' }]);
    const many = Array.from({ length: MAX_CHIPS + 3 }, (_, i) => `f=is,page,/p${i}`).join('&');
    // One dimension: each replaces the one before; the bound counts conditions kept.
    expect(filtersFromSearch(many).chips).toHaveLength(1);
  });

  it('maps every breakdown (each a panel tab) to the filter dimension showing the same value', () => {
    for (const tab of BREAKDOWNS) {
      const by = filterOfBreakdown(tab);
      expect(by, tab).not.toBeNull();
      expect(FILTER_DIMENSIONS[by!].breakdown).toBe(tab);
    }
  });

  it('adds, negates and removes chips, and rewrites only the filters of an address', () => {
    const search: FilterChip = { op: 'is', dimension: 'visit:channel', value: 'Search' };
    const direct: FilterChip = { op: 'is', dimension: 'visit:channel', value: 'Direct' };
    const us: FilterChip = { op: 'is', dimension: 'visit:country', value: 'US' };
    expect(withChip([search, us], direct)).toEqual([us, direct]);
    expect(negatedAt([search, us], 1)).toEqual([search, { ...us, op: 'is_not' }]);
    expect(withoutAt([search, us], 0)).toEqual([us]);
    expect(searchWithFilters('?range=7d&interval=day&f=is,channel,Search&offset=40&filter=refunded', [us])).toBe(
      '?range=7d&interval=day&filter=refunded&f=is,country,US',
    );
    expect(searchWithFilters('?f=is,channel,Search', [])).toBe('');
  });

  it('reads back any chips it writes, and the API accepts what it sends (fast-check)', () => {
    console.log(`app filters property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    const chip = fc.record({
      op: fc.constantFrom('is' as const, 'is_not' as const),
      dimension: fc.constantFrom(...DIMENSIONS),
      value: fc.string({ maxLength: 40, unit: 'grapheme' }),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(chip, { selector: (c) => c.dimension, maxLength: 8 }),
        fc.constantFrom('?range=30d', ''),
        (chips, base) => {
          const search = searchWithFilters(base, chips);
          expect(filtersFromSearch(search)).toEqual({ chips, ignored: 0 });
          expect(filterParams(chips)).toHaveLength(chips.length);
          const json = apiFilters(chips);
          if (json) expect(() => filtersParam.parse(json)).not.toThrow();
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});
