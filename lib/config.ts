import * as z from 'zod';
import type { Construct } from 'constructs';

/**
 * Deployment settings of the Footfall stack, from CDK context: `cdk.json`
 * (typed JSON values) or the command line (`-c app=true`, where every value is
 * a string). `docs/deploy.md` lists them.
 */
export interface FootfallConfig {
  /** App mode: the report API and MCP (`docs/architecture.md` "App mode"). */
  app: boolean;
  /**
   * Kinesis capacity: a number of provisioned shards (default 1), or `on-demand`. One shard takes
   * 1,000 records/s; it is the cheaper mode below about 2.6 billion events a month and gives the
   * sessionizer all of a site's events in one batch (`docs/cost.md`, "Batching").
   */
  shards: number | 'on-demand';
  /**
   * Keep the Kinesis event stream of a stack deployed before the raw delivery, with its
   * sessionizer mapping and its archive delivery, while what is left in it drains (24 hours); the
   * event function writes to the delivery streams either way (`docs/deploy.md`, "Upgrading from
   * the event stream"). `shards` and `iteratorAgeAlarmSeconds` apply to that stream only.
   */
  drainStream: boolean;
  /** Days the raw Parquet events are kept on S3; 0 = forever. */
  rawRetentionDays: number;
  /** DynamoDB deletion protection. */
  deletionProtection: boolean;
  /**
   * Default stage throttling of the HTTP API: steady requests per second. The hot path's function
   * URLs are not behind it (`hotPathConcurrency` throttles them).
   */
  throttleRate: number;
  /** Default stage throttling of the HTTP API: burst. */
  throttleBurst: number;
  /** Retention of every Lambda and API access log group, in days (a CloudWatch Logs value). */
  logRetentionDays: number;
  /** The sessionizer's iterator age (how far behind the stream it is) that raises the alarm, in seconds. */
  iteratorAgeAlarmSeconds: number;
  /**
   * The IP-to-country database (.mmdb) shipped in the event function's layer;
   * undefined = the packaged DB-IP Lite database (`local/geo.ts`). `footfall
   * geo update` installs one under `.data/geo/country.mmdb` (`docs/ingestion.md`).
   */
  geoDatabase: string | undefined;
  /**
   * X-Ray on the hot path (the `event` and `tracker` functions): false (default) sets their tracing
   * to PassThrough, and the HTTP API, which X-Ray cannot trace, never asks for a trace, so they record
   * none; true traces them actively (Lambda's fixed sampling: the first request each second and 5% of
   * the rest, about $20 a month at 10M events, `docs/cost.md`). The other functions are always traced actively.
   */
  hotPathTracing: boolean;
  /**
   * DynamoDB point-in-time recovery (35 days of restore points, billed per GB of table a month).
   * On by default: payments, customers and configuration are not in the Parquet archive
   * (`docs/deploy.md`, "Point-in-time recovery").
   */
  pointInTimeRecovery: boolean;
  /**
   * Keep the customer managed KMS key that sealed webhook secrets before they moved to the stack's
   * key in Parameter Store (`docs/deploy.md`, "Webhook secrets leave the KMS key"): true keeps the
   * key in the stack and lets the webhook function open secrets still sealed under it, while
   * `footfall secrets reseal` moves them; false (default) has no key ($1 a month less). A key left
   * out of the template is retained by CloudFormation, not deleted, until its deletion is scheduled.
   */
  legacySecretsKey: boolean;
  /**
   * DynamoDB table class: `standard-ia` (default: Standard-Infrequent Access, storage 60% cheaper,
   * every read and write 25% dearer) or `standard`. Footfall keeps every visit, so storage grows
   * every month while requests do not: with the measured requests and bytes per event Standard-IA
   * costs less from about 10 months of data at 10M events a month (at most $0.40 a month more
   * before that at 1M, `docs/cost.md`, "Table class"). The class of a deployed table changes in place.
   */
  tableClass: 'standard' | 'standard-ia';
  /**
   * Reserved concurrency of each hot-path function (`event`, `tracker`); undefined (default): none.
   * It is what throttles their function URLs, which have no stage throttle: at most 10 × N requests
   * per second each, and HTTP 429 beyond (AWS Lambda developer guide, "Throttling function URLs"),
   * and it keeps a flood of events from taking the account's concurrency from the sessionizer and
   * the webhooks. Off by default because a reservation must leave at least 100 of the account's
   * concurrency unreserved (Lambda API reference, `PutFunctionConcurrency`): new accounts, whose
   * quota starts at 10, cannot deploy one (`docs/deploy.md`, "Throttling").
   */
  hotPathConcurrency: number | undefined;
  /**
   * The CloudFormation stack name (default `Footfall`). Every resource with a name unique in an
   * account is named after it (and, for CloudFront's account-wide ones, the region too), so a
   * second stack (`-c stackName=FootfallStaging`) can live in the same account and region, or the
   * same name in another region (`docs/deploy.md`, "Several stacks"). Letters, digits and `-`, at
   * most 40, so `<stackName>-<region>-<suffix>` fits CloudFront's 64-character names.
   */
  stackName: string;
  /** An email address subscribed to a new SNS topic that every alarm notifies (`docs/deploy.md`, "Alarms"). */
  alarmEmail: string | undefined;
  /** An existing SNS topic ARN that every alarm notifies (with or instead of `alarmEmail`). */
  alarmTopicArn: string | undefined;
  /**
   * A custom domain of the app's CloudFront distribution (app mode only), e.g. `analytics.example.com`: the
   * dashboard, `/api/*`, `/mcp`, `/v.js` and `/api/event` on it, and the served script posting there
   * (first-party for a site on the same registrable domain). Needs `appCertificateArn`; without it the
   * CDK app adds the `<stackName>Certificate` stack in us-east-1 that creates one (`docs/deploy.md`,
   * "Custom domain").
   */
  appDomain: string | undefined;
  /**
   * The ACM certificate of `appDomain`, in us-east-1: CloudFront takes certificates from that region
   * only (CloudFront developer guide, "Requirements for using SSL/TLS certificates with CloudFront").
   */
  appCertificateArn: string | undefined;
  /**
   * A monthly AWS Budgets cost budget of the account in USD, whose alerts (actual spend past 80% and
   * 100%, forecast past 100%) go to `alarmEmail` and/or `alarmTopicArn` (`docs/deploy.md`, "Spend guard").
   */
  monthlyBudgetUsd: number | undefined;
  /**
   * Web origins whose pages may call `/mcp`, the app's own only if listed (comma-separated in the context,
   * e.g. `https://agent.example.com`): every other `Origin` is refused 403 (`docs/mcp.md`, "Origin").
   */
  mcpOrigins: readonly string[];
  /**
   * The verified Amazon SES identity email reports come from (app mode), e.g. `reports@example.com`:
   * the scheduled function may send as that address (or its domain's identity) and nothing else.
   * Undefined (default): reports are off and the settings page says why (`docs/deploy.md`, "Email reports").
   */
  reportSender: string | undefined;
  /**
   * Filtered reports in app mode (`docs/data-model.md`, "Filtered reports"). True (default) has the operations
   * function write the visit table under `visit-table/` of the archive bucket for the sites someone looks at,
   * and adds the `filtered` function, which reads it with DuckDB for the report and MCP functions (the writer and
   * the filtered function on x86_64 at 1769 MB with the DuckDB layer); false (`-c filteredReports=false`) keeps
   * those functions as they were without it, and a request with `filters` is a 400. No effect without `app`:
   * every function it changes or adds is app-only, so the stack without the dashboard is the same either way.
   * On by default since its cost at the priced use stays within every cost goal it met without it, to 10M
   * events a month (`docs/cost.md`, "Filtered reports").
   */
  filteredReports: boolean;
}

