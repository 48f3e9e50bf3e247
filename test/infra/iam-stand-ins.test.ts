import { afterEach, describe, expect, it, vi } from 'vitest';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  demand,
  demandArchiveBatch,
  demandArchiveWrite,
  functionRawObjects,
  functionSecretBox,
  functionArchiveDelivery,
  functionFilteredInvoker,
  functionFilteredVisits,
  functionStream,
  functionVisitTable,
} from '../../local/iam/stand-ins.js';
import { LOCAL_ARNS } from '../../local/iam/authorizer.js';
import { AccessDeniedException, functionConnection } from '../../local/iam/partition-guard.js';
import type { DynamoConnection } from '../../lambdas/adapters/dynamo/client.js';
import type { FilteredVisits, SecretBox, VisitTableStore } from '../../lambdas/ports.js';

const box: SecretBox = { seal: async (p) => `sealed:${p}`, open: async (s) => s.slice(7) };
const context = { domain: 'shop.test', provider: 'stripe' } as unknown as Parameters<SecretBox['seal']>[1];

describe("the local stand-ins ask each function's synthesized policy (local/iam/policies.json)", () => {
  it('the secret box: the app seals (the public key), the webhook opens (a private key), nothing else', async () => {
    expect(await functionSecretBox(box, 'app').seal('s', context)).toBe('sealed:s');
    expect(await functionSecretBox(box, 'webhook').open('sealed:s', context)).toBe('s');
    await expect(functionSecretBox(box, 'webhook').seal('s', context)).rejects.toThrow(AccessDeniedException);
    await expect(functionSecretBox(box, 'app').open('sealed:s', context)).rejects.toThrow(AccessDeniedException);
    await expect(functionSecretBox(box, 'report').open('sealed:s', context)).rejects.toThrow(/ssm:GetParameter/);
  });

  it('the deliveries: the event function puts to the ingest delivery, the sessionizer reads raw objects and puts to the archive delivery, not the other way round', async () => {
    const put = vi.fn(async () => undefined);
    await functionStream({ put }, 'event').put([]);
    expect(put).toHaveBeenCalledOnce();
    await expect(functionStream({ put }, 'sessionize').put([])).rejects.toThrow(/firehose:PutRecordBatch/);
    // The archive is fed by the sessionizer, not by the event function (docs/ingestion.md, "Archive packed").
    await functionArchiveDelivery({ put }, 'sessionize').put([]);
    expect(put).toHaveBeenCalledTimes(2);
    await expect(functionArchiveDelivery({ put }, 'event').put([])).rejects.toThrow(/firehose:PutRecordBatch/);
    const objects = { get: vi.fn(async () => Buffer.from('')), listSince: vi.fn(async () => []) };
    await functionRawObjects(objects, 'sessionize').get('raw/2026/11/27/01/ingest-1-2');
    await functionRawObjects(objects, 'sessionize').listSince(0);
    expect(objects.get).toHaveBeenCalledOnce();
    expect(objects.listSince).toHaveBeenCalledOnce();
    await expect(functionRawObjects(objects, 'event').get('raw/2026/11/27/01/ingest-1-2')).rejects.toThrow(
      /s3:GetObject/,
    );
    await expect(functionRawObjects(objects, 'report').listSince(0)).rejects.toThrow(AccessDeniedException);
    // Only raw/: the archive's Parquet objects are not the sessionizer's to read.
    await expect(functionRawObjects(objects, 'sessionize').get('events/site=a.test/dt=2026-11-27/x')).rejects.toThrow();
  });
});

