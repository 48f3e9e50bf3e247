import { appendFileSync } from 'node:fs';
import { evaluate, type AuthorizationRequest } from './evaluate.js';
import { loadPolicies, type FunctionPolicies, type PolicyStatement } from './policies.js';

/** The local twin's account, region and partition in the ARNs it evaluates. */
const LOCAL = { 'AWS::Region': 'local', 'AWS::AccountId': '000000000000', 'AWS::Partition': 'aws' } as const;

/** The ARN IAM would see for the local table `name`. */
export const tableArn = (name: string): string =>
  `arn:${LOCAL['AWS::Partition']}:dynamodb:${LOCAL['AWS::Region']}:${LOCAL['AWS::AccountId']}:table/${name}`;

/** The local stand-ins' ARNs (the delivery streams and the events bucket, the secret box's key). */
export const LOCAL_ARNS = {
  ingestStream: 'arn:aws:firehose:local:000000000000:deliverystream/ingest',
  archiveStream: 'arn:aws:firehose:local:000000000000:deliverystream/archive',
  eventsBucket: 'arn:aws:s3:::local-events',
  secretsKey: 'arn:aws:kms:local:000000000000:key/local-secrets',
} as const;

/** The ARNs of the twin's stand-ins that `policies.json` names by placeholder (`DynamoDB::Table/Table`). */
const localResource = (placeholder: string): string | undefined =>
  ({
    'DynamoDB::Table/Table': tableArn('*'),
    'KinesisFirehose::DeliveryStream/IngestDelivery': LOCAL_ARNS.ingestStream,
    'KinesisFirehose::DeliveryStream/ArchiveDirectDelivery': LOCAL_ARNS.archiveStream,
    'S3::Bucket/ArchiveEvents': LOCAL_ARNS.eventsBucket,
    'KMS::Key/SecretsKey': LOCAL_ARNS.secretsKey,
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
 * The decision function of function `name`'s policy: whether IAM allows a request, cached by
 * request (the cache is cleared past 50,000 decisions, so memory stays bounded in a long demo).
 * `partition` is the registry pattern the statistics count the request under.
 */
export function authorizer(name: string): (request: AuthorizationRequest, partition?: string) => boolean {
  policies ??= loadPolicies();
  const statements = policies[name];
  if (!statements) throw new Error(`no synthesized policy for function ${name}: run npm run iam:policies`);
  const resolved = resolveStatements(statements);
  return (request, partition = '*') => {
    iamStats.requests++;
    iamStats.triples.add(`${name} ${request.action} ${partition}`);
    const key = `${name}\0${request.action}\0${request.resource}\0${JSON.stringify(request.context)}`;
    let allowed = decisions.get(key);
    if (allowed === undefined) {
      iamStats.evaluations++;
      allowed = evaluate(resolved, request);
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
