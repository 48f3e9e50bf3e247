import {
  FILTERED_VISITS_METHODS,
  VISIT_TABLE_STORE_METHODS,
  type ArchiveChanges,
  type ArchiveDelivery,
  type ArchiveEraser,
  type ArchiveObjects,
  type ArchiveReader,
  type EventStream,
  type FilteredVisits,
  type RawObjects,
  type SecretBox,
  type VisitTableStore,
} from '../../lambdas/ports.js';
import { forwardPort } from '../../lambdas/forward-port.js';
import { filteredVisitsByInvoke } from '../../lambdas/adapters/filtered-wire.js';
import { createFilteredHandler } from '../../lambdas/handlers/filtered.js';
import { TABLE_FAMILIES, VISIT_TABLE_PREFIX } from '../../lambdas/adapters/s3-table-files.js';
import { EVENTS_PREFIX } from '../../lambdas/domain/archive-schema.js';
import { ERASURE_STAGING_PREFIX } from '../../lambdas/adapters/s3-archive-eraser.js';
import { RAW_PREFIX } from '../../lambdas/adapters/s3-raw-objects.js';
import { AccessDeniedException, iamEnforced, type FunctionName } from './partition-guard.js';
import { LOCAL_ARNS, archiveObjectArn, authorizer } from './authorizer.js';
import type { STACK_ROLES } from './policies.js';

/** Whose policy a stand-in asks: a function of the registry, or a stack role the twin plays (`STACK_ROLES`). */
export type Principal = FunctionName | keyof typeof STACK_ROLES;

/**
 * Asks `name`'s synthesized policy for `action` on `resource` (an ARN of `LOCAL_ARNS`) with the
 * request's condition keys (`context`, e.g. the `s3:prefix` of a listing), for a stand-in that makes
 * no SDK call: the action and ARN its AWS adapter's call would be authorized as.
 * @throws AccessDeniedException, as AWS answers, when the policy does not allow it (never with `FOOTFALL_IAM=off`)
 */
export function demand(
  name: Principal,
  action: string,
  resource: string,
  context: Readonly<Record<string, readonly string[]>> = {},
): void {
  if (!iamEnforced()) return;
  if (!authorizer(name)({ action, resource, context }, resource))
    throw new AccessDeniedException(
      `User: arn:aws:sts::000000000000:assumed-role/${name}Role/${name} is not authorized to perform: ${action} on resource: ${resource}`,
    );
}

/**
 * The local secret box as function `name` may use it, asking for the calls `ParameterSecretBox` makes
 * in AWS: sealing reads the stack's public key (`ssm:GetParameter`) and, the first time, creates a
 * private key and the public key (`ssm:PutParameter` on both); opening reads a private key
 * (`ssm:GetParameter`). A function without the grant fails locally as it would there.
 */
export function functionSecretBox(box: SecretBox, name: FunctionName): SecretBox {
  return {
    seal: async (plaintext, context) => {
      demand(name, 'ssm:GetParameter', LOCAL_ARNS.secretsPublicKey);
      demand(name, 'ssm:PutParameter', LOCAL_ARNS.secretsPrivateKey);
      demand(name, 'ssm:PutParameter', LOCAL_ARNS.secretsPublicKey);
      return box.seal(plaintext, context);
    },
    open: async (sealed, context) => {
      demand(name, 'ssm:GetParameter', LOCAL_ARNS.secretsPrivateKey);
      return box.open(sealed, context);
    },
  };
}

/**
 * An asynchronous invocation of the imports function by function `name`, asking for
 * `lambda:InvokeFunction` on it, as `lambdaImportInvoker`'s `InvokeCommand` is authorized in AWS.
 */
export function functionImportInvoker<A extends unknown[]>(
  invoke: (...args: A) => Promise<void>,
  name: FunctionName,
): (...args: A) => Promise<void> {
  return async (...args) => {
    demand(name, 'lambda:InvokeFunction', LOCAL_ARNS.importsFunction);
    return invoke(...args);
  };
}