describe('the visit table of filtered reports (local/iam/policies.json)', () => {
  const range = { from: '2026-04-01', to: '2026-04-09' };
  const filter = ['is', 'visit:channel', ['Search']] as unknown as Parameters<FilteredVisits['totals']>[1];

  it('the operations function writes and drops it; the report function may not', async () => {
    const writeMonth = vi.fn(async () => undefined);
    const dropSite = vi.fn(async () => undefined);
    const table = { writeMonth, dropSite } as unknown as VisitTableStore;
    await functionVisitTable(table, 'operations').writeMonth('shop.test', '2026-04', []);
    await functionVisitTable(table, 'operations').dropSite('shop.test');
    expect(writeMonth).toHaveBeenCalledOnce();
    expect(dropSite).toHaveBeenCalledOnce();
    await expect(functionVisitTable(table, 'report').writeMonth('shop.test', '2026-04', [])).rejects.toThrow(
      AccessDeniedException,
    );
  });

  it('the filtered function reads it; the report, MCP and scheduled functions may not', async () => {
    const totals = vi.fn(async () => ({}));
    const engine = { totals } as unknown as FilteredVisits;
    await functionFilteredVisits(engine, 'filtered').totals('shop.test', filter, range);
    expect(totals).toHaveBeenCalledTimes(1);
    for (const name of ['report', 'mcp', 'scheduled'] as const)
      await expect(functionFilteredVisits(engine, name).totals('shop.test', filter, range), name).rejects.toThrow(
        /s3:ListBucket/,
      );
  });

  it('the report and MCP functions invoke the filtered function, which reads it; the scheduled function may not invoke it', async () => {
    const totals = vi.fn(async () => ({}));
    const engine = { totals } as unknown as FilteredVisits;
    await functionFilteredInvoker(engine, 'report').totals('shop.test', filter, range);
    await functionFilteredInvoker(engine, 'mcp').totals('shop.test', filter, range);
    expect(totals).toHaveBeenCalledTimes(2);
    await expect(functionFilteredInvoker(engine, 'scheduled').totals('shop.test', filter, range)).rejects.toThrow(
      /lambda:InvokeFunction/,
    );
  });
});

describe("the local archive writer asks Firehose's delivery roles (local/iam/policies.json)", () => {
  it('reads the Glue table and writes objects of the archive bucket, with the role the stack gives', () => {
    expect(() => demandArchiveBatch()).not.toThrow();
    expect(() => demandArchiveWrite('events/site=shop.test/dt=2026-11-20/part-1.parquet')).not.toThrow();
    // The archive is written by the delivery's role, not by the event function that puts to it.
    expect(() => demand('event', 's3:PutObject', `${LOCAL_ARNS.eventsBucket}/events/x`)).toThrow(/s3:PutObject/);
    // Another bucket, another Glue table, or a function's role: denied.
    expect(() => demand('archiveDestination', 's3:PutObject', 'arn:aws:s3:::another-bucket/events/x')).toThrow(
      AccessDeniedException,
    );
    const otherTable = LOCAL_ARNS.glueTable[2].replace(/events$/, 'other');
    expect(() => demand('archiveDestination', 'glue:GetTableVersions', otherTable)).toThrow(AccessDeniedException);
    expect(() => demand('sessionize', 's3:PutObject', `${LOCAL_ARNS.eventsBucket}/events/x`)).toThrow(
      AccessDeniedException,
    );
  });
});

describe('FOOTFALL_IAM=off', () => {
  afterEach(() => vi.unstubAllEnvs());
  const sent: unknown[] = [];
  const conn = { table: 't', doc: { send: async (c: unknown) => sent.push(c) } } as unknown as DynamoConnection;

  it('turns the evaluation off, and only it', async () => {
    const put = new PutCommand({ TableName: 't', Item: { pk: 'SALT', sk: 'd' } });
    await expect(functionConnection(conn, 'report').doc.send(put)).rejects.toThrow(AccessDeniedException);
    vi.stubEnv('FOOTFALL_IAM', 'off');
    await functionConnection(conn, 'report').doc.send(put);
    expect(sent).toHaveLength(1);
    const unknown = new GetCommand({ TableName: 't', Key: { pk: 'NOPE#x', sk: 's' } });
    await expect(functionConnection(conn, 'report').doc.send(unknown)).rejects.toThrow(/no item type/);
    await expect(functionSecretBox(box, 'report').open('sealed:s', context)).resolves.toBe('s');
  });
});
