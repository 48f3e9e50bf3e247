import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { HASHED_ASSET, IMMUTABLE_CACHE, REVALIDATE_CACHE, appSecurityHeaders } from '../app/headers.js';
import { chooseCoding, compress, type Coding } from './compress.js';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** Paths that belong to the API, never to the app: an unknown one is the API's 404, not index.html. */
const API_PATHS = /^\/(api|mcp)(\/|$)/;

/**
 * Serves the built app (app/dist/) as CloudFront does in AWS: a file when the
 * path names one, index.html for the app's own routes (`/sites/x`, `/settings`),
 * a 404 for a missing asset, long caching for hashed assets, and the security
 * headers on everything, and text files of 1,000 bytes or more compressed
 * with Brotli or gzip as the request's `Accept-Encoding` allows (each file
 * compressed once per build, kept in memory). Returns false for requests it does not serve
 * (another method, an API path), which the server answers itself.
 */
export function staticAppHandler(dist: string): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  // path → the file's mtime and size when compressed, and its bytes in each coding; a rebuild changes the mtime.
  const compressed = new Map<string, { version: string; bodies: Map<Coding, Buffer> }>();
  const encoded = (file: string, version: string, body: Buffer, coding: Coding): Buffer => {
    let entry = compressed.get(file);
    if (entry?.version !== version) compressed.set(file, (entry = { version, bodies: new Map() }));
    let out = entry.bodies.get(coding);
    if (!out) entry.bodies.set(coding, (out = compress(body, coding)));
    return out;
  };
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    let path: string;
    try {
      path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    } catch {
      return false;
    }
    if (API_PATHS.test(path)) return false;
    const file = normalize(join(dist, path));
    const inside = file.startsWith(dist.endsWith(sep) ? dist : dist + sep);
    const isFile =
      inside &&
      path !== '/' &&
      (await stat(file).then(
        (s) => s.isFile(),
        () => false,
      ));
    // A missing asset (a stale /assets/x.js, /favicon.ico) is a 404; anything else is an app
    // route, dots included (`/sites/example.com`).
    if (!isFile && (path.startsWith('/assets/') || extname(path) in TYPES)) {
      send(
        res,
        req,
        404,
        { 'content-type': 'text/plain; charset=utf-8', 'cache-control': REVALIDATE_CACHE },
        Buffer.from('not found'),
      );
      return true;
    }
    const served = isFile ? file : join(dist, 'index.html');
    const [body, info] = await Promise.all([readFile(served).catch(() => null), stat(served).catch(() => null)]);
    if (!body || !info) {
      send(
        res,
        req,
        503,
        { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
        Buffer.from('the app is not built: run npm run build:app'),
      );
      return true;
    }
    const type = TYPES[extname(served)] ?? 'application/octet-stream';
    const headers: Record<string, string> = {
      'content-type': type,
      'cache-control': isFile && HASHED_ASSET.test(path) ? IMMUTABLE_CACHE : REVALIDATE_CACHE,
    };
    // Whether compressible or not, caches must key this answer by Accept-Encoding (RFC 9110 §12.5.5).
    const coding = chooseCoding(req.headers['accept-encoding'], type, body.length);
    if (chooseCoding('br', type, body.length)) headers.vary = 'Accept-Encoding';
    if (coding) headers['content-encoding'] = coding;
    send(res, req, 200, headers, coding ? encoded(served, `${info.mtimeMs}:${info.size}`, body, coding) : body);
    return true;
  };
}

function send(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  headers: Record<string, string>,
  body: Buffer,
): void {
  res.writeHead(status, { ...appSecurityHeaders(false), ...headers, 'content-length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}