/** The context keys read by `readConfig`, with their defaults. */
export const CONFIG_DEFAULTS = {
  app: false,
  shards: 1,
  drainStream: false,
  rawRetentionDays: 730,
  deletionProtection: true,
  throttleRate: 1000,
  throttleBurst: 2000,
  logRetentionDays: 30,
  iteratorAgeAlarmSeconds: 300,
  geoDatabase: undefined,
  hotPathTracing: false,
  pointInTimeRecovery: true,
  legacySecretsKey: false,
  tableClass: 'standard-ia',
  hotPathConcurrency: undefined,
  stackName: 'Footfall',
  alarmEmail: undefined,
  alarmTopicArn: undefined,
  appDomain: undefined,
  appCertificateArn: undefined,
  monthlyBudgetUsd: undefined,
  mcpOrigins: [],
  reportSender: undefined,
  filteredReports: true,
} as const satisfies FootfallConfig;

/** Retention values CloudWatch Logs accepts (`aws-logs` `RetentionDays`). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/** `true`/`false` as JSON booleans or the strings the CLI passes. */
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
/** A whole number, as a JSON number or a decimal string. */
const whole = z
  .union([z.number(), z.string().regex(/^\d+$/, 'a whole number').transform(Number)])
  .pipe(z.number().int());

