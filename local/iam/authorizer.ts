import { appendFileSync } from 'node:fs';
import { evaluate, type AuthorizationRequest } from './evaluate.js';
import { secretsParameterNames } from '../../lambdas/adapters/secrets/parameter-name.js';
import { CONFIG_DEFAULTS } from '../../lib/config.js';
import { reportConfigurationSetName } from '../../lib/report-mail.js';
import { loadPolicies, type FunctionPolicies, type PolicyStatement } from './policies.js';

/** The local twin's account, region and partition in the ARNs it evaluates. */
const LOCAL = { 'AWS::Region': 'local', 'AWS::AccountId': '000000000000', 'AWS::Partition': 'aws' } as const;

/** The ARN IAM would see for the local table `name`. */
export const tableArn = (name: string): string =>
  `arn:${LOCAL['AWS::Partition']}:dynamodb:${LOCAL['AWS::Region']}:${LOCAL['AWS::AccountId']}:table/${name}`;

const SECRETS = secretsParameterNames(CONFIG_DEFAULTS.stackName);

/** The Glue table of the archive, as the stack names it (`lib/archive.ts`: database `footfall`, table `events`). */
const GLUE = { database: 'footfall', table: 'events' } as const;
const glueArn = (resource: string) =>
  `arn:${LOCAL['AWS::Partition']}:glue:${LOCAL['AWS::Region']}:${LOCAL['AWS::AccountId']}:${resource}`;

/**
 * The local stand-ins' ARNs: the two delivery streams, the events bucket (raw objects and the
 * archive), the secrets key pair's parameters as the default stack names them, the archive's Glue table.
 */
export const LOCAL_ARNS = {
  ingestStream: 'arn:aws:firehose:local:000000000000:deliverystream/ingest',
  archiveStream: 'arn:aws:firehose:local:000000000000:deliverystream/archive',
  eventsBucket: 'arn:aws:s3:::local-events',
  /** The Athena results bucket: the local archive reader writes no results, the operations function's query asks for it. */
  resultsBucket: 'arn:aws:s3:::local-athena-results',
  /** The stack's Athena workgroup (named after the stack, as the Glue database). */
  workGroup: `arn:aws:athena:local:000000000000:workgroup/${GLUE.database}`,
  /** The imports function, which the app invokes and which invokes itself (`spec.invokes`, lib/functions.ts). */
  importsFunction: 'arn:aws:lambda:local:000000000000:function:imports',
  /** The filtered function, which the report and MCP functions invoke (`spec.invokes`, lib/functions.ts). */
  filteredFunction: 'arn:aws:lambda:local:000000000000:function:filtered',
  /** The operations function, which the report and MCP functions invoke with a look at an idle site (`spec.invokesWithFilters`). */
  operationsFunction: 'arn:aws:lambda:local:000000000000:function:operations',
  secretsPublicKey: `arn:aws:ssm:local:000000000000:parameter${SECRETS.publicKey}`,
  secretsPrivateKey: `arn:aws:ssm:local:000000000000:parameter${SECRETS.privateKey('local')}`,
  /** What IAM checks for a read of the archive table: the catalog, the database and the table (AWS Glue Developer Guide, "Specifying AWS Glue resource ARNs"). */
  glueTable: [
    glueArn('catalog'),
    glueArn(`database/${GLUE.database}`),
    glueArn(`table/${GLUE.database}/${GLUE.table}`),
  ],
} as const;

/**
 * The sender address of email reports on the local twin: `npm run iam:policies` synthesizes the
 * policies with it (`-c reportSender=`), so the local SES stand-in (`local/outbox.ts`) is allowed it.
 */
export const LOCAL_REPORT_SENDER = 'reports@footfall.localhost';

const sesArn = (resource: string) => `arn:aws:ses:${LOCAL['AWS::Region']}:${LOCAL['AWS::AccountId']}:${resource}`;

/** The SES identities IAM checks for a send from `address` on the twin: the address's, then its domain's. */
export const sesIdentityArns = (address: string): [string, string] => [
  sesArn(`identity/${address}`),
  sesArn(`identity/${address.split('@')[1] ?? ''}`),
];

/** The ARN of the report mails' configuration set as the default stack names it (`lib/report-mail.ts`). */
export const LOCAL_REPORT_CONFIGURATION_SET = sesArn(
  `configuration-set/${reportConfigurationSetName(CONFIG_DEFAULTS.stackName)}`,
);

/** The ARN of the archive's object `key` (`events/site=…/dt=…/part-….parquet`). */
export const archiveObjectArn = (key: string): string => `${LOCAL_ARNS.eventsBucket}/${key}`;

