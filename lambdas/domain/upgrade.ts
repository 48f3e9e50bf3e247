import type { SiteConfig } from './site.js';

/** The stack outputs that say what is deployed (lib/footfall-stack.ts). */
export const STACK_VERSION_OUTPUTS = { version: 'Version', layout: 'DataLayout' } as const;

/**
 * The stack outputs that say how events reach the sessionizer: the Kinesis stream's name (every
 * stack before the raw delivery, and one deployed with `-c drainStream=true`) and the ingest
 * delivery's (every stack since).
 */
export const STACK_INGEST_OUTPUTS = { stream: 'StreamName', delivery: 'IngestStreamName' } as const;

/**
 * How a deployed stack ingests (`docs/deploy.md`, "Upgrading from the event stream"): `stream`
 * through its Kinesis stream alone (before the raw delivery), `draining` both while the stream
 * drains (`-c drainStream=true`), `delivery` through the Firehose delivery streams alone.
 */
export type DeployedIngestion = 'stream' | 'draining' | 'delivery';

/** What is deployed: the stack's release and layout, null when its stack predates those outputs. */
export interface Deployed {
  version: string | null;
  layout: number | null;
  /** From its outputs (`STACK_INGEST_OUTPUTS`); absent when neither was read. */
  ingestion?: DeployedIngestion;
}

/** What the operator says of the deploy to come (`footfall upgrade check` options). */
export interface UpgradeIntent {
  /** The deploy will set `-c drainStream=true`. */
  drainStream?: boolean;
}

/** The ingestion of a stack from which of `STACK_INGEST_OUTPUTS` it has; undefined with neither. */
export function ingestionOf(hasStream: boolean, hasDelivery: boolean): DeployedIngestion | undefined {
  if (hasStream) return hasDelivery ? 'draining' : 'stream';
  return hasDelivery ? 'delivery' : undefined;
}

/** Notes on the deployed ingestion, and whether the deploy would lose events (a stream deleted unread). */
function ingestionNotes(
  ingestion: DeployedIngestion | undefined,
  intent: UpgradeIntent,
): { notes: string[]; safe: boolean } {
  const guide = 'docs/deploy.md, "Upgrading from the event stream"';
  if (ingestion === 'stream' && !intent.drainStream)
    return {
      safe: false,
      notes: [
        `the stack's events go through its Kinesis stream, which this release replaces: a plain \`npx cdk deploy\` would delete it with the events not yet read in it. Deploy with \`npx cdk deploy -c drainStream=true\` (check with \`footfall upgrade check --drain-stream\`), then without the flag 24 hours later (${guide})`,
      ],
    };
  if (ingestion === 'stream')
    return {
      safe: true,
      notes: [
        `the stack's events go through its Kinesis stream: with -c drainStream=true it drains while new events go to the delivery streams; deploy without the flag 24 hours later, which removes it (${guide})`,
      ],
    };
  if (ingestion === 'draining')
    return {
      safe: true,
      notes: [
        `the stack is draining its Kinesis stream (-c drainStream=true): keep the flag until 24 hours after the deploy that set it, then deploy without it ($11.15 a month less; ${guide})`,
      ],
    };
  return { safe: true, notes: [] };
}

/** What the release about to be deployed will do to one site (`docs/deploy.md`, "Upgrading"). */
export interface SiteUpgrade {
  domain: string;
  /** The live generation's layout (absent on the SITE item = 1). */
  layout: number;
  /** `ok`: nothing to do; `rebuild`: run `footfall rebuild` after the deploy; `block`: do not deploy yet. */
  action: 'ok' | 'rebuild' | 'block';
  /** One sentence per finding, for the operator. */
  notes: string[];
}

export interface UpgradePlan {
  from: Deployed | null;
  to: { version: string; layout: number };
  /** Whether the release may be deployed now (no site blocks it, and it is not older than the deployed one). */
  safe: boolean;
  notes: string[];
  sites: SiteUpgrade[];
}