/**
 * An asynchronous invocation of the operations function by function `name` (a look asking for a refresh,
 * `lambdaRefreshInvoker` in AWS), asking for `lambda:InvokeFunction` on it.
 */
export function functionRefreshInvoker(
  invoke: (site: string) => Promise<void>,
  name: FunctionName,
): (site: string) => Promise<void> {
  return async (site) => {
    demand(name, 'lambda:InvokeFunction', LOCAL_ARNS.operationsFunction);
    return invoke(site);
  };
}

/**
 * The local stream as function `name` writes it: `firehose:PutRecordBatch` on the ingest delivery
 * stream, as `FirehoseEventStream` calls it (the local log stands in for it).
 */
export function functionStream(stream: EventStream, name: FunctionName): EventStream {
  return {
    put: async (events) => {
      demand(name, 'firehose:PutRecordBatch', LOCAL_ARNS.ingestStream);
      return stream.put(events);
    },
  };
}

/**
 * The archive's delivery as function `name` forwards to it: `firehose:PutRecordBatch` on the
 * archive delivery stream, as `FirehoseArchiveDelivery` calls it.
 */
export function functionArchiveDelivery(delivery: ArchiveDelivery, name: FunctionName): ArchiveDelivery {
  return {
    put: async (lines) => {
      demand(name, 'firehose:PutRecordBatch', LOCAL_ARNS.archiveStream);
      return delivery.put(lines);
    },
  };
}

/**
 * The local raw objects as function `name` reads them: `s3:GetObject` on the object and
 * `s3:ListBucket` with the `raw/` prefix on the events bucket, as `S3RawObjects` calls S3.
 */
export function functionRawObjects(objects: RawObjects, name: FunctionName): RawObjects {
  return {
    get: async (key) => {
      demand(name, 's3:GetObject', `${LOCAL_ARNS.eventsBucket}/${key}`);
      return objects.get(key);
    },
    listSince: async (sinceMs) => {
      demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [RAW_PREFIX] });
      return objects.listSince(sinceMs);
    },
  };
}

/**
 * What the archive's delivery asks of its destination role for one batch the local archive writer
 * takes (`local/consumers.ts`, `archivePoller`): the Glue table's schema for the Parquet conversion
 * (`glue:GetTableVersions` on its catalog, database and table). A Direct PUT delivery has no source
 * role: the sessionizer's own `firehose:PutRecordBatch` is asked by `functionArchiveDelivery`.
 * @throws AccessDeniedException when the role lacks a grant
 */
export function demandArchiveBatch(): void {
  for (const arn of LOCAL_ARNS.glueTable) demand('archiveDestination', 'glue:GetTableVersions', arn);
}

/**
 * What Firehose's destination role needs to write the archive's object `key` (`s3:PutObject` on
 * `<bucket>/<key>`), asked by the local archive writer before it writes the file.
 * @throws AccessDeniedException when the role lacks it
 */
export function demandArchiveWrite(key: string): void {
  demand('archiveDestination', 's3:PutObject', archiveObjectArn(key));
}

/**
 * What an Athena query over the archive asks of the caller's role, as `runAthenaQuery` sends it and
 * Athena then reads and writes with the caller's credentials (Athena user guide, "Access to Amazon
 * S3"): the query calls on the workgroup, the Glue table read, the site's partition objects listed
 * and read, and the result written to the results bucket.
 */
function demandArchiveQuery(name: Principal, site: string): void {
  for (const action of ['athena:StartQueryExecution', 'athena:GetQueryExecution', 'athena:GetQueryResults'])
    demand(name, action, LOCAL_ARNS.workGroup);
  for (const arn of LOCAL_ARNS.glueTable) demand(name, 'glue:GetTable', arn);
  const partitions = `${EVENTS_PREFIX}site=${site}/`;
  demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [partitions] });
  demand(name, 's3:GetObject', archiveObjectArn(`${partitions}part.parquet`));
  demand(name, 's3:PutObject', `${LOCAL_ARNS.resultsBucket}/results/query.csv`);
  demand(name, 's3:GetObject', `${LOCAL_ARNS.resultsBucket}/results/query.csv`);
}