/** The ARNs of the twin's stand-ins that `policies.json` names by placeholder (`DynamoDB::Table/Table`). */
const localResource = (placeholder: string): string | undefined =>
  ({
    'DynamoDB::Table/Table': tableArn('*'),
    'KinesisFirehose::DeliveryStream/IngestDelivery': LOCAL_ARNS.ingestStream,
    'KinesisFirehose::DeliveryStream/ArchiveDirectDelivery': LOCAL_ARNS.archiveStream,
    'S3::Bucket/ArchiveEvents': LOCAL_ARNS.eventsBucket,
    'Lambda::Function/importsFunction': LOCAL_ARNS.importsFunction,
    'Lambda::Function/filteredFunction': LOCAL_ARNS.filteredFunction,
    'Lambda::Function/operationsFunction': LOCAL_ARNS.operationsFunction,
    'S3::Bucket/ArchiveAthenaResults': LOCAL_ARNS.resultsBucket,
    'Athena::WorkGroup/ArchiveWorkGroup.Ref': GLUE.database,
    'Glue::Table/ArchiveTable.Ref': GLUE.table,
  })[placeholder] ?? (placeholder in LOCAL ? LOCAL[placeholder as keyof typeof LOCAL] : undefined);

/**
 * A function's statements with each placeholder replaced by the local resource's ARN (the table's
 * with `*` for its name: the twin's table names differ per test); a placeholder with no local
 * stand-in stays, so its statement never matches a local request.
 */
export function resolveStatements(statements: readonly PolicyStatement[]): PolicyStatement[] {
  return statements.map((s) => ({
    ...s,
    Resource: s.Resource.map((r) => r.replace(/\$\{([^}]+)\}/g, (whole, p: string) => localResource(p) ?? whole)),
  }));
}

/** What the twin's IAM evaluated in this process: requests, denials, and distinct (function, action, partition) triples. */
export const iamStats = { requests: 0, denials: 0, evaluations: 0, triples: new Set<string>() };

let policies: FunctionPolicies | undefined;
const CACHE_LIMIT = 50_000;
const decisions = new Map<string, boolean>();

/**
 * Replaces the policies every authorizer made from now on evaluates (`undefined`: the checked-in
 * `policies.json` again) and forgets the cached decisions: tests that take a grant out.
 */
export function usePolicies(replacement: FunctionPolicies | undefined): void {
  policies = replacement;
  decisions.clear();
}

/**
 * The decision function of function `name`'s policy: whether IAM allows a request, cached by
 * request (the cache is cleared past 50,000 decisions, so memory stays bounded in a long demo).
 * `partition` is the registry pattern the statistics count the request under.
 */
export function authorizer(name: string): (request: AuthorizationRequest, partition?: string) => boolean {
  const statementsOf = () => {
    policies ??= loadPolicies();
    const statements = policies[name];
    if (!statements) throw new Error(`no synthesized policy for function ${name}: run npm run iam:policies`);
    return statements;
  };
  // Resolved once per policies in use (`usePolicies` may replace them while the authorizer lives).
  let resolved: { from: PolicyStatement[]; statements: PolicyStatement[] } | undefined;
  statementsOf();
  return (request, partition = '*') => {
    iamStats.requests++;
    iamStats.triples.add(`${name} ${request.action} ${partition}`);
    const key = `${name}\0${request.action}\0${request.resource}\0${JSON.stringify(request.context)}`;
    let allowed = decisions.get(key);
    if (allowed === undefined) {
      iamStats.evaluations++;
      const statements = statementsOf();
      if (resolved?.from !== statements) resolved = { from: statements, statements: resolveStatements(statements) };
      allowed = evaluate(resolved.statements, request);
      if (decisions.size >= CACHE_LIMIT) decisions.clear();
      decisions.set(key, allowed);
    }
    if (!allowed) iamStats.denials++;
    return allowed;
  };
}

// FOOTFALL_IAM_STATS=<file>: each process appends its counts at exit (how the suites' figures in docs/security.md were counted).
if (process.env.FOOTFALL_IAM_STATS) {
  const file = process.env.FOOTFALL_IAM_STATS;
  process.on('exit', () => {
    if (iamStats.requests === 0) return;
    appendFileSync(
      file,
      `${JSON.stringify({ requests: iamStats.requests, denials: iamStats.denials, evaluations: iamStats.evaluations, triples: [...iamStats.triples] })}\n`,
    );
  });
}
