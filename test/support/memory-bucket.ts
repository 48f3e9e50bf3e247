import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type ListObjectsV2CommandInput,
  type S3ClientResolvedConfig,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-s3';
import type { AwsStub } from 'aws-sdk-client-mock';
import { createHash } from 'node:crypto';

/** An object of the in-memory bucket. */
export interface StoredObject {
  body: Uint8Array;
  etag: string;
  modified: Date;
}

/** The in-memory bucket: its objects by key, and `store` (an MD5 ETag, as S3 gives a single-part put). */
export interface MemoryBucket {
  objects: Map<string, StoredObject>;
  store(key: string, body: Uint8Array, modified?: Date): string;
}

/**
 * Resets `s3` (aws-sdk-client-mock's stub of S3Client) and answers it from a bucket in memory, as S3
 * answers: ListObjectsV2 by Prefix and StartAfter in key order, `pageSize` keys a page (small, so a
 * listing spans pages), with ETag, Size and LastModified; GetObject (NoSuchKey when absent);
 * PutObject; DeleteObjects.
 * @param clock the LastModified of a put
 */
export function memoryBucket(
  s3: AwsStub<ServiceInputTypes, ServiceOutputTypes, S3ClientResolvedConfig>,
  pageSize: number,
  clock: () => number,
): MemoryBucket {
  const objects = new Map<string, StoredObject>();
  const store = (key: string, body: Uint8Array, modified = new Date(clock())): string => {
    const etag = `"${createHash('md5').update(body).digest('hex')}"`;
    objects.set(key, { body, etag, modified });
    return etag;
  };
  s3.reset();
  s3.on(ListObjectsV2Command).callsFake((input: ListObjectsV2CommandInput) => {
    const keys = [...objects.keys()]
      .filter((k) => k.startsWith(input.Prefix ?? '') && k > (input.StartAfter ?? ''))
      .sort();
    const start = input.ContinuationToken ? Number(input.ContinuationToken) : 0;
    const page = keys.slice(start, start + pageSize);
    const more = start + pageSize < keys.length;
    return {
      Contents: page.map((Key) => ({
        Key,
        ETag: objects.get(Key)!.etag,
        Size: objects.get(Key)!.body.byteLength,
        LastModified: objects.get(Key)!.modified,
      })),
      IsTruncated: more,
      ...(more ? { NextContinuationToken: String(start + pageSize) } : {}),
    };
  });
  s3.on(GetObjectCommand).callsFake((input: { Key: string }) => {
    const object = objects.get(input.Key);
    if (!object) throw Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey' });
    return { ETag: object.etag, Body: { transformToByteArray: async () => object.body } };
  });
  s3.on(PutObjectCommand).callsFake((input: { Key: string; Body: Uint8Array }) => ({
    ETag: store(input.Key, new Uint8Array(input.Body)),
  }));
  s3.on(DeleteObjectsCommand).callsFake((input: { Delete: { Objects: Array<{ Key: string }> } }) => {
    for (const { Key } of input.Delete.Objects) objects.delete(Key);
    return {};
  });
  return { objects, store };
}