/**
 * The local archive reader (DuckDB over the data directory) as function `name` may use it: each
 * call asks what the same call of `AthenaArchiveReader` would (`demandArchiveQuery`).
 */
export function functionArchiveReader(reader: ArchiveReader, name: Principal): ArchiveReader {
  return {
    events: async (site, fromDt, toDt) => {
      demandArchiveQuery(name, site);
      return reader.events(site, fromDt, toDt);
    },
    firstDay: async (site) => {
      demandArchiveQuery(name, site);
      return reader.firstDay(site);
    },
    visitors: async (site, fromDt, toDt) => {
      demandArchiveQuery(name, site);
      return reader.visitors(site, fromDt, toDt);
    },
  };
}

/**
 * The archive's changed partitions as function `name` may list them: `S3ArchiveChanges` would list
 * the site's objects under its prefix (ListObjectsV2, `s3:ListBucket` with that prefix).
 */
export function functionArchiveChanges(changes: ArchiveChanges, name: Principal): ArchiveChanges {
  return {
    changedDays: async (site, sinceMs) => {
      demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [`${EVENTS_PREFIX}site=${site}/`] });
      return changes.changedDays(site, sinceMs);
    },
  };
}

/**
 * The local archive's objects as function `name` may read them, asking for the calls
 * `S3ArchiveObjects` makes: a listing under the site's prefix (`s3:ListBucket` with that
 * `s3:prefix`), a GetObject of the object's key.
 */
export function functionArchiveObjects(objects: ArchiveObjects, name: Principal): ArchiveObjects {
  return {
    list: async (site, fromDt, toDt) => {
      demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [`${EVENTS_PREFIX}site=${site}/`] });
      return objects.list(site, fromDt, toDt);
    },
    get: async (key) => {
      demand(name, 's3:GetObject', archiveObjectArn(`${EVENTS_PREFIX}${key}`));
      return objects.get(key);
    },
  };
}

/**
 * The local archive eraser as function `name` may use it, asking for the calls `S3ArchiveEraser`
 * makes: deleting a site lists and deletes its partitions' objects; erasing visitors queries the
 * archive, has Athena write the rewritten files under the staging prefix, copies them over the
 * originals and deletes the staging objects and the objects left with no event.
 */
export function functionArchiveEraser(eraser: ArchiveEraser, name: Principal): ArchiveEraser {
  const objects = (site: string) => `${EVENTS_PREFIX}site=${site}/`;
  return {
    deleteSite: async (site) => {
      demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [objects(site)] });
      demand(name, 's3:DeleteObject', archiveObjectArn(`${objects(site)}part.parquet`));
      return eraser.deleteSite(site);
    },
    eraseVisitors: async (site, visitors) => {
      demandArchiveQuery(name, site);
      const staging = `${ERASURE_STAGING_PREFIX}site=${site}/`;
      demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, { 's3:prefix': [staging] });
      for (const action of ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'])
        demand(name, action, archiveObjectArn(`${staging}part.parquet`));
      for (const action of ['s3:PutObject', 's3:DeleteObject'])
        demand(name, action, archiveObjectArn(`${objects(site)}part.parquet`));
      return eraser.eraseVisitors(site, visitors);
    },
  };
}

/** The key of a visit table file of a site in a family (`S3TableFiles`), for the ARN a call on it is authorized against. */
const tableKey = (family: string, site: string) => `${VISIT_TABLE_PREFIX}${family}/site=${site}/data.parquet`;

/** What `S3TableFiles` asks before any file of a site: the listing of each of its families. */
function demandTableListing(name: Principal, site: string, families: readonly string[]): void {
  for (const family of families)
    demand(name, 's3:ListBucket', LOCAL_ARNS.eventsBucket, {
      's3:prefix': [`${VISIT_TABLE_PREFIX}${family}/site=${site}/`],
    });
}

