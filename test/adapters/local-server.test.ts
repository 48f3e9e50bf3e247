import { describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createLocalServer, type ServerLog } from '../../local/server.js';

describe('local server (the API Gateway stand-in)', () => {
  it('logs a client that aborts its upload at debug level, not as a server error', async () => {
    const errors: unknown[] = [];
    let aborted!: (extra: Record<string, unknown>) => void;
    const debugged = new Promise<Record<string, unknown>>((resolve) => (aborted = resolve));
    const log: ServerLog = {
      debug: (_message, extra) => aborted(extra),
      error: (_message, error) => void errors.push(error),
    };
    let handled = 0;
    const server = createLocalServer(
      [
        {
          methods: ['POST'],
          path: '/api/event',
          functionName: 'event',
          handler: async () => (handled++, { statusCode: 202, body: '' }),
        },
      ],
      { log },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // Promise 1,000 bytes, send 10, hang up: a tab closed mid-beacon.
    socket.write('POST /api/event HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n0123456789');
    // The server has the request once its headers parsed; then the client goes away.
    await new Promise<void>((resolve) => server.once('request', () => resolve()));
    socket.destroy();
    expect(await debugged).toEqual({ method: 'POST', path: '/api/event' });
    expect(errors).toEqual([]);
    expect(handled).toBe(0);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
