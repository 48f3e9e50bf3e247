import { FUNCTIONS, type FunctionSpec } from '../lib/functions.js';
import { stackBill, totalOf, type Line, type Measured } from './cost-model.js';
import { GOALS, USAGE } from './cost-prices.js';
import type { StackResource } from './stack-template.js';

/** A variant of the stack: its resources changed as a context flag would change them. */
interface Variant {
  label: string;
  applies: (resources: readonly StackResource[]) => boolean;
  /** The resource as the flag makes it: one, or more when the flag adds a resource beside it. */
  change: (r: StackResource) => StackResource | StackResource[];
}

const withProps = (r: StackResource, props: Record<string, unknown>): StackResource => ({
  ...r,
  props: { ...r.props, ...props },
});
const hasType = (type: string) => (resources: readonly StackResource[]) => resources.some((r) => r.type === type);
const serviceOf = (r: StackResource): unknown =>
  (r.props['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables?.[
    'POWERTOOLS_SERVICE_NAME'
  ];
const hotPath = new Set(
  Object.entries(FUNCTIONS)
    .filter(([, spec]) => 'hotPath' in spec && spec.hotPath)
    .map(([key]) => key),
);
/** The functions filtered reports put on DuckDB (`FunctionSpec.visitTable`): the writer, and the filtered function itself. */
const visitTableFunctions = new Set(
  Object.entries(FUNCTIONS)
    .filter(([, spec]) => 'visitTable' in spec)
    .map(([key]) => key),
);
const variablesOf = (r: StackResource) =>
  (r.props['Environment'] as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {};
/** `r`'s environment without `names`. */
const withoutVariables = (r: StackResource, ...names: string[]) =>
  withProps(r, {
    Environment: { Variables: Object.fromEntries(Object.entries(variablesOf(r)).filter(([k]) => !names.includes(k))) },
  });
/**
 * `r` off DuckDB, as `-c filteredReports=false` builds a `visitTable` function: arm64 at its registry memory
 * (`FunctionSpec.memoryMiB`, 512 MB unless given), no table bucket.
 */
const offDuckdb = (r: StackResource, key: keyof typeof FUNCTIONS) => {
  const spec: FunctionSpec = FUNCTIONS[key];
  return withProps(withoutVariables(r, 'VISIT_TABLE_BUCKET'), {
    Architectures: ['arm64'],
    MemorySize: spec.memoryMiB ?? 512,
  });
};

/** The filtered reports' opt-out's label. */
const FILTERED_LABEL = 'without filtered reports (`-c filteredReports=false`)';

/** The settings `docs/cost.md` prices beside the default, as changes to the template. */
const VARIANTS: readonly Variant[] = [
  {
    label: 'without point-in-time recovery (`-c pointInTimeRecovery=false`)',
    applies: hasType('AWS::DynamoDB::Table'),
    change: (r) =>
      r.type === 'AWS::DynamoDB::Table'
        ? withProps(r, { PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: false } })
        : r,
  },
  {
    label: 'Standard table class instead of Standard-IA (`-c tableClass=standard`)',
    applies: (resources) => resources.some((r) => r.props['TableClass'] === 'STANDARD_INFREQUENT_ACCESS'),
    change: (r) => (r.type === 'AWS::DynamoDB::Table' ? withProps(r, { TableClass: 'STANDARD' }) : r),
  },
  {
    label: 'on-demand Kinesis instead of provisioned shards (`-c shards=on-demand`)',
    applies: hasType('AWS::Kinesis::Stream'),
    change: (r) =>
      r.type === 'AWS::Kinesis::Stream' ? withProps(r, { StreamModeDetails: { StreamMode: 'ON_DEMAND' } }) : r,
  },
  {
    // lib/visit-table.ts undone: no filtered function, the writer back on arm64 at its own memory, and the report
    // and MCP functions without the filtered function's name (so none of their calls wait on it).
    label: FILTERED_LABEL,
    applies: (resources) => resources.some((r) => serviceOf(r) === 'filtered'),
    change: (r) => {
      if (r.type !== 'AWS::Lambda::Function') return r;
      const service = String(serviceOf(r));
      if (service === 'filtered') return [];
      if (visitTableFunctions.has(service)) return offDuckdb(r, service as keyof typeof FUNCTIONS);
      return withoutVariables(r, 'FILTERED_FUNCTION');
    },
  },
  {
    label: 'X-Ray on the hot path (`-c hotPathTracing=true`)',
    applies: hasType('AWS::Lambda::Function'),
    change: (r) =>
      r.type === 'AWS::Lambda::Function' && hotPath.has(String(serviceOf(r)))
        ? withProps(r, { TracingConfig: { Mode: 'Active' } })
        : r,
  },
];

/**
 * The other assumptions of how long a site is looked at, shown as what they change in the total
 * (`USAGE.visitTableWriter.lookedHoursPerSiteDay` is the total's): nobody, four hours, and every hour of the day
 * (which refreshes at every run, as before the table was refreshed on demand).
 */
export const LOOKED_HOURS_SHOWN = [0, 4, 24] as const;

/** What each variant adds to (or takes from) the total at each level, USD a month. */
export function variantDeltas(levels: readonly Measured[], resources: readonly StackResource[]): Line[][] {
  const total = (rs: readonly StackResource[], m: Measured) => totalOf(stackBill(rs, m));
  return VARIANTS.filter((v) => v.applies(resources)).flatMap((v) => {
    const changed = resources.flatMap(v.change);
    const row = levels.map((m): Line => [v.label, total(changed, m) - total(resources, m)]);
    if (v.label !== FILTERED_LABEL) return [row];
    const hours = USAGE.visitTableWriter.lookedHoursPerSiteDay;
    return [
      row,
      ...LOOKED_HOURS_SHOWN.map((h) =>
        levels.map((m): Line => [
          `filtered reports with each site looked at ${h} h a day instead of ${hours} h`,
          total(resources, { ...m, lookedHoursPerSiteDay: h }) - total(resources, m),
        ]),
      ),
    ];
  });
}

const usd = (n: number) => n.toFixed(2);
const signed = (n: number) => `${n >= 0 ? '+' : '−'}${usd(Math.abs(n))}`;
const levelName = (events: number) => (events >= 1e6 ? `${events / 1e6}M` : `${events / 1e3}k`);

/** Why a total is what it is: its two largest lines. */
export function largest(bill: readonly Line[]): string {
  return [...bill]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 2)
    .map(([name, v]) => `${name.replace(/ \(.*$/, '')} ${usd(v)}`)
    .join(', ');
}