/** An S3 action on a visit table family's object (`S3TableFiles`). */
type TableCall = readonly [action: string, family: string];

/** What `S3TableFiles` writes of a family: it gets the dictionary, puts it, and gets and puts the family's file. */
const tableWrite = (family: string): TableCall[] => [
  ['s3:GetObject', 'dict'],
  ['s3:PutObject', 'dict'],
  ['s3:GetObject', family],
  ['s3:PutObject', family],
];

/** The objects each method of the visit table asks for (`S3VisitTable`), after listing the site's families. */
const VISIT_TABLE_CALLS: Record<(typeof VISIT_TABLE_STORE_METHODS)[number], readonly TableCall[]> = {
  writeMonth: tableWrite('visits'),
  writeOpen: tableWrite('visits'),
  writePayments: [
    ['s3:GetObject', 'visits'],
    ['s3:PutObject', 'payments'],
  ],
  readPayments: [['s3:GetObject', 'payments']],
  readMonth: [
    ['s3:GetObject', 'dict'],
    ['s3:GetObject', 'visits'],
  ],
  months: [],
  writtenThrough: [['s3:GetObject', 'state']],
  setWrittenThrough: [['s3:PutObject', 'state']],
  changesSeen: [['s3:GetObject', 'state']],
  setChangesSeen: [['s3:PutObject', 'state']],
  paymentsWritten: [['s3:GetObject', 'state']],
  setPaymentsWritten: [['s3:PutObject', 'state']],
  dropSite: TABLE_FAMILIES.write.map((family) => ['s3:DeleteObject', family] as const),
};

/**
 * The local visit table as function `name` may write it, asking for the calls `S3VisitTable` makes
 * (`VISIT_TABLE_CALLS`): every call lists the site's families; a write gets the dictionary and puts
 * the file and the dictionary; a read gets them; the writer's state is got and put; `dropSite`
 * deletes every family's objects.
 */
export function functionVisitTable(table: VisitTableStore, name: Principal): VisitTableStore {
  return forwardPort(
    VISIT_TABLE_STORE_METHODS,
    () => table,
    (method, [site], call) => {
      demandTableListing(name, site, TABLE_FAMILIES.write);
      for (const [action, family] of VISIT_TABLE_CALLS[method])
        demand(name, action, archiveObjectArn(tableKey(family, site)));
      return call();
    },
  );
}

/**
 * The filtered function as function `name` (report, MCP) invokes it, as `lambdaFilteredVisits` does in
 * AWS: `lambda:InvokeFunction` on it is asked for, the call crosses as the invocation's JSON
 * (`filteredVisitsByInvoke`), and the filtered function's handler runs it on `engine` under the
 * filtered function's own policy (`functionFilteredVisits`). A failed call rejects with its error, which
 * the report handlers answer 503, as they answer the invocation's function error in AWS.
 */
export function functionFilteredInvoker(engine: FilteredVisits, name: FunctionName): FilteredVisits {
  const handler = createFilteredHandler(functionFilteredVisits(engine, 'filtered'));
  return filteredVisitsByInvoke(async (call) => {
    demand(name, 'lambda:InvokeFunction', LOCAL_ARNS.filteredFunction);
    const result = await handler(JSON.parse(JSON.stringify(call)));
    return JSON.parse(JSON.stringify(result)) as unknown;
  });
}

/**
 * The local filtered engine as function `name` may read it, asking for the calls `S3FilteredVisits`
 * makes before each query: the listing of the site's visit, payments and dictionary files, and a
 * GetObject of each.
 */
export function functionFilteredVisits(engine: FilteredVisits, name: Principal): FilteredVisits {
  return forwardPort(
    FILTERED_VISITS_METHODS,
    () => engine,
    (_method, [site], call) => {
      demandTableListing(name, site, TABLE_FAMILIES.read);
      for (const family of TABLE_FAMILIES.read) demand(name, 's3:GetObject', archiveObjectArn(tableKey(family, site)));
      return call();
    },
  );
}
