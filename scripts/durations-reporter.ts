import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * A vitest reporter that writes, per test file, where its wall time went (`docs/benchmarks.md`, "The test suite"):
 * `duration` is its tests and hooks (`beforeAll` included, which vitest's JSON reporter leaves out), `collect` the
 * import of the file and what it imports, in milliseconds, and its project, number of tests and state. Written as
 * JSON lines to `FOOTFALL_DURATIONS_OUT` (default `test-durations.jsonl`) when the run ends, slowest first. Used
 * beside the terminal's reporter: `npm test -- --reporter=default --reporter=./scripts/durations-reporter.ts`.
 */
export class DurationsReporter implements Reporter {
  private readonly rows: Array<Record<string, unknown>> = [];

  onTestModuleEnd(module: TestModule): void {
    const { duration, collectDuration, setupDuration } = module.diagnostic();
    this.rows.push({
      file: relative(process.cwd(), module.moduleId),
      project: module.project.name,
      duration: Math.round(duration),
      collect: Math.round(collectDuration),
      setup: Math.round(setupDuration),
      tests: [...module.children.allTests()].length,
      skipped: [...module.children.allTests('skipped')].length,
      state: module.state(),
    });
  }

  onTestRunEnd(): void {
    const out = process.env.FOOTFALL_DURATIONS_OUT ?? 'test-durations.jsonl';
    const rows = this.rows.toSorted((a, b) => Number(b.duration) - Number(a.duration));
    writeFileSync(out, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  }
}

// eslint-disable-next-line no-restricted-syntax -- vitest loads a reporter given by path through its default export
export default DurationsReporter;
