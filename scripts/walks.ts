/**
 * `node bin/run-ts.js scripts/walks.ts`: the webhook walk of `docs/architecture.md` ("Request walks"),
 * counted from the running code rather than by hand. A signed Stripe `payment_intent.succeeded` (a new
 * payment with a customer and a visitor who has a visit) goes through the webhook handler on an
 * in-memory table; at each DynamoDB request the call stack is taken (async frames included). The
 * walk is the path a reader follows from one request's stack to the next: back up to the frame
 * both share, then down the next; the files are those of our modules in handlers, services, wiring
 * and adapters (domain functions and the adapter helpers in `LEAVES` are left out, as the page says).
 * Prints the files in first-visit order, how many, and how many times the walk comes back into a
 * file it had already left.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stripe } from 'stripe';
import type { FirehoseClient } from '@aws-sdk/client-firehose';
import type { DynamoConnection } from '../lambdas/adapters/dynamo/client.js';
import { DynamoKeyStore } from '../lambdas/adapters/dynamo/key-store.js';
import { FirehoseEventStream } from '../lambdas/adapters/firehose-stream.js';
import { createEventHandler } from '../lambdas/handlers/event.js';
import { createReportHandler } from '../lambdas/handlers/report.js';
import { dynamoEventDeps } from '../lambdas/wiring/event-deps.js';
import { dynamoReportDeps } from '../lambdas/wiring/report-deps.js';
import { httpApiEvent, localContext } from '../local/api-gateway.js';
import { DynamoConfigStore } from '../lambdas/adapters/dynamo/config-store.js';
import { DynamoVisitStore } from '../lambdas/adapters/dynamo/visit-store.js';
import { LocalSecretBox } from '../lambdas/adapters/secrets/local-secret-box.js';
import { buildVisits, visitEventOf } from '../lambdas/domain/visit.js';
import { createWebhookHandler } from '../lambdas/handlers/webhook.js';
import { createTelemetry } from '../lambdas/observability/telemetry.js';
import { dynamoWebhookDeps } from '../lambdas/wiring/webhook-deps.js';
import { memoryTable } from '../test/support/dynamo.js';
import { trackedEvent } from '../test/support/events.js';
import { fixture } from '../test/payments/fixture.js';

const SECRET = 'whsec_walks';
const VISITOR = 'k3x9q2m7p1w8r4t6';
const NOW = Date.UTC(2026, 2, 2, 10, 20);

/** Adapter helpers a reader treats as leaves, like the domain: connection, keys, batching, item codecs. */
const LEAVES = new Set([
  'adapters/dynamo/client',
  'adapters/dynamo/table',
  'adapters/dynamo/items',
  'adapters/dynamo/batch',
  'adapters/dynamo/capacity-meter',
  'adapters/dynamo/payments/payment-items',
]);

/** Our module of a stack frame (`handlers/webhook`, `adapters/dynamo/...`), or null for a leaf or a library. */
function moduleOf(frame: string): string | null {
  const m = /\/lambdas\/((?:entry|wiring|handlers|services|adapters)\/[^:]+)\.ts:/.exec(frame);
  if (!m || LEAVES.has(m[1] as string)) return null;
  return m[1] as string;
}

/** A stack as frames outermost first: each our module's function, identified without its line. */
function framesOf(stack: string): Array<{ key: string; file: string }> {
  const frames: Array<{ key: string; file: string }> = [];
  for (const line of stack.split('\n').slice(1)) {
    const file = moduleOf(line);
    if (!file) continue;
    const fn = /at (?:async )?([^\s(]+) \(/.exec(line)?.[1] ?? '<anonymous>';
    frames.push({ key: `${fn}@${file}`, file });
  }
  return frames.reverse();
}

/** The files the walk passes through, in order, from the stacks of successive requests. */
export function walkOf(stacks: ReadonlyArray<ReadonlyArray<{ key: string; file: string }>>): string[] {
  const path: string[] = [];
  const go = (file: string) => {
    if (path[path.length - 1] !== file) path.push(file);
  };
  let previous: ReadonlyArray<{ key: string; file: string }> = [];
  for (const stack of stacks) {
    let shared = 0;
    while (shared < previous.length && shared < stack.length && previous[shared]!.key === stack[shared]!.key) shared++;
    for (let i = previous.length - 1; i >= Math.max(shared - 1, 0); i--) go(previous[i]!.file);
    for (let i = Math.max(shared - 1, 0); i < stack.length; i++) go(stack[i]!.file);
    previous = stack;
  }
  for (let i = previous.length - 1; i >= 0; i--) go(previous[i]!.file);
  return path;
}

type Stack = Array<{ key: string; file: string }>;

/** The files of a walk, how many, and how many times it comes back into a file it had left. */
function counted(walk: readonly string[]): { files: string[]; returns: number } {
  const seen = new Set<string>();
  let returns = 0;
  for (const file of walk) {
    if (seen.has(file)) returns++;
    seen.add(file);
  }
  return { files: [...seen], returns };
}

/** Records each DynamoDB request's stack (and the request itself, for `--requests`). */
function recordRequests(conn: DynamoConnection, stacks: Stack[], requests: string[]): void {
  conn.doc.middlewareStack.add(
    (next, context) => async (args) => {
      stacks.push(framesOf(new Error().stack ?? ''));
      requests.push(`${context.commandName} ${JSON.stringify(args.input)}`);
      return next(args);
    },
    { step: 'initialize', name: 'walkStacks' },
  );
}

/** A signed Stripe `payment_intent.succeeded` of a new payment, its customer and visitor known, to its credit. */
async function webhookWalk(conn: DynamoConnection, box: LocalSecretBox, record: () => void): Promise<unknown> {
  await new DynamoConfigStore(conn, box).connectProvider('example.com', 'stripe', SECRET, new Date());
  record();
  const handler = createWebhookHandler(
    dynamoWebhookDeps(conn, { telemetry: createTelemetry('walks'), box, clock: () => NOW }),
  );
  const event = JSON.parse(fixture('stripe', 'payment_intent.succeeded.json')) as {
    data: { object: { metadata: Record<string, string> } };
  };
  event.data.object.metadata.footfall_visitor_id = VISITOR;
  const body = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: NOW / 1000 });
  return handler(
    httpApiEvent({
      method: 'POST',
      path: '/api/webhooks/stripe/example.com',
      pathParameters: { provider: 'stripe', domain: 'example.com' },
      headers: { 'stripe-signature': signature, 'content-type': 'application/json' },
      body,
    }),
    localContext('webhook'),
  );
}

