import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { CopyObjectCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ERASURE_STAGING_PREFIX, S3ArchiveEraser } from '../../lambdas/adapters/s3-archive-eraser.js';
import { glueColumns } from '../../lambdas/domain/archive-schema.js';

/**
 * `footfall erase --aws`: the S3 archive rewritten through Athena (`docs/security.md`, "Erasing a
 * person"), against aws-sdk-client-mock clients over an in-memory bucket. Athena's answers stand for
 * what its count query finds; its UNLOAD writes one object under the TO location, as Athena does.
 */

const BUCKET = 'footfall-events';
const MIXED = 'events/site=example.com/dt=2026-11-20/part-1.parquet';
const ONLY_THEIRS = 'events/site=example.com/dt=2026-11-21/part-2.parquet';
const CLEAN = 'events/site=example.com/dt=2026-11-21/part-3.parquet';
const OTHER_SITE = 'events/site=other.com/dt=2026-11-20/part-1.parquet';
const LEFTOVER = `${ERASURE_STAGING_PREFIX}site=example.com/crashed/000.parquet`;

let objects: Map<string, string>;
const athena = mockClient(AthenaClient);
const s3 = mockClient(S3Client);
// The class mocks stub every client's `send`: later files sharing this process need the real one back.
afterAll(() => {
  athena.restore();
  s3.restore();
});
/** The rows the count query answers: `"$path"`, the person's events, all events. */
let found: string[][];

const eraser = () =>
  new S3ArchiveEraser(
    new S3Client({}),
    { bucket: BUCKET, prefix: 'events/' },
    {
      client: new AthenaClient({}),
      options: { workGroup: 'footfall', database: 'footfall', pollMs: 1, sleep: async () => undefined },
    },
  );
const queries = () => athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input.QueryString ?? '');

beforeEach(() => {
  objects = new Map([
    [MIXED, 'mixed'],
    [ONLY_THEIRS, 'theirs'],
    [CLEAN, 'clean'],
    [OTHER_SITE, 'other'],
    [LEFTOVER, 'leftover'],
  ]);
  found = [
    [`s3://${BUCKET}/${MIXED}`, '2', '5'],
    [`s3://${BUCKET}/${ONLY_THEIRS}`, '3', '3'],
  ];
  athena.reset();
  s3.reset();
  let n = 0;
  athena.on(StartQueryExecutionCommand).callsFake((input: { QueryString: string }) => {
    const id = `q${++n}`;
    const to = /\) TO 's3:\/\/[^/]+\/([^']+)'/.exec(input.QueryString)?.[1];
    const from = /"\$path" = '([^']+)'/.exec(input.QueryString)?.[1];
    if (to && from) objects.set(`${to}000.parquet`, `rewritten ${from.slice(from.lastIndexOf('/') + 1)}`);
    return { QueryExecutionId: id };
  });
  athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'SUCCEEDED' } } });
  athena.on(GetQueryResultsCommand).callsFake(() => ({
    ResultSet: {
      ResultSetMetadata: { ColumnInfo: ['$path', '_col1', '_col2'].map((Name) => ({ Name })) },
      Rows: found.map((r) => ({ Data: r.map((VarCharValue) => ({ VarCharValue })) })),
    },
  }));
  s3.on(ListObjectsV2Command).callsFake((input: { Prefix: string }) => ({
    Contents: [...objects.keys()].filter((k) => k.startsWith(input.Prefix)).map((Key) => ({ Key })),
  }));
  s3.on(CopyObjectCommand).callsFake((input: { Key: string; CopySource: string }) => {
    const from = decodeURIComponent(input.CopySource.slice(`${BUCKET}/`.length));
    const body = objects.get(from);
    if (body === undefined) throw new Error(`NoSuchKey ${from}`);
    objects.set(input.Key, body);
    return {};
  });
  s3.on(DeleteObjectsCommand).callsFake((input: { Delete: { Objects: Array<{ Key: string }> } }) => {
    for (const { Key } of input.Delete.Objects) objects.delete(Key);
    return {};
  });
});

describe('S3ArchiveEraser.eraseVisitors (Athena and S3, aws-sdk-client-mock)', () => {
  it("rewrites the objects holding the person's events without them, deletes those holding only theirs, and touches nothing else", async () => {
    const result = await eraser().eraseVisitors('example.com', ['v-1', "o'brien"]);
    expect(result).toEqual({ files: 2, events: 5 });
    expect(Object.fromEntries(objects)).toEqual({
      [MIXED]: 'rewritten part-1.parquet',
      [CLEAN]: 'clean',
      [OTHER_SITE]: 'other',
    });
  });

  it("finds them with one query over the site's partitions, and unloads only the file columns of the one object, the person excluded", async () => {
    await eraser().eraseVisitors('example.com', ['v-1', "o'brien"]);
    const [count, unload, ...rest] = queries();
    expect(rest).toEqual([]);
    const theirs = `visitor_id IN ('v-1', 'o''brien')`;
    expect(count).toBe(
      `SELECT "$path", count_if(${theirs}), count(*) FROM "footfall"."events" WHERE site = 'example.com' GROUP BY 1 HAVING count_if(${theirs}) > 0`,
    );
    const columns = glueColumns().map((c) => `"${c.name}"`);
    expect(columns).not.toContain('"site"');
    expect(unload).toMatch(
      new RegExp(
        `^UNLOAD \\(SELECT ${columns.join(', ')} FROM "footfall"."events" WHERE site = 'example.com' AND "\\$path" = 's3://${BUCKET}/${MIXED.replaceAll('.', '\\.')}' AND \\(visitor_id IS NULL OR NOT ${theirs.replace(/[()]/g, '\\$&')}\\)\\) TO 's3://${BUCKET}/${ERASURE_STAGING_PREFIX}site=example\\.com/[0-9a-f-]{36}/' WITH \\(format = 'PARQUET', compression = 'SNAPPY'\\)$`,
      ),
    );
    expect(athena.commandCalls(StartQueryExecutionCommand)[0]?.args[0].input.WorkGroup).toBe('footfall');
  });

  it('empties the staging prefix a crashed run left, and a second run finds nothing to do', async () => {
    await eraser().eraseVisitors('example.com', ['v-1']);
    expect([...objects.keys()].filter((k) => k.startsWith(ERASURE_STAGING_PREFIX))).toEqual([]);
    found = [];
    const before = Object.fromEntries(objects);
    expect(await eraser().eraseVisitors('example.com', ['v-1'])).toEqual({ files: 0, events: 0 });
    expect(Object.fromEntries(objects)).toEqual(before);
  });

  it('refuses an object Athena names outside the site, before changing anything', async () => {
    found = [[`s3://${BUCKET}/${OTHER_SITE}`, '1', '4'], ...found];
    await expect(eraser().eraseVisitors('example.com', ['v-1'])).rejects.toThrow(
      /outside s3:\/\/footfall-events\/events\/site=example.com\//,
    );
    expect(objects.get(OTHER_SITE)).toBe('other');
    expect(objects.get(MIXED)).toBe('mixed');
  });

  it('without visitors runs no query, and without the Athena workgroup refuses', async () => {
    expect(await eraser().eraseVisitors('example.com', [])).toEqual({ files: 0, events: 0 });
    expect(queries()).toEqual([]);
    const s3Only = new S3ArchiveEraser(new S3Client({}), { bucket: BUCKET, prefix: 'events/' });
    await expect(s3Only.eraseVisitors('example.com', ['v-1'])).rejects.toThrow(/Athena workgroup/);
    await expect(eraser().eraseVisitors('../x', ['v-1'])).rejects.toThrow();
  });
});
