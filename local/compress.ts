import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** A content coding the local server sends (RFC 9110 §8.4.1). */
export type Coding = 'br' | 'gzip';

/**
 * CloudFront's conditions for compressing an object (Developer Guide, "Serve
 * compressed files"): between 1,000 and 10,000,000 bytes, and of a text type
 * on its list (HTML, CSS, JavaScript, JSON, SVG, plain text among them).
 */
export const MIN_COMPRESS_BYTES = 1000;
export const MAX_COMPRESS_BYTES = 10_000_000;
const COMPRESSIBLE = /^(text\/(html|css|javascript|plain)|application\/json|image\/svg\+xml)(;|$)/;

/**
 * The coding to answer a request with, from its `Accept-Encoding` (RFC 9110
 * §12.5.3: codings with q=0 are refused, `*` stands for any coding not named),
 * the response's content type and its size in bytes: Brotli when the client
 * takes it, else gzip, as CloudFront prefers Brotli when a viewer takes both;
 * null to send the bytes as they are.
 */
export function chooseCoding(acceptEncoding: string | undefined, type: string, size: number): Coding | null {
  if (!acceptEncoding || size < MIN_COMPRESS_BYTES || size > MAX_COMPRESS_BYTES || !COMPRESSIBLE.test(type))
    return null;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const accepts = (coding: Coding) => (q.get(coding) ?? q.get('*') ?? 0) > 0;
  return accepts('br') ? 'br' : accepts('gzip') ? 'gzip' : null;
}

/** `body` in `coding`: Brotli at its text mode and default quality (11), gzip at level 9, as a CDN would store them once per file. */
export function compress(body: Buffer, coding: Coding): Buffer {
  return coding === 'br'
    ? brotliCompressSync(body, {
        params: {
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      })
    : gzipSync(body, { level: 9 });
}