/** A breakdown by channel over 30 days, with an API key. */
async function breakdownWalk(conn: DynamoConnection, _box: LocalSecretBox, record: () => void): Promise<unknown> {
  const { key } = await new DynamoKeyStore(conn).create('acme', null, new Date(NOW));
  record();
  const handler = createReportHandler({ ...createTelemetry('walks'), ...dynamoReportDeps(conn, () => NOW) });
  return handler(
    httpApiEvent({
      method: 'GET',
      path: '/api/v1/sites/example.com/breakdown/channel',
      query: 'range=30d',
      headers: { authorization: `Bearer ${key}` },
    }),
    localContext('report'),
  );
}

/** A page view posted to the event endpoint, to the stream (a Firehose client that records its sends). */
async function eventWalk(
  conn: DynamoConnection,
  _box: LocalSecretBox,
  record: () => void,
  stacks: Stack[],
): Promise<unknown> {
  record();
  const firehose = {
    send: async (command: { input: { Records?: unknown[] } }) => {
      stacks.push(framesOf(new Error().stack ?? ''));
      return { FailedPutCount: 0, RequestResponses: (command.input.Records ?? []).map(() => ({ RecordId: 'r' })) };
    },
  } as unknown as FirehoseClient;
  const handler = createEventHandler(
    dynamoEventDeps(conn, {
      telemetry: createTelemetry('walks'),
      clock: () => NOW,
      stream: new FirehoseEventStream(firehose, 'ingest'),
    }),
  );
  return handler(
    httpApiEvent({
      method: 'POST',
      path: '/api/event',
      headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0' },
      body: JSON.stringify({ n: 'pageview', u: 'https://example.com/launch', s: 'example.com' }),
      sourceIp: '203.0.113.7',
    }),
    localContext('event'),
  );
}

const WALKS = { webhook: webhookWalk, breakdown: breakdownWalk, event: eventWalk };

async function main(): Promise<void> {
  Error.stackTraceLimit = 200;
  for (const [name, walk] of Object.entries(WALKS)) {
    const dir = await mkdtemp(join(tmpdir(), 'walks-'));
    const { conn, close } = await memoryTable([{ domain: 'example.com', timezone: 'UTC' }]);
    const box = await LocalSecretBox.open(dir);
    const visit = buildVisits('example.com', VISITOR, [
      visitEventOf(
        trackedEvent({ event_id: 'e1', visitor_id: VISITOR, ts: NOW - 2 * 86_400_000, channel: 'Communities' }),
      ),
    ]);
    await new DynamoVisitStore(conn).writeVisits(visit, []);
    const stacks: Stack[] = [];
    const requests: string[] = [];
    let recording = false;
    recordRequests(conn, stacks, requests);
    const response = await walk(
      conn,
      box,
      () => {
        stacks.length = 0;
        requests.length = 0;
        recording = true;
      },
      stacks,
    );
    if (!recording) throw new Error(`${name}: nothing recorded`);
    const path = walkOf(stacks);
    const { files, returns } = counted(path);
    process.stdout.write(
      `\n## ${name}: ${(response as { statusCode?: number }).statusCode} ${String((response as { body?: string }).body).slice(0, 200)}, ${stacks.length} requests\n` +
        `walk: ${path.join(' > ')}\nfiles (${files.length}): ${files.join(', ')}\nreturns: ${returns}\n`,
    );
    // `--requests`: every request as sent, to compare two versions' requests one for one.
    if (process.argv.includes('--requests')) process.stdout.write(`${requests.join('\n')}\n`);
    await close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
