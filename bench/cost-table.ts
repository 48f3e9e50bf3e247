import { FILTERED_MEMORY_MIB, FUNCTIONS } from '../lib/functions.js';
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
/** The functions `-c filteredReports=true` puts on DuckDB (`FunctionSpec.visitTable`): the writer, and the filtered function it adds. */
const visitTableFunctions = new Set(
  Object.entries(FUNCTIONS)
    .filter(([, spec]) => 'visitTable' in spec)
    .map(([key]) => key),
);
/** The functions that invoke the filtered function with the flag (`FunctionSpec.invokes`), and get `FILTERED_FUNCTION`. */
const filteredCallers = new Set(
  Object.entries(FUNCTIONS)
    .filter(([, spec]) => 'invokes' in spec && (spec.invokes as readonly string[]).includes('filtered'))
    .map(([key]) => key),
);
const variablesOf = (r: StackResource) =>
  (r.props['Environment'] as { Variables: Record<string, unknown> } | undefined)?.Variables ?? {};
/** `r` on DuckDB, as lib/visit-table.ts makes a `visitTable` function: x86_64 at FILTERED_MEMORY_MIB, the table's bucket. */
const onDuckdb = (r: StackResource, variables: Record<string, unknown> = {}) =>
  withProps(r, {
    Architectures: ['x86_64'],
    MemorySize: Math.max(Number(r.props['MemorySize'] ?? 0), FILTERED_MEMORY_MIB),
    Environment: { Variables: { ...variablesOf(r), VISIT_TABLE_BUCKET: 'bucket', ...variables } },
  });

/** The filtered reports' variant's label. */
const FILTERED_LABEL = 'filtered reports in AWS (`-c filteredReports=true`)';

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
    // lib/visit-table.ts: the writer on DuckDB; the report and MCP functions unchanged but for the filtered
    // function's name, which the flag adds beside them (its calls: `USAGE.filteredCallShare`).
    label: FILTERED_LABEL,
    applies: (resources) => resources.some((r) => visitTableFunctions.has(String(serviceOf(r)))),
    change: (r) => {
      if (r.type !== 'AWS::Lambda::Function') return r;
      const service = String(serviceOf(r));
      if (visitTableFunctions.has(service)) return onDuckdb(r);
      if (!filteredCallers.has(service)) return r;
      const caller = withProps(r, {
        Environment: { Variables: { ...variablesOf(r), FILTERED_FUNCTION: 'filtered' } },
      });
      if (service !== 'report') return caller;
      const filtered = onDuckdb(r, { POWERTOOLS_SERVICE_NAME: 'filtered' });
      return [caller, { ...filtered, id: 'filteredFunction' }];
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
 * The other assumptions of how long a site is looked at that the filtered reports' row is shown at
 * (`USAGE.visitTableWriter.lookedHoursPerSiteDay` is the row itself): nobody, four hours, and every hour of the day
 * (which refreshes at every run, as before the table was refreshed on demand).
 */
export const LOOKED_HOURS_SHOWN = [0, 4, 24] as const;

/** What each variant adds to (or takes from) the total at each level, USD a month. */
export function variantDeltas(levels: readonly Measured[], resources: readonly StackResource[]): Line[][] {
  return VARIANTS.filter((v) => v.applies(resources)).flatMap((v) => {
    const changed = resources.flatMap(v.change);
    const delta = (label: string, at: (m: Measured) => Measured) =>
      levels.map((m): Line => [label, totalOf(stackBill(changed, at(m))) - totalOf(stackBill(resources, at(m)))]);
    if (v.label !== FILTERED_LABEL) return [delta(v.label, (m) => m)];
    return [
      delta(`${v.label}, each site looked at ${USAGE.visitTableWriter.lookedHoursPerSiteDay} h a day`, (m) => m),
      ...LOOKED_HOURS_SHOWN.map((h) =>
        delta(`${v.label}, looked at ${h} h a day`, (m) => ({ ...m, lookedHoursPerSiteDay: h })),
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
