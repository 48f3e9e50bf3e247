import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readLocalStream } from '../../lambdas/adapters/local-stream.js';
import { localPaths } from '../../local/service.js';
import { runSql } from '../../local/sql.js';
import { CHROME_UA } from '../support/events.js';
import { scanAll } from '../support/dynamo.js';
import { startTestService } from '../support/local.js';

type Service = Awaited<ReturnType<typeof startTestService>>;

/**
 * Loopback addresses other than 127.0.0.1 (Linux routes all of 127.0.0.0/8 to
 * `lo`): a request sent from one reaches the local server with that source
 * address, as a visitor's reaches API Gateway with theirs.
 */
const CLIENT_A = '127.45.67.89';
const CLIENT_B = '127.98.76.54';

/** POST /api/event from `localAddress`; resolves with the status. */
function postFrom(url: string, localAddress: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/event`,
      { method: 'POST', localAddress, headers: { 'user-agent': CHROME_UA, 'content-type': 'text/plain' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('the client address in `npm start`', () => {
  let svc: Service;
  const output: string[] = [];

  beforeAll(async () => {
    // Every log line the service writes, at the most verbose level.
    process.env.POWERTOOLS_LOG_LEVEL = 'DEBUG';
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
        output.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof stream.write);
    }
    svc = await startTestService([{ domain: 'example.com' }], { sessionizeIntervalMs: 0 });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    delete process.env.POWERTOOLS_LOG_LEVEL;
    await svc.cleanup();
  });

  it('reaches the handler as sourceIp, as API Gateway passes it, and is kept nowhere: stream, table, archive, logs', async () => {
    const page = { n: 'pageview', u: 'https://example.com/', s: 'example.com' };
    expect(await postFrom(svc.url, CLIENT_A, page)).toBe(202);
    expect(await postFrom(svc.url, CLIENT_A, { ...page, u: 'https://example.com/pricing' })).toBe(202);
    expect(await postFrom(svc.url, CLIENT_B, page)).toBe(202);
    // A drop logs an INFO line, a rejection a debug one: neither carries the address.
    expect(await postFrom(svc.url, CLIENT_A, { ...page, s: 'nowhere.org', u: 'https://nowhere.org/' })).toBe(202);
    expect(await postFrom(svc.url, CLIENT_A, '{not json')).toBe(400);
    expect(await svc.sessionize()).toBe(3);
    expect(await svc.archive()).toBe(3);

    const { records } = await readLocalStream(localPaths(svc.dataDir).stream, 0, 100);
    const events = records.map((r) => JSON.parse(r.data.toString()) as { visitor_id: string; visitor_kind: string });
    // The daily hash is of the client's address: one visitor per address.
    expect(events.map((e) => e.visitor_kind)).toEqual(['hash', 'hash', 'hash']);
    expect(events[1]?.visitor_id).toBe(events[0]?.visitor_id);
    expect(events[2]?.visitor_id).not.toBe(events[0]?.visitor_id);

    const archived = await runSql(localPaths(svc.dataDir).archive, 'SELECT * FROM events');
    expect(archived.rows).toHaveLength(3);
    const places: Record<string, string> = {
      stream: records.map((r) => r.data.toString()).join('\n'),
      table: JSON.stringify(await scanAll(svc.dynamo)),
      archive: JSON.stringify(archived),
      logs: output.join(''),
    };
    // Every file of the data directory, bytes included (dynalite's LevelDB, the stream log, Parquet).
    for (const file of await filesUnder(svc.dataDir)) places[file] = (await readFile(file)).toString('latin1');
    expect(places.logs).toContain('events dropped');
    for (const [place, text] of Object.entries(places)) {
      for (const ip of [CLIENT_A, CLIENT_B]) expect(text.includes(ip), `${ip} found in ${place}`).toBe(false);
    }
  });
});
