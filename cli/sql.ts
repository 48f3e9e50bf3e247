import { Command } from 'commander';
import * as z from 'zod';
import { localPaths } from '../local/service.js';
import { SqlError, runSql } from '../local/sql.js';
import { UsageError, contextOf, parseArgs } from './main.js';
import { formatTable } from './output.js';

const querySchema = z.string().trim().min(1, 'must be a query (the query is empty)');

/**
 * Column names usable as object keys: a name repeated in the result
 * (`SELECT 1 AS n, 2 AS n`) gets a suffix (`n`, `n_2`) instead of overwriting.
 */
function uniqueNames(columns: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return columns.map((name) => {
    const count = (seen.get(name) ?? 0) + 1;
    seen.set(name, count);
    return count === 1 ? name : `${name}_${count}`;
  });
}

/** DuckDB's message on one line: its first lines, without the `LINE n:` excerpt and caret that follow. */
function oneLine(message: string): string {
  const lines = message.split('\n');
  const excerpt = lines.findIndex((l) => /^LINE \d+:/.test(l));
  return (excerpt === -1 ? lines : lines.slice(0, excerpt))
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ');
}

/** `sql "<query>"`: DuckDB over the local Parquet archive (the local Athena). */
export function registerSqlCommand(program: Command): void {
  program
    .command('sql <query>')
    .description(
      'run SQL (DuckDB) over the raw event archive: a view `events` with the archive columns plus site and dt',
    )
    .action(async (query: string, _opts, command: Command) => {
      const ctx = contextOf(command);
      const sql = parseArgs(querySchema, query, '<query>');
      let result;
      try {
        result = await runSql(localPaths(ctx.dataDir).archive, sql);
      } catch (error) {
        if (error instanceof SqlError) throw new UsageError(oneLine(error.message));
        throw error;
      }
      const keys = uniqueNames(result.columns);
      const objects = result.rows.map((row) => Object.fromEntries(keys.map((k, i) => [k, row[i]])));
      if (ctx.json) {
        ctx.printJson(objects);
        return;
      }
      // Nested values (lists, structs) print as JSON rather than [object Object].
      const cells = objects.map((o) =>
        Object.fromEntries(
          Object.entries(o).map(([k, v]) => [k, v !== null && typeof v === 'object' ? JSON.stringify(v) : v]),
        ),
      );
      ctx.print(formatTable(cells, keys));
    });
}
