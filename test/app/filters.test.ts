import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FILTER_DIMENSIONS, filtersParam, type FilterDimension } from '../../lambdas/domain/reports/filters.js';
import {
  CHIP_OPERATORS,
  MAX_CHIPS,
  MAX_VALUES,
  apiFilters,
  filterOfBreakdown,
  filterParams,
  filtersFromSearch,
  negatedAt,
  propDimension,
  replacedAt,
  searchWithFilters,
  withChip,
  withoutAt,
  type FilterChip,
} from '../../app/src/filters.js';
import { DIMENSIONS as BREAKDOWNS } from '../../lambdas/domain/rollup.js';
import { FILTER_GROUPS, chipSentence } from '../../app/src/components/filter-names.js';

const seed = Number(process.env.FOOTFALL_SEED || Date.now() % 2 ** 31);
const DIMENSIONS = Object.keys(FILTER_DIMENSIONS) as FilterDimension[];

describe('the app\'s filters in the address (docs/app.md "Filters")', () => {
  it('reads Plausible-style f parameters, a value keeping its commas', () => {
    const { chips, ignored } = filtersFromSearch('?range=30d&f=is,channel,Search&f=is_not,page,/a,b&f=is,goal,');
    expect(ignored).toBe(0);
    expect(chips).toEqual([
      { op: 'is', dimension: 'visit:channel', values: ['Search'] },
      { op: 'is_not', dimension: 'event:page', values: ['/a,b'] },
      { op: 'is', dimension: 'event:goal', values: [''] },
    ]);
    expect(apiFilters(chips)).toBe(
      '[["is","visit:channel",["Search"]],["is_not","event:page",["/a,b"]],["is","event:goal",[""]]]',
    );
    expect(apiFilters([])).toBeUndefined();
  });

  it('reads contains and does not contain, value lists split at |, and custom properties by key', () => {
    const { chips, ignored } = filtersFromSearch(
      '?f=contains,page,/blog&f=contains_not,referrer,spam|ads&f=is,country,US|FR&f=is,props:plan,pro|a\\|b&f=is,props:a\\,b,x,y',
    );
    expect(ignored).toBe(0);
    expect(chips).toEqual([
      { op: 'contains', dimension: 'event:page', values: ['/blog'] },
      { op: 'contains_not', dimension: 'visit:referrer', values: ['spam', 'ads'] },
      { op: 'is', dimension: 'visit:country', values: ['US', 'FR'] },
      { op: 'is', dimension: 'event:props:plan', values: ['pro', 'a|b'] },
      { op: 'is', dimension: 'event:props:a,b', values: ['x,y'] },
    ]);
    // contains ignores case, as Plausible's dashboard does; is compares exactly.
    expect(JSON.parse(apiFilters(chips)!)).toEqual([
      ['contains', 'event:page', ['/blog'], { case_sensitive: false }],
      ['contains_not', 'visit:referrer', ['spam', 'ads'], { case_sensitive: false }],
      ['is', 'visit:country', ['US', 'FR']],
      ['is', 'event:props:plan', ['pro', 'a|b']],
      ['is', 'event:props:a,b', ['x,y']],
    ]);
    expect(searchWithFilters('?range=7d', chips.slice(0, 1))).toBe('?range=7d&f=contains,page,/blog');
    expect(chips.map(chipSentence)).toEqual([
      'Page contains /blog',
      'Referrer does not contain spam or ads',
      'Country is United States (US) or France (FR)',
      'Property plan is pro or a|b',
      'Property a,b is x,y',
    ]);
  });

  it('leaves out and counts what it cannot read, and keeps the last condition of a dimension', () => {
    const tooMany = Array.from({ length: MAX_VALUES + 1 }, (_, i) => `v${i}`).join('|');
    const { chips, ignored } = filtersFromSearch(
      `?f=matches,page,/a&f=is,city,Paris&f=is&f=is,__proto__,x&f=is,props:,x&f=is,page,${tooMany}&f=is,country,US&f=is,country,FR`,
    );
    expect(ignored).toBe(6);
    expect(chips).toEqual([{ op: 'is', dimension: 'visit:country', values: ['FR'] }]);
    const many = Array.from({ length: MAX_CHIPS + 3 }, (_, i) => `f=is,page,/p${i}`).join('&');
    // One dimension: each replaces the one before; the bound counts conditions kept.
    expect(filtersFromSearch(many).chips).toHaveLength(1);
  });

  it('lists every filter dimension in exactly one group of the filter dialog', () => {
    const listed = FILTER_GROUPS.flatMap((g) => g.dimensions);
    expect([...listed].sort()).toEqual([...DIMENSIONS].sort());
  });

  it('maps every breakdown (each a panel tab) to the filter dimension showing the same value', () => {
    for (const tab of BREAKDOWNS) {
      const by = filterOfBreakdown(tab);
      expect(by, tab).not.toBeNull();
      expect(FILTER_DIMENSIONS[by!].breakdown).toBe(tab);
    }
  });

  it('adds, replaces, negates and removes chips, and rewrites only the filters of an address', () => {
    const search: FilterChip = { op: 'is', dimension: 'visit:channel', values: ['Search'] };
    const direct: FilterChip = { op: 'is', dimension: 'visit:channel', values: ['Direct'] };
    const us: FilterChip = { op: 'is', dimension: 'visit:country', values: ['US'] };
    const blog: FilterChip = { op: 'contains', dimension: 'event:page', values: ['/blog'] };
    expect(withChip([search, us], direct)).toEqual([us, direct]);
    // An edit keeps the chip's place; a dimension another chip has replaces that one.
    expect(replacedAt([search, us, blog], 0, { ...us, values: ['FR'] })).toEqual([{ ...us, values: ['FR'] }, blog]);
    expect(replacedAt([search, us], 1, blog)).toEqual([search, blog]);
    expect(replacedAt([search], 1, us)).toEqual([search, us]);
    expect(negatedAt([search, us], 1)).toEqual([search, { ...us, op: 'is_not' }]);
    expect(negatedAt([blog], 0)).toEqual([{ ...blog, op: 'contains_not' }]);
    expect(negatedAt(negatedAt([blog], 0), 0)).toEqual([blog]);
    expect(withoutAt([search, us], 0)).toEqual([us]);
    expect(searchWithFilters('?range=7d&interval=day&f=is,channel,Search&offset=40&filter=refunded', [us])).toBe(
      '?range=7d&interval=day&filter=refunded&f=is,country,US',
    );
    expect(searchWithFilters('?f=is,channel,Search', [])).toBe('');
  });

  it('reads back any chips it writes, and the API accepts what it sends (fast-check)', () => {
    console.log(`app filters property: seed ${seed} (FOOTFALL_SEED=${seed} to replay)`);
    // Any text, and text of the characters the address escapes (`\\`, `|` in a value, `,` in a key).
    const text = (minLength: number, maxLength: number) =>
      fc.oneof(
        fc.string({ minLength, maxLength, unit: 'grapheme' }),
        fc.string({ minLength, maxLength, unit: fc.constantFrom('\\', '|', ',', ':', 'a', ' ', '/') }),
      );
    const chip = fc.record({
      op: fc.constantFrom(...CHIP_OPERATORS),
      dimension: fc.oneof(
        fc.constantFrom(...DIMENSIONS),
        // A property key: any text but empty, its commas and backslashes escaped in the address.
        text(1, 20).map(propDimension),
      ),
      values: fc.uniqueArray(text(0, 40), { minLength: 1, maxLength: 5 }),
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
