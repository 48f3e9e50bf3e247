import { describe, expect, it } from 'vitest';
import {
  filtersParam,
  matches,
  patternProblem,
  FILTER_LIMITS,
  type Filter,
} from '../../lambdas/domain/reports/filters.js';
import { ROW_DIMENSIONS, type VisitRow } from '../../lambdas/domain/visit-table.js';

const parse = (value: unknown) => filtersParam.safeParse(typeof value === 'string' ? value : JSON.stringify(value));
const filterOf = (value: unknown): Filter => {
  const parsed = parse(value);
  if (!parsed.success) throw new Error(parsed.error.issues[0]?.message);
  if (parsed.data === null) throw new Error('empty');
  return parsed.data;
};

const row = (
  over: Partial<Omit<VisitRow, 'dimensions'>> & { dimensions?: Partial<VisitRow['dimensions']> } = {},
): VisitRow => ({
  visit_id: 'v1',
  visitor_id: 'x1',
  day: '2026-03-02',
  start_ms: Date.UTC(2026, 2, 2, 10),
  pageviews: 2,
  bounce: false,
  timed: true,
  duration_ms: 30_000,
  landing_page: '/blog/intro',
  exit_page: '/pricing',
  pages: ['/blog/intro', '/pricing'],
  goals: ['Signup'],
  links: [],
  ...over,
  dimensions: {
    ...(Object.fromEntries(ROW_DIMENSIONS.map((d) => [d, null])) as VisitRow['dimensions']),
    channel: 'Search',
    device: 'Mobile',
    source: 'Google',
    country: 'FR',
    ...over.dimensions,
  },
});

describe('filters: the schema', () => {
  const valid: Array<[string, unknown]> = [
    ['one condition', [['is', 'visit:channel', ['Search']]]],
    ['case-insensitive modifier', [['contains', 'event:page', ['/BLOG'], { case_sensitive: false }]]],
    [
      'and / or / not',
      [
        [
          'or',
          [
            ['is', 'visit:device', ['Mobile']],
            ['not', ['is', 'visit:country', ['FR']]],
          ],
        ],
      ],
    ],
    ['a safe pattern', [['matches', 'event:page', ['^/blog/[a-z0-9-]+$']]]],
    ['the empty list', []],
    [
      'every dimension',
      [
        ['is', 'event:goal', ['Signup']],
        ['is_not', 'visit:utm_content', ['']],
      ],
    ],
  ];
  it.each(valid)('accepts %s', (_, value) => {
    expect(parse(value).success).toBe(true);
  });

  const invalid: Array<[string, unknown, string]> = [
    ['not JSON', '[["is"', 'filters: not JSON'],
    ['not an array', { is: 1 }, 'filters: a JSON array'],
    [
      'an unknown operator',
      [
        ['is', 'visit:channel', ['a']],
        ['equals', 'visit:channel', ['a']],
      ],
      'filters[1][0]: unknown operator "equals"',
    ],
    ['an unknown dimension', [['is', 'visit:city', ['Paris']]], 'filters[0][1]: unknown dimension "visit:city"'],
    ['a prototype key as dimension', [['is', 'constructor', ['x']]], 'filters[0][1]: unknown dimension'],
    ['no values', [['is', 'visit:channel', []]], 'filters[0][2]: values are a list'],
    ['a number value', [['is', 'visit:channel', ['a', 3]]], 'filters[0][2][1]: a value is a string'],
    [
      'too many values',
      [['is', 'visit:channel', Array.from({ length: FILTER_LIMITS.values + 1 }, (_, i) => `v${i}`)]],
      'filters[0][2]',
    ],
    [
      'a long value',
      [['is', 'event:page', ['/'.repeat(FILTER_LIMITS.value + 1)]]],
      'filters[0][2][0]: a value has at most',
    ],
    ['bad modifiers', [['is', 'visit:channel', ['a'], { case: false }]], 'filters[0][3]: modifiers'],
    [
      'nested path',
      [
        [
          'and',
          [
            ['is', 'visit:channel', ['a']],
            ['not', ['is', 'visit:os', 7]],
          ],
        ],
      ],
      'filters[0][1][1][1][2]: values',
    ],
    ['a nested quantifier', [['matches', 'event:page', ['(a+)+$']]], 'filters[0][2][0]: a group cannot be quantified'],
    ['adjacent quantifiers', [['matches', 'event:page', ['a*a*b']]], 'filters[0][2][0]: two quantified atoms'],
    ['a backreference', [['matches', 'event:page', ['(a)\\1']]], 'filters[0][2][0]: \\1 is not supported'],
    ['a lookahead', [['matches', 'event:page', ['(?=a)']]], 'filters[0][2][0]: lookaround'],
    ['too deep', [['not', ['not', ['not', ['not', ['not', ['not', ['is', 'visit:os', ['a']]]]]]]]], 'nest at most'],
    [
      'too many conditions',
      Array.from({ length: FILTER_LIMITS.conditions + 1 }, () => ['is', 'visit:os', ['a']]),
      `filters[${FILTER_LIMITS.conditions}]: at most`,
    ],
    ['and without a list', [['and', ['is', 'visit:os', ['a']]]], 'filters[0][1][0]: a filter is'],
  ];
  it.each(invalid)('refuses %s, naming the filter', (_, value, message) => {
    const parsed = parse(value);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues).toHaveLength(1);
    expect(parsed.error?.issues[0]?.message).toContain(message);
  });

  it('reads [] as no filter', () => {
    expect(parse([]).data).toBeNull();
  });

  it('keeps the safe subset of patterns and gives every pattern it keeps to RegExp', () => {
    for (const ok of ['^/blog', '/docs/.*', 'a|b', '(?:pricing|plans)$', '[0-9]{2,4}x', '\\.html$'])
      expect(patternProblem(ok)).toBeNull();
    for (const bad of [
      '*a',
      'a{2}{3}',
      '(a|aa)*',
      '[:alpha:]',
      'a'.repeat(FILTER_LIMITS.pattern + 1),
      'a+b+c+d+e+',
      '\\',
    ])
      expect(patternProblem(bad)).not.toBeNull();
  });
});

