import { afterAll, beforeAll, vi } from 'vitest';
import { AthenaClient } from '@aws-sdk/client-athena';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { FirehoseClient } from '@aws-sdk/client-firehose';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Run before every file of the `shared` project (`vitest.config.ts`), whose files share their worker's process:
 * a file that leaves process state behind fails here, by name, instead of a later file failing for no reason of
 * its own (`docs/reliability.md`). What it checks is what shared files change: a class mocked with
 * aws-sdk-client-mock (`mockClient(S3Client)` stubs `send` of every client of the class until `restore()`), fake
 * timers, and environment variables. Each is put back before the next file, so one leak fails one file.
 */
const MOCKABLE_CLIENTS = {
  AthenaClient,
  CloudFormationClient,
  DynamoDBDocumentClient,
  FirehoseClient,
  KMSClient,
  S3Client,
  SESv2Client,
  SSMClient,
} as const;

let env: Map<string, string | undefined>;
beforeAll(() => {
  env = new Map(Object.entries(process.env));
});

afterAll(() => {
  const left: string[] = [];
  for (const [name, client] of Object.entries(MOCKABLE_CLIENTS)) {
    // A class mock is an own `send` on the prototype; the real one is inherited from the SDK's base client.
    if (!Object.hasOwn(client.prototype, 'send')) continue;
    (client.prototype.send as { restore?: () => void }).restore?.();
    left.push(`${name} mocked (restore its mockClient in afterAll)`);
  }
  if (vi.isFakeTimers()) {
    vi.useRealTimers();
    left.push('fake timers (vi.useRealTimers in afterEach)');
  }
  const keys = new Set([...env.keys(), ...Object.keys(process.env)]);
  for (const key of keys) {
    if (process.env[key] === env.get(key)) continue;
    left.push(`environment variable ${key} changed (restore it in afterAll)`);
    if (env.get(key) === undefined) delete process.env[key];
    else process.env[key] = env.get(key);
  }
  if (left.length > 0) throw new Error(`this file left state for the files after it: ${left.join('; ')}`);
});
