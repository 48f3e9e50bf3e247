import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { KEEP_ALIVE_TIMEOUT_MS, createLocalServer } from '../../local/server.js';
import { report } from './support.js';

/**
 * A client that reuses a kept-alive connection after a pause of a
 * few seconds (a CLI command between two requests) must never find it closed
 * under it. Node's default keepAliveTimeout of 5 s raced undici's reuse; the
 * local server keeps idle connections 65 s, like a server behind an ALB.
 * Pauses of 5.5 s are past the old 5 s on purpose. About two minutes by nature.
 */
const REQUESTS = 20;
const PAUSE_MS = 5_500;

interface Counted {
  server: Server;
  url: string;
  /** TCP connections the server accepted. */
  connections: () => number;
}

async function countingServer(): Promise<Counted> {
  const server = createLocalServer([
    {
      methods: ['GET'],
      path: '/ping',
      functionName: 'ping',
      handler: async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }),
    },
  ]);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`,
    connections: () => connections,
  };
}

describe('local server keep-alive', () => {
  let forFetch: Counted;
  let forCurl: Counted;
  beforeAll(async () => {
    forFetch = await countingServer();
    forCurl = await countingServer();
  });
  afterAll(async () => {
    for (const { server } of [forFetch, forCurl]) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it(`${REQUESTS} requests 5.5 s apart from one undici client (fetch) and from curl all succeed on one connection`, async () => {
    const viaFetch = (async () => {
      const failures: string[] = [];
      let hint: string | null = null;
      for (let i = 0; i < REQUESTS; i++) {
        if (i > 0) await sleep(PAUSE_MS);
        try {
          const res = await fetch(forFetch.url);
          hint = res.headers.get('keep-alive');
          if (res.status !== 200 || (await res.text()) !== '{"ok":true}') failures.push(`request ${i}: ${res.status}`);
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause;
          failures.push(`request ${i}: ${(error as Error).message} ${cause?.code ?? ''}`);
        }
      }
      return { failures, hint };
    })();
    // curl 7.88: --rate 11/m starts a transfer every ~5.45 s in one invocation, on one kept-alive connection;
    // %{num_connects} is 1 for a transfer that opened a connection, 0 for one that reused it.
    const viaCurl = promisify(execFile)(
      'curl',
      [
        '--silent',
        '--show-error',
        '--keepalive-time',
        '60',
        '--rate',
        '11/m',
        '--write-out',
        '%{http_code} %{num_connects}\\n',
        ...Array.from({ length: REQUESTS }, () => ['--output', '/dev/null', forCurl.url]).flat(),
      ],
      { timeout: 240_000 },
    );
    const [fetched, curled] = await Promise.all([viaFetch, viaCurl]);
    const curlLines = curled.stdout.trim().split('\n');
    await report('keep-alive', {
      requests: REQUESTS,
      pause_ms: PAUSE_MS,
      fetch_failures: fetched.failures.length,
      fetch_connections: forFetch.connections(),
      curl_connections: forCurl.connections(),
    });

    expect(fetched.failures).toEqual([]);
    expect(fetched.hint).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    expect(forFetch.connections()).toBe(1);
    expect(curlLines).toHaveLength(REQUESTS);
    expect(curlLines.map((l) => l.split(' ')[0])).toEqual(Array(REQUESTS).fill('200'));
    expect(curlLines.reduce((n, l) => n + Number(l.split(' ')[1]), 0)).toBe(1);
    expect(forCurl.connections()).toBe(1);
  }, 240_000);
});
