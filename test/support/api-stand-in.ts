import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An answer of the stand-in: status, JSON body, extra headers. */
export interface StandInAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * A provider API in this process: `answer` serves each GET from its path and
 * query; `requests` records `path?query` in order (query as sent); `fail`
 * answers the `nth` request to `path` (1-based) with another status instead.
 */
export class ApiStandIn {
  readonly requests: string[] = [];
  fail: { path: string; nth: number; answer: StandInAnswer } | null = null;
  private server: Server | null = null;
  private seen = new Map<string, number>();

  constructor(private readonly answer: (path: string, query: URLSearchParams) => StandInAnswer) {}

  /** Listens on a free port of 127.0.0.1; returns its base URL. */
  async start(): Promise<URL> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      this.requests.push(`${url.pathname}?${decodeURIComponent(url.searchParams.toString())}`);
      const n = (this.seen.get(url.pathname) ?? 0) + 1;
      this.seen.set(url.pathname, n);
      const failing = this.fail && this.fail.path === url.pathname && this.fail.nth === n;
      const answer = failing ? this.fail!.answer : this.answer(url.pathname, url.searchParams);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return new URL(`http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`);
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
