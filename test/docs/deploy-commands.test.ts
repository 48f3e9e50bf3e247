import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/main.js';

/**
 * Every `footfall …` command docs/deploy.md quotes (code blocks and inline code, continuation lines
 * joined) names a command the CLI has, down to a runnable one, and only options that its `--help`
 * or an enclosing command's `--help` lists.
 */
const doc = readFileSync(fileURLToPath(new URL('../../docs/deploy.md', import.meta.url)), 'utf8');

/** The quoted commands: from `footfall` to the end of the inline code span or the (joined) line. */
function quotedCommands(markdown: string): string[] {
  const joined = markdown.replace(/\s*\\\n\s*/g, ' ');
  const spans = [
    ...[...joined.matchAll(/```[a-z]*\n([^]*?)```/g)].flatMap((m) => (m[1] ?? '').split('\n')),
    ...[...joined.replace(/```[^]*?```/g, '').matchAll(/`([^`]+)`/g)].map((m) => (m[1] ?? '').replace(/\n/g, ' ')),
  ];
  return spans.flatMap((span) => [...span.matchAll(/(?<![=\w-])footfall\s+([^#`]*)/g)].map((m) => (m[1] ?? '').trim()));
}

/** The command a quoted line runs and the options it passes. */
function resolve(program: Command, line: string): { path: Command[]; options: string[] } {
  const tokens = line.split(/\s+/).filter(Boolean);
  const path = [program];
  for (const token of tokens) {
    if (token.startsWith('-')) continue;
    const sub = path.at(-1)?.commands.find((c) => c.name() === token || c.aliases().includes(token));
    if (sub) path.push(sub);
  }
  const options = tokens.filter((t) => t.startsWith('--')).map((t) => t.replace(/=.*$/, ''));
  return { path, options };
}

describe('the footfall commands quoted in docs/deploy.md', () => {
  const commands = quotedCommands(doc);

  it('finds them (the first user, accounts, sites, keys, providers, rebuild)', () => {
    const names = commands.map((c) =>
      resolve(buildProgram(), c)
        .path.map((p) => p.name())
        .slice(1)
        .join(' '),
    );
    for (const name of ['users add', 'accounts add', 'sites add', 'keys create', 'providers connect', 'rebuild'])
      expect(names, name).toContain(name);
  });

  it.each(commands.map((c) => [c]))('footfall %s', (line) => {
    const program = buildProgram();
    const { path, options } = resolve(program, line);
    const leaf = path.at(-1)!;
    expect(path.length, `no such command: ${line}`).toBeGreaterThan(1);
    expect(leaf.commands, `${leaf.name()} needs a subcommand`).toEqual([]);
    const help = path.map((c) => c.helpInformation()).join('\n');
    for (const option of options) expect(help, `${option} in footfall ${line}`).toMatch(new RegExp(`${option}\\b`));
  });
});