const schema = z.object({
  app: flag.default(CONFIG_DEFAULTS.app),
  shards: z.union([z.literal('on-demand'), whole.pipe(z.number().min(1).max(500))]).default(CONFIG_DEFAULTS.shards),
  drainStream: flag.default(CONFIG_DEFAULTS.drainStream),
  rawRetentionDays: whole.pipe(z.number().min(0)).default(CONFIG_DEFAULTS.rawRetentionDays),
  deletionProtection: flag.default(CONFIG_DEFAULTS.deletionProtection),
  throttleRate: whole.pipe(z.number().min(1)).default(CONFIG_DEFAULTS.throttleRate),
  throttleBurst: whole.pipe(z.number().min(1).max(5000)).default(CONFIG_DEFAULTS.throttleBurst),
  logRetentionDays: whole
    .refine((v) => (LOG_RETENTION_DAYS as readonly number[]).includes(v), `one of ${LOG_RETENTION_DAYS.join(', ')}`)
    .default(CONFIG_DEFAULTS.logRetentionDays),
  iteratorAgeAlarmSeconds: whole.pipe(z.number().min(1)).default(CONFIG_DEFAULTS.iteratorAgeAlarmSeconds),
  geoDatabase: z
    .string()
    .trim()
    .regex(/\.mmdb$/, 'a path to a .mmdb file')
    .optional(),
  hotPathTracing: flag.default(CONFIG_DEFAULTS.hotPathTracing),
  filteredReports: flag.default(CONFIG_DEFAULTS.filteredReports),
  pointInTimeRecovery: flag.default(CONFIG_DEFAULTS.pointInTimeRecovery),
  legacySecretsKey: flag.default(CONFIG_DEFAULTS.legacySecretsKey),
  tableClass: z.enum(['standard', 'standard-ia']).default(CONFIG_DEFAULTS.tableClass),
  hotPathConcurrency: whole.pipe(z.number().min(1)).optional(),
  stackName: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]{0,39}$/, 'a letter, then letters, digits or -, at most 40 characters')
    .default(CONFIG_DEFAULTS.stackName),
  alarmEmail: z.email().optional(),
  alarmTopicArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'an SNS topic ARN')
    .optional(),
  appDomain: z
    .string()
    .toLowerCase()
    .regex(
      /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
      'a host name such as analytics.example.com',
    )
    .optional(),
  appCertificateArn: z
    .string()
    .regex(
      /^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[0-9a-f-]{36}$/,
      'an ACM certificate ARN in us-east-1 (CloudFront reads certificates from that region only)',
    )
    .optional(),
  monthlyBudgetUsd: whole.pipe(z.number().min(1)).optional(),
  mcpOrigins: z
    .union([z.array(z.string()), z.string().transform((v) => v.split(','))])
    .transform((list) => list.map((o) => o.trim()).filter((o) => o !== ''))
    .pipe(
      z.array(
        z
          .url({ protocol: /^https?$/ })
          .refine((o) => new URL(o).origin === o.replace(/\/$/, ''), 'an origin: scheme://host[:port], no path'),
      ),
    )
    .default([...CONFIG_DEFAULTS.mcpOrigins]),
  reportSender: z.email('an email address verified in SES, such as reports@example.com').toLowerCase().optional(),
});

/** The context keys this stack reads. */
export const CONFIG_KEYS = Object.keys(schema.shape) as Array<keyof FootfallConfig>;

/**
 * Parses raw context values (missing keys take their defaults).
 * @throws Error naming every invalid key
 */
export function parseConfig(raw: Partial<Record<keyof FootfallConfig, unknown>>): FootfallConfig {
  const input = Object.fromEntries(CONFIG_KEYS.map((key) => [key, raw[key] === null ? undefined : raw[key]]));
  const result = schema.superRefine(crossChecks).safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid CDK context: ${problems.join('; ')}`);
  }
  const {
    geoDatabase,
    hotPathConcurrency,
    alarmEmail,
    alarmTopicArn,
    appDomain,
    appCertificateArn,
    monthlyBudgetUsd,
    reportSender,
  } = result.data;
  return {
    ...result.data,
    geoDatabase,
    hotPathConcurrency,
    alarmEmail,
    alarmTopicArn,
    appDomain,
    appCertificateArn,
    monthlyBudgetUsd,
    reportSender,
  };
}

/** Rules between keys: what a key needs from the others. */
function crossChecks(config: z.output<typeof schema>, ctx: z.RefinementCtx): void {
  const needs: Array<[keyof FootfallConfig, boolean, string]> = [
    ['appDomain', config.appDomain === undefined || config.app, 'needs app mode (-c app=true)'],
    ['reportSender', config.reportSender === undefined || config.app, 'needs app mode (-c app=true)'],
    ['appCertificateArn', config.appCertificateArn === undefined || config.appDomain !== undefined, 'needs appDomain'],
    [
      'monthlyBudgetUsd',
      config.monthlyBudgetUsd === undefined || config.alarmEmail !== undefined || config.alarmTopicArn !== undefined,
      'needs alarmEmail or alarmTopicArn to send its alerts to',
    ],
  ];
  for (const [key, ok, message] of needs) if (!ok) ctx.addIssue({ code: 'custom', path: [key], message });
}

/** Reads the configuration from the CDK context of `scope` (`cdk.json`, `-c key=value`). */
export function readConfig(scope: Construct): FootfallConfig {
  return parseConfig(Object.fromEntries(CONFIG_KEYS.map((key) => [key, scope.node.tryGetContext(key)])));
}