describe('filters: the predicate over a visit row', () => {
  const cases: Array<
    [string, unknown, Partial<Omit<VisitRow, 'dimensions'>> & { dimensions?: Partial<VisitRow['dimensions']> }, boolean]
  > = [
    ['is', [['is', 'visit:channel', ['Direct', 'Search']]], {}, true],
    ['is is case-sensitive by default', [['is', 'visit:channel', ['search']]], {}, false],
    ['is with case_sensitive false', [['is', 'visit:channel', ['search'], { case_sensitive: false }]], {}, true],
    ['is_not', [['is_not', 'visit:channel', ['Search']]], {}, false],
    ['none is the empty string', [['is', 'visit:browser', ['']]], {}, true],
    ['is_not "" excludes none', [['is_not', 'visit:browser', ['']]], {}, false],
    ['contains over the pages', [['contains', 'event:page', ['/blog']]], {}, true],
    ['contains_not: no page contains it', [['contains_not', 'event:page', ['/blog']]], {}, false],
    ['is_not over pages: no page is it', [['is_not', 'event:page', ['/pricing']]], {}, false],
    ['is_not over pages when none is', [['is_not', 'event:page', ['/about']]], {}, true],
    ['matches a page', [['matches', 'event:page', ['^/blog/[a-z]+$']]], {}, true],
    ['matches is partial', [['matches', 'visit:landing_page', ['intro']]], {}, true],
    ['matches_not', [['matches_not', 'visit:exit_page', ['^/pri']]], {}, false],
    ['matches with i', [['matches', 'visit:source', ['^google$'], { case_sensitive: false }]], {}, true],
    ['a goal', [['is', 'event:goal', ['Signup']]], {}, true],
    ['no goal: is_not any goal', [['is_not', 'event:goal', ['Signup']]], { goals: [] }, true],
    ['exit page of a goals-only visit is ""', [['is', 'visit:exit_page', ['']]], { exit_page: null }, true],
    [
      'and of the list',
      [
        ['is', 'visit:channel', ['Search']],
        ['is', 'visit:device', ['Desktop']],
      ],
      {},
      false,
    ],
    [
      'or',
      [
        [
          'or',
          [
            ['is', 'visit:device', ['Desktop']],
            ['is', 'visit:country', ['FR']],
          ],
        ],
      ],
      {},
      true,
    ],
    ['not', [['not', ['is', 'visit:country', ['FR']]]], {}, false],
  ];
  it.each(cases)('%s', (_, value, over, expected) => {
    expect(matches(filterOf(value), row(over))).toBe(expected);
  });
});
