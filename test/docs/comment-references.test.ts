import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Comments and test names point to our own `docs/`, never to documents outside the repository (the
 * API specification and the design card the project started from), and state a rule instead of the
 * issue that asked for it: issue numbers, dates and measured figures belong in the commit messages
 * and `docs/benchmarks.md`. Every `docs/<page>.md` a source file names exists, and every section it
 * quotes right after the page's name is part of one of that page's headings (or opens a paragraph).
 */

const ROOT = join(import.meta.dirname, '..', '..');
const FOLDERS = ['lambdas', 'local', 'cli', 'lib', 'app/src', 'bench', 'bin', 'scripts', 'test'];
const SOURCE = /\.(?:ts|tsx|js|mjs|cjs)$/;

/** Source files of `FOLDERS`, as paths relative to the repository root. */
function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((name) => SOURCE.test(name) && !name.split(/[\\/]/).includes('node_modules'))
      .map((name) => relative(ROOT, join(ROOT, folder, name))),
  );
}

// Built from parts so that this file does not match its own patterns.
const OUTSIDE = [
  { what: 'a section of the API specification', pattern: new RegExp('spec ' + '\\u00a7', 'i') },
  { what: 'the design card outside the repository', pattern: new RegExp('DESIGN' + '\\.md') },
  { what: 'an issue number', pattern: new RegExp('\\bissues? ' + '\\d', 'i') },
];

/** Each offending line as `path:line: text`, for the patterns of `OUTSIDE`. */
function outsideReferences(files: string[], text: (file: string) => string): string[] {
  return files.flatMap((file) =>
    text(file)
      .split('\n')
      .flatMap((line, i) =>
        OUTSIDE.filter(({ pattern }) => pattern.test(line)).map(
          ({ what }) => `${file}:${i + 1}: ${what}: ${line.trim()}`,
        ),
      ),
  );
}

/**
 * What a quoted section may name on a page of `docs/`, lowercased: its headings (without the
 * leading `#`s) and the openings of its paragraphs (a bold lead such as `**The group.**`).
 */
function anchors(page: string): { headings: string[]; lines: string[] } {
  const text = readFileSync(join(ROOT, 'docs', page), 'utf8').toLowerCase();
  return {
    headings: [...text.matchAll(/^#+\s+(.+?)\s*$/gm)].map((m) => m[1] ?? ''),
    lines: text.split('\n').map((line) => line.replace(/^\*\*/, '')),
  };
}

/** True when `section` is part of a heading of the page, or opens one of its lines. */
function names(page: { headings: string[]; lines: string[] }, section: string): boolean {
  const wanted = section.toLowerCase();
  return page.headings.some((h) => h.includes(wanted)) || page.lines.some((line) => line.startsWith(wanted));
}

/** A page of `docs/` named in a source file, optionally followed by quoted section names. */
const DOC_REFERENCE = /docs\/([a-z0-9-]+\.md)`?((?:,? "[^"\n]+")*)/g;

/** Each reference to a missing page or heading, as `path:line: docs/page.md "section"`. */
function brokenDocReferences(files: string[], text: (file: string) => string): string[] {
  const pages = new Set(readdirSync(join(ROOT, 'docs')));
  const known = new Map<string, ReturnType<typeof anchors>>();
  const sectionsOf = (page: string): ReturnType<typeof anchors> => {
    const found = known.get(page) ?? anchors(page);
    known.set(page, found);
    return found;
  };
  return files.flatMap((file) =>
    text(file)
      .split('\n')
      .flatMap((line, i) =>
        [...line.matchAll(DOC_REFERENCE)].flatMap(([, page = '', quoted = '']) => {
          if (!pages.has(page)) return [`${file}:${i + 1}: docs/${page} does not exist`];
          const sections = [...quoted.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? '');
          return sections
            .filter((section) => !names(sectionsOf(page), section))
            .map((section) => `${file}:${i + 1}: docs/${page} has no heading "${section}"`);
        }),
      ),
  );
}

describe('comments point inside the repository', () => {
  const files = sourceFiles();
  const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

  it('scans the source folders', () => {
    expect(files).toContain('lambdas/domain/range.ts');
    expect(files).toContain('app/src/api.ts');
    expect(files.length).toBeGreaterThan(300);
  });

  it('cites no spec section, no design card and no issue number', () => {
    expect(outsideReferences(files, read)).toEqual([]);
  });

  it('names only docs pages and headings that exist', () => {
    const self = relative(ROOT, import.meta.filename);
    expect(
      brokenDocReferences(
        files.filter((file) => file !== self),
        read,
      ),
    ).toEqual([]);
  });

  it('finds each kind of outside reference, and a quoted heading a page lacks', () => {
    const samples = new Map([
      ['a.ts', '/** Ranges (spec \u00a74.1). */'],
      ['b.ts', '// As DESIGN' + '.md "Channels" says.'],
      ['c.ts', "it('counts once (issue " + "16.2)', () => {});"],
      ['d.ts', '/** See `docs/api.md` "Ranges", "No such heading"; `docs/nowhere.md`. */'],
    ]);
    const text = (file: string): string => samples.get(file) ?? '';
    expect(outsideReferences([...samples.keys()], text).map((line) => line.split(':')[0])).toEqual([
      'a.ts',
      'b.ts',
      'c.ts',
    ]);
    expect(brokenDocReferences(['d.ts'], text)).toEqual([
      'd.ts:1: docs/api.md has no heading "No such heading"',
      'd.ts:1: docs/nowhere.md does not exist',
    ]);
  });
});