/** Compares dotted release numbers (`0.10.0` > `0.9.1`); pre-release tags are compared as text. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/);
  const pb = b.split(/[.-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const [x = '0', y = '0'] = [pa[i], pb[i]];
    const [nx, ny] = [Number(x), Number(y)];
    const diff = Number.isInteger(nx) && Number.isInteger(ny) ? nx - ny : x.localeCompare(y);
    if (diff !== 0) return Math.sign(diff);
  }
  return 0;
}

/** What one site needs: a layout this release cannot read, a rebuild in flight, or a retired generation to clean up. */
function siteUpgrade(site: SiteConfig, layout: number): SiteUpgrade {
  const live = site.layout ?? 1;
  const notes: string[] = [];
  let action: SiteUpgrade['action'] = 'ok';
  const raise = (to: SiteUpgrade['action']) => {
    const order = ['ok', 'rebuild', 'block'];
    if (order.indexOf(to) > order.indexOf(action)) action = to;
  };
  if (site.building !== undefined) {
    raise('block');
    notes.push(
      `a rebuild of generation ${site.building} is running: let it finish (or \`footfall rebuild --abandon --site ${site.domain}\`) before deploying, since it writes the layout of the code that runs it`,
    );
  }
  if (live > layout) {
    raise('block');
    notes.push(
      `its data is in layout ${live}, newer than this release reads (${layout}): deploy a release of layout ${live} or later`,
    );
  } else if (live < layout) {
    raise('rebuild');
    notes.push(
      `its data is in layout ${live}: from the deploy its reports answer 503 until \`footfall rebuild --site ${site.domain}\` has migrated it (ingestion and webhooks go on)`,
    );
  }
  if (site.retired !== undefined) {
    raise('rebuild');
    notes.push(`generation ${site.retired} awaits deletion: \`footfall rebuild --site ${site.domain}\` cleans it up`);
  }
  if (notes.length === 0) notes.push('nothing to do');
  return { domain: site.domain, layout: live, action, notes };
}

/**
 * What deploying `to` onto a stack running `from` with `sites` will do
 * (`footfall upgrade check`, `docs/deploy.md` "Upgrading"): per site, whether
 * its reports keep answering (same layout), need `footfall rebuild` (an older
 * layout: 503 until migrated), or block the deploy (a rebuild in flight, a
 * newer layout); whether the release is older than the deployed one; and whether the stack
 * still ingests through its Kinesis stream, which only a deploy with `-c drainStream=true` keeps
 * until it is read (`intent.drainStream`: the operator says the deploy sets it).
 */
export function upgradePlan(
  from: Deployed | null,
  sites: readonly SiteConfig[],
  to: { version: string; layout: number },
  intent: UpgradeIntent = {},
): UpgradePlan {
  const notes: string[] = [];
  let safe = true;
  if (!from) notes.push('no deployed stack was read: the sites below are compared with this release alone');
  else if (from.version === null)
    notes.push('the deployed stack predates the Version output: the sites below say what changes');
  else {
    const order = compareVersions(to.version, from.version);
    if (order < 0) {
      safe = false;
      notes.push(
        `the stack runs ${from.version}, newer than this release (${to.version}): a downgrade is not supported`,
      );
    } else if (order === 0) notes.push(`the stack runs ${from.version} already`);
    else notes.push(`upgrade from ${from.version} to ${to.version}`);
  }
  if (from?.layout !== null && from?.layout !== undefined && from.layout !== to.layout)
    notes.push(`the storage layout changes from ${from.layout} to ${to.layout}`);
  const ingestion = ingestionNotes(from?.ingestion, intent);
  notes.push(...ingestion.notes);
  if (!ingestion.safe) safe = false;
  const planned = sites.map((s) => siteUpgrade(s, to.layout));
  if (planned.some((s) => s.action === 'block')) safe = false;
  const rebuilds = planned.filter((s) => s.action === 'rebuild').length;
  if (rebuilds > 0) notes.push(`${rebuilds} site${rebuilds === 1 ? '' : 's'} to rebuild after the deploy`);
  return { from, to, safe, notes, sites: planned };
}
