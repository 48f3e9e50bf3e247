import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

/** One benchmark figure: what was measured, its value and unit, and the target it is held to. */
export interface Figure {
  section: string;
  name: string;
  value: number;
  unit: string;
  target?: string;
  /** A breakdown of `value` (same unit), in the JSON only. */
  detail?: Record<string, number>;
}

/** Percentile (0–100) of a sorted array of numbers. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function format(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/**
 * Prints the figures as one table and writes them as JSON to `bench/results/`:
 * a dated file always, and `latest.json` only for a complete run (`partial`
 * false), so a run of one section never hides the last full table.
 */
export function writeReport(figures: readonly Figure[], partial = false): string {
  const rows = figures.map((f) => [f.section, f.name, format(f.value), f.unit, f.target ?? '']);
  const head = ['section', 'figure', 'value', 'unit', 'target'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join(' | ');
  const table = [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_gib: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const json = JSON.stringify({ date: new Date().toISOString(), machine, figures }, null, 2);
  if (!partial) writeFileSync(`${dir}latest.json`, `${json}\n`);
  writeFileSync(`${dir}${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`, `${json}\n`);
  return `${table}\n\nmachine: ${machine.cpu}, ${machine.cores} cores, ${machine.memory_gib} GiB, Node ${machine.node}`;
}
