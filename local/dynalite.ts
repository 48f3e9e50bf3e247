import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type Server } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { checkSigV4 } from './sigv4-check.js';
import { closeDynaliteIterators } from './dynalite-iterators.js';
import { syncDynaliteReads } from './dynalite-reads.js';
import { dynaliteThread } from './dynalite-thread.js';

const require = createRequire(import.meta.url);

/**
 * Who holds a data directory's dynalite. `serve` holds it for as long as it
 * runs; admin commands attach to a running `serve` or, when none runs, start
 * dynalite themselves for the length of the command (LevelDB allows one
 * process). The holder publishes its port in `dynalite.json`.
 */
type Role = 'serve' | 'cli';
interface Holder {
  pid: number;
  port: number;
  role: Role;
  credentials: LocalCredentials;
}

/** The per-process credential of a data directory's dynalite: requests signed with another access key are refused. */
export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface LocalDynamo {
  endpoint: string;
  credentials: LocalCredentials;
  /** True when this process runs dynalite (and must keep running for others). */
  owner: boolean;
  close(): Promise<void>;
}

/** True when a process with this id runs (EPERM: it runs, as another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function readHolder(file: string): Promise<Holder | null> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Holder;
  } catch {
    return null;
  }
}

/**
 * Opens the DynamoDB stand-in for `dataDir` (`<dataDir>/db`, LevelDB): attaches
 * to the dynalite of a running `serve` or starts one. `serve` waits for an
 * admin command that holds the directory to finish; a second `serve` on the
 * same directory is refused. When it starts dynalite, `serve` runs it in a
 * thread of its own and an admin command in its own thread (`RUNNERS`), unless
 * `options.thread` says otherwise (a bulk import gives it a thread: both cores).
 *
 * @throws Error when another `serve` already holds the directory, or after `options.waitMs` (default 30 s)
 */
export async function openLocalDynamo(
  dataDir: string,
  role: Role,
  options: { waitMs?: number; thread?: boolean } = {},
): Promise<LocalDynamo> {
  const waitMs = options.waitMs ?? 30_000;
  const run = options.thread === undefined ? RUNNERS[role] : options.thread ? dynaliteThread : dynaliteInline;
  // Only the owner may enter the data directory: it holds the database, the stream and dynalite's credential.
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const holderFile = join(dataDir, 'dynalite.json');
  const lockFile = join(dataDir, 'dynalite.lock');
  const deadline = Date.now() + waitMs;
  for (;;) {
    const holder = await readHolder(holderFile);
    if (holder && holder.pid !== process.pid && alive(holder.pid) && (await portOpen(holder.port))) {
      if (holder.role === 'serve') {
        if (role === 'serve') throw new Error(`footfall serve (pid ${holder.pid}) already runs on ${dataDir}`);
        return {
          endpoint: `http://127.0.0.1:${holder.port}`,
          credentials: holder.credentials,
          owner: false,
          close: async () => undefined,
        };
      }
    } else {
      try {
        await writeFile(lockFile, String(process.pid), { flag: 'wx' });
        return await startDynalite(dataDir, holderFile, lockFile, role, run);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const lockPid = Number(await readFile(lockFile, 'utf8').catch(() => '0'));
        if (!lockPid || !alive(lockPid)) {
          await rm(lockFile, { force: true });
          continue;
        }
      }
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the database in ${dataDir}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The largest request body read for the signature check: dynalite's own limit (16 MiB). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Lets through only requests signed (AWS SigV4) with `credentials`: the
 * access key id and the signature over the method, path, signed headers and
 * body, computed with the secret key by the AWS SDK's signer
 * (`checkSigV4`). Others get the error DynamoDB answers
 * (`UnrecognizedClientException` for another key, `InvalidSignatureException`
 * for a wrong signature or a time more than 15 minutes off). So a local
 * process without the data directory's `dynalite.json` (mode 0600 in a 0700
 * directory) can neither read webhook secrets nor forge an API key item, even
 * if it learns the key id.
 */
export function requireCredential(server: Server, credentials: LocalCredentials, clock: () => number = Date.now): void {
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  const refuse = (res: ServerResponse, status: number, type: string, message: string) => {
    const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message });
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return refuse(res, 413, 'ValidationException', 'request too large');
      const body = Buffer.concat(chunks);
      checkSigV4(
        { method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers, body },
        credentials,
        clock(),
      )
        .then((refusal) => {
          if (refusal) return refuse(res, 400, refusal.type, refusal.message);
          // dynalite reads the body from the request stream: hand it a stream that replays it.
          const replay = Object.assign(new PassThrough(), {
            headers: req.headers,
            method: req.method,
            url: req.url,
            httpVersion: req.httpVersion,
            socket: req.socket,
          }) as unknown as IncomingMessage;
          for (const handler of handlers) handler(replay, res);
          (replay as unknown as PassThrough).end(body);
        })
        .catch(() => refuse(res, 500, 'InternalServerError', 'signature check failed'));
    });
  });
}

