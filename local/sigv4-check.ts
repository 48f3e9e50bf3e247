import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { dict } from '../lambdas/domain/dict.js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, SourceData } from '@smithy/types';

/** How far a request's `X-Amz-Date` may be from the server's clock: AWS's 15 minutes (ms). */
export const MAX_CLOCK_SKEW_MS = 15 * 60_000;

/** Why a request is refused, as the DynamoDB error it would get from AWS (`__type` and message). */
export interface SigV4Refusal {
  type: 'UnrecognizedClientException' | 'InvalidSignatureException' | 'MissingAuthenticationTokenException';
  message: string;
}

const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

/** Node's SHA-256 (HMAC with a secret) in the `Checksum` shape the SDK's signer takes. */
export class NodeSha256 implements Checksum {
  private hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    throw new Error('not used by the signer');
  }
}

function toBuffer(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

const AUTH =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** `YYYYMMDDTHHMMSSZ` (SigV4's `X-Amz-Date`) → ms, or null. */
function amzDate(value: string | undefined): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? '');
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : null;
}

/**
 * Checks a request's AWS Signature Version 4 as DynamoDB does
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-troubleshooting.html):
 * the access key must be `credentials.accessKeyId`, `X-Amz-Date` within 15
 * minutes of `nowMs`, and the signature equal to the one the AWS SDK's own
 * signer (`@smithy/signature-v4`) computes over the same method, path, signed
 * headers and body with the secret key. Resolves with null when it matches,
 * else the refusal DynamoDB would answer.
 */
export async function checkSigV4(
  request: { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer },
  credentials: { accessKeyId: string; secretAccessKey: string },
  nowMs: number,
): Promise<SigV4Refusal | null> {
  const auth = AUTH.exec(String(request.headers.authorization ?? ''));
  if (!auth) return { type: 'MissingAuthenticationTokenException', message: 'Request is missing Authentication Token' };
  const [, keyId, day, region, service, signedHeaders, signature] = auth;
  if (keyId !== credentials.accessKeyId)
    return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  const date = amzDate(request.headers['x-amz-date'] as string | undefined);
  if (date === null || !String(request.headers['x-amz-date']).startsWith(day!))
    return { type: 'InvalidSignatureException', message: MISMATCH };
  if (Math.abs(date - nowMs) > MAX_CLOCK_SKEW_MS)
    return {
      type: 'InvalidSignatureException',
      message: 'Signature expired: the request time is too far from the server time.',
    };
  // The signer takes a body hash sent in `X-Amz-Content-Sha256` as given: it must be the body's.
  const claimed = request.headers['x-amz-content-sha256'];
  if (claimed !== undefined && claimed !== createHash('sha256').update(request.body).digest('hex'))
    return { type: 'InvalidSignatureException', message: MISMATCH };
  const headers = dict<string>();
  for (const name of signedHeaders!.split(';')) {
    const value = request.headers[name];
    if (value === undefined) return { type: 'InvalidSignatureException', message: MISMATCH };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const url = new URL(request.url, 'http://localhost');
  const signer = new SignatureV4({ credentials, region: region!, service: service!, sha256: NodeSha256 });
  const expected = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: headers.host ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: request.body,
    },
    { signingDate: new Date(date) },
  );
  const computed = /Signature=([0-9a-f]{64})$/.exec(String(expected.headers.authorization ?? ''))?.[1] ?? '';
  const same = computed.length === 64 && timingSafeEqual(Buffer.from(computed), Buffer.from(signature!));
  return same ? null : { type: 'InvalidSignatureException', message: MISMATCH };
}
