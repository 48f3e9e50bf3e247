import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { buildProgram } from '../../cli/main.js';

const DEPLOY = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');

/** Every `footfall …` command of the page: lines of its sh blocks (with `\\` continuations) and inline code spans. */
function documentedCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const joined = block[1]!.replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) {
      const command = line
        .replace(/\s#\s.*$/, '')
        .trim()
        .replace(/^npx /, '');
      if (command.startsWith('footfall ')) commands.push(command.replace(/\s+/g, ' '));
    }
  }
  for (const span of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/`(footfall [^`]+)`/g))
    commands.push(span[1]!.replace(/\s+/g, ' '));
  return commands;
}

const longOptions = (command: Command) => command.options.map((o) => o.long).filter((o): o is string => !!o);

/**
 * Walks a documented command through the CLI's own command tree, as `--help`
 * shows it: each word a subcommand, each `--option` one that command or the
 * program takes. Placeholders (`<TableName>`, `…`) stand for values.
 * @returns what does not exist, or null
 */
function checkAgainstHelp(text: string): string | null {
  const program = buildProgram();
  const global = new Set(longOptions(program));
  let command: Command = program;
  let subcommandsDone = false;
  for (const word of text.split(' ').slice(1)) {
    if (word.startsWith('--')) {
      const name = word.split('=')[0]!;
      if (!global.has(name) && !longOptions(command).includes(name))
        return `${name} is not an option of ${command.name()}`;
      continue;
    }
    if (subcommandsDone || /^[<"$]/.test(word) || word.includes('…')) continue;
    const sub = command.commands.find((c) => c.name() === word);
    if (sub) command = sub;
    else if (command.commands.length > 0) return `${word} is not a command of ${command.name()}`;
    else subcommandsDone = true;
  }
  return command.commands.length > 0 ? `${command.name()} needs a subcommand` : null;
}

describe('docs/deploy.md: every footfall command it shows is one the CLI has (--help)', () => {
  const commands = documentedCommands(DEPLOY);
  it('finds the commands of each walkthrough', () => {
    for (const expected of ['sites delete', 'upgrade check', 'rebuild', 'sites add'])
      expect(
        commands.some((c) => c.includes(expected)),
        expected,
      ).toBe(true);
  });
  it.each(commands)('%s', (command) => {
    expect(checkAgainstHelp(command)).toBeNull();
  });
  it('would catch a command or an option the CLI does not have', () => {
    expect(checkAgainstHelp('footfall sites remove example.com')).toMatch(/remove is not a command/);
    expect(checkAgainstHelp('footfall sites delete example.com --force')).toMatch(/--force is not an option/);
    expect(checkAgainstHelp('footfall upgrade')).toMatch(/needs a subcommand/);
  });
});