/** Each level's total against the issue's goal: "met by $x" or "misses by $x". */
export function againstGoal(m: Measured, total: number): { goal: number | undefined; over: number | undefined } {
  const goal = GOALS.get(m.eventsPerMonth);
  return { goal, over: goal === undefined ? undefined : total - goal };
}

/**
 * The bill as a markdown table: one column per traffic level, every line of the stack, the total,
 * the goal and the margin, then what each priced setting would change.
 */
export function billTable(levels: readonly Measured[], resources: readonly StackResource[]): string {
  const bills = levels.map((m) => stackBill(resources, m));
  const totals = bills.map(totalOf);
  const head = `| Line | ${levels.map((l) => `${levelName(l.eventsPerMonth)} events`).join(' | ')} |`;
  const rows = (bills[0] ?? []).map(
    ([name], i) => `| ${name} | ${bills.map((b) => usd(b[i]?.[1] ?? 0)).join(' | ')} |`,
  );
  const goals = levels.map((m, i) => againstGoal(m, totals[i] ?? 0));
  const deltas = variantDeltas(levels, resources).map(
    (row) => `| *${row[0]?.[0] ?? ''}* | ${row.map(([, v]) => `*${signed(v)}*`).join(' | ')} |`,
  );
  return [
    head,
    `|---|${levels.map(() => '---:').join('|')}|`,
    ...rows,
    `| **Total** | ${totals.map((t) => `**${usd(t)}**`).join(' | ')} |`,
    `| Goal | ${goals.map((g) => (g.goal === undefined ? '' : usd(g.goal))).join(' | ')} |`,
    `| Against the goal | ${goals.map((g, i) => (g.over === undefined ? '' : g.over <= 0 ? `met, ${usd(-g.over)} under` : `**misses by ${usd(g.over)}**: ${largest(bills[i] ?? [])}`)).join(' | ')} |`,
    ...deltas,
  ].join('\n');
}