/**
 * dynalite on LevelDB in `dbPath`, listening on an ephemeral loopback port
 * and letting through only requests signed with `credentials`
 * (`requireCredential`), in the calling thread.
 * @returns the server, already listening
 */
export async function serveDynalite(dbPath: string, credentials: LocalCredentials): Promise<Server> {
  closeDynaliteIterators();
  syncDynaliteReads();
  const dynalite = require('dynalite') as (options: Record<string, unknown>) => Server;
  const server = dynalite({ path: dbPath, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  requireCredential(server, credentials);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return server;
}

/** A running dynalite: its port, and how to stop it (resolves once its database is closed). */
interface RunningDynalite {
  port: number;
  stop(): Promise<void>;
}

/** Starts dynalite on the LevelDB in `dbPath`, letting in only `credentials`. */
type Runner = (dbPath: string, credentials: LocalCredentials) => Promise<RunningDynalite>;

/** `serveDynalite` in this thread: what admin commands run for the length of a command. */
async function dynaliteInline(dbPath: string, credentials: LocalCredentials): Promise<RunningDynalite> {
  const server = await serveDynalite(dbPath, credentials);
  return {
    port: (server.address() as { port: number }).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * How each role runs dynalite. `serve` gives it a thread of its own
 * (`local/dynalite-thread.ts`, `docs/architecture.md` "Local mode"): the
 * server's handlers and DynamoDB's stand-in then run on two cores, as they do
 * on two machines in AWS, instead of queueing in one event loop.
 */
const RUNNERS: Readonly<Record<Role, Runner>> = {
  serve: dynaliteThread,
  cli: dynaliteInline,
};

async function startDynalite(
  dataDir: string,
  holderFile: string,
  lockFile: string,
  role: Role,
  run: Runner,
): Promise<LocalDynamo> {
  const credentials: LocalCredentials = {
    accessKeyId: `FF${randomBytes(12).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(24).toString('base64url'),
  };
  let running: RunningDynalite;
  try {
    running = await run(join(dataDir, 'db'), credentials);
  } catch (error) {
    await rm(lockFile, { force: true });
    throw error;
  }
  const { port } = running;
  await writeFile(holderFile, JSON.stringify({ pid: process.pid, port, role, credentials } satisfies Holder), {
    mode: 0o600,
  });
  await chmod(holderFile, 0o600);
  let closed = false;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    credentials,
    owner: true,
    close: async () => {
      if (closed) return;
      closed = true;
      await running.stop();
      const holder = await readHolder(holderFile);
      if (holder?.pid === process.pid) await rm(holderFile, { force: true });
      await rm(lockFile, { force: true });
    },
  };
}

/** An in-memory dynalite for tests; returns its endpoint and a close function. */
export async function startMemoryDynalite(): Promise<{ endpoint: string; close(): Promise<void> }> {
  closeDynaliteIterators();
  syncDynaliteReads();
  const dynalite = require('dynalite') as (options: Record<string, unknown>) => Server;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
