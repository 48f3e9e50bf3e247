import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startLocalService, type LocalService } from '../../local/service.js';
import { APP_CSP, IMMUTABLE_CACHE } from '../../app/headers.js';
import { APP_DIST, ensureAppBuilt } from '../../app/build.js';
import { DynamoSessionStore } from '../../lambdas/adapters/dynamo/session-store.js';
import { DynamoUserStore } from '../../lambdas/adapters/dynamo/user-store.js';
import { DynamoAttemptStore } from '../../lambdas/adapters/dynamo/attempt-store.js';
import { sweepExpired } from '../../lambdas/adapters/dynamo/expiry.js';
import { attemptKey, bucketStart } from '../../lambdas/domain/auth/attempts.js';

/** A script well over CloudFront's 1,000-byte floor for compression. */
const BIG_JS = Array.from({ length: 400 }, (_, i) => `export const v${i} = ${i * 7};`).join('\n');

/** GET with exactly the given Accept-Encoding (fetch would add its own and decode): status, headers, raw body bytes. */
function rawGet(url: string, acceptEncoding?: string) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(url, { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

/** The local server in app mode serves app/dist as CloudFront does (docs/app.md "Serving the app"). */
describe('the app served by the local server', () => {
  let svc: LocalService;
  let dataDir: string;
  let dist: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ff-app-serve-'));
    dist = join(dataDir, 'dist');
    await mkdir(join(dist, 'assets'), { recursive: true });
    await writeFile(join(dist, 'index.html'), '<!doctype html><div id="app"></div>');
    await writeFile(join(dist, 'assets', 'index-AbCd1234.js'), 'console.log(1)');
    await writeFile(join(dist, 'assets', 'big-EfGh5678.js'), BIG_JS);
    await writeFile(join(dist, 'assets', 'logo-IjKl9012.png'), Buffer.alloc(5000, 7));
    await writeFile(join(dataDir, 'secret.txt'), 'not for the web');
    svc = await startLocalService({
      dataDir,
      port: 0,
      app: true,
      appDist: dist,
      sessionizeIntervalMs: 0,
      dynaliteThread: false,
    });
  });
  afterAll(async () => {
    await svc.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const get = async (path: string, method = 'GET') => {
    const res = await fetch(`${svc.url}${path}`, { method });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      cache: res.headers.get('cache-control'),
      csp: res.headers.get('content-security-policy'),
      headers: res.headers,
      body: await res.text(),
    };
  };

  it.each([
    '/',
    '/sign-in',
    '/sites/example.com',
    '/sites/example.com/payments?range=7d',
    '/settings/keys',
    '/invite/abc',
  ])('%s is the app (index.html), revalidated on each load, with the security headers', async (path) => {
    const res = await get(path);
    expect(res).toMatchObject({
      status: 200,
      type: 'text/html; charset=utf-8',
      cache: 'no-cache',
      csp: APP_CSP,
      body: '<!doctype html><div id="app"></div>',
    });
    expect(res.csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    // Plain http: no HSTS (it means something only over HTTPS).
    expect(res.headers.get('strict-transport-security')).toBeNull();
  });

  it('hashed assets are cached for a year; a missing asset is a 404, not the app', async () => {
    expect(await get('/assets/index-AbCd1234.js')).toMatchObject({
      status: 200,
      type: 'text/javascript; charset=utf-8',
      cache: 'public, max-age=31536000, immutable',
      body: 'console.log(1)',
    });
    expect(await get('/assets/index-Gone5678.js')).toMatchObject({ status: 404 });
    expect(await get('/favicon.ico')).toMatchObject({ status: 404 });
    const head = await get('/assets/index-AbCd1234.js', 'HEAD');
    expect(head).toMatchObject({ status: 200, body: '' });
  });

  it('compresses text files as CloudFront does: Brotli first, then gzip, never below 1,000 bytes or for images', async () => {
    const url = `${svc.url}/assets/big-EfGh5678.js`;
    const br = await rawGet(url, 'gzip, deflate, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(BIG_JS.length / 3);
    expect(brotliDecompressSync(br.body).toString()).toBe(BIG_JS);
    const gz = await rawGet(url, 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(BIG_JS);
    // q=0 refuses a coding (RFC 9110 §12.5.3); `*` stands for the rest.
    expect((await rawGet(url, 'br;q=0, gzip')).headers['content-encoding']).toBe('gzip');
    expect((await rawGet(url, '*;q=0.5')).headers['content-encoding']).toBe('br');
    const plain = await rawGet(url, 'identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(BIG_JS);
    expect((await rawGet(url)).headers['content-encoding']).toBeUndefined();
    // Under 1,000 bytes, and a PNG (already compressed), go as they are.
    expect((await rawGet(`${svc.url}/assets/index-AbCd1234.js`, 'br')).headers['content-encoding']).toBeUndefined();
    const png = await rawGet(`${svc.url}/assets/logo-IjKl9012.png`, 'br, gzip');
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.body.length).toBe(5000);
  });

  it("never serves a file outside app/dist, and API paths stay the API's", async () => {
    for (const path of ['/..%2fsecret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt'])
      expect((await get(path)).body, path).not.toContain('not for the web');
    // A raw `..` that fetch would normalise away, sent as is.
    const raw = await new Promise<string>((resolve) => {
      const req = request(`${svc.url}/../secret.txt`, { method: 'GET', path: '/../secret.txt' }, (res) => {
        let body = '';
        res.on('data', (d) => (body += String(d)));
        res.on('end', () => resolve(body));
      });
      req.end();
    });
    expect(raw).not.toContain('not for the web');
    expect(await get('/api/nope')).toMatchObject({
      status: 404,
      type: 'application/json',
      body: '{"error":"not found"}',
    });
    expect((await get('/api/app/me')).status).toBe(401);
    expect((await get('/mcp')).status).toBe(405);
  });

  it('sweeps what TTL deletes in AWS: expired sessions, links and attempt counters, and only those', async () => {
    const now = Date.now();
    const sessions = new DynamoSessionStore(svc.dynamo);
    const users = new DynamoUserStore(svc.dynamo);
    await sessions.create('old', {
      email: 'a@b.test',
      account: 'acme',
      created: now - 20 * 86_400_000,
      expires: now - 1000,
      epoch: 1,
    });
    await sessions.create('live', {
      email: 'a@b.test',
      account: 'acme',
      created: now,
      expires: now + 86_400_000,
      epoch: 1,
    });
    await users.addInvite('oldlink', {
      email: 'a@b.test',
      account: 'acme',
      created: now - 8 * 86_400_000,
      expires: now - 1000,
      epoch: 1,
    });
    await new DynamoAttemptStore(svc.dynamo).add(attemptKey('email', 'a@b.test'), bucketStart(now - 3_600_000), 1);
    expect(await sweepExpired(svc.dynamo, now)).toBe(4);
    expect(await sessions.get('old')).toBeNull();
    expect(await users.getInvite('oldlink')).toBeNull();
    expect(await sessions.get('live')).not.toBeNull();
    expect(await sweepExpired(svc.dynamo, now)).toBe(0);
    expect(await sweepExpired(svc.dynamo, now + 2 * 86_400_000)).toBe(1);
    expect(await sessions.get('live')).toBeNull();
  });
});

/** The real build: the entry and every page's chunk (`app/src/pages.tsx`) served as the entry is. */
describe("the app's build served by the local server", () => {
  let svc: LocalService;
  let dataDir: string;
  beforeAll(async () => {
    await ensureAppBuilt();
    dataDir = await mkdtemp(join(tmpdir(), 'ff-app-chunks-'));
    svc = await startLocalService({ dataDir, port: 0, app: true, sessionizeIntervalMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await svc.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves each file of app/dist/assets for a year, compressed from 1,000 bytes', async () => {
    const files = await readdir(join(APP_DIST, 'assets'));
    expect(files.filter((f) => f.endsWith('.js')).length).toBeGreaterThan(5);
    for (const file of files) {
      const size = (await stat(join(APP_DIST, 'assets', file))).size;
      const res = await rawGet(`${svc.url}/assets/${file}`, 'gzip');
      expect(res.status, file).toBe(200);
      expect(res.headers['cache-control'], file).toBe(IMMUTABLE_CACHE);
      expect(res.headers['content-encoding'], file).toBe(size >= 1000 ? 'gzip' : undefined);
    }
  });
});
