import { spawn, spawnSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/footfall.js', import.meta.url));

/** The environment a command sees: no data directory or port from the caller's, and bin/footfall.js's defaults. */
const CLI_ENV_OVERRIDES = { FOOTFALL_DATA: '', PORT: '' };
const CLI_ENV_DEFAULTS = { POWERTOOLS_LOG_LEVEL: 'WARN' };
const env = { ...process.env, ...CLI_ENV_OVERRIDES };

/**
 * Runs `footfall …` to completion (killed after `timeoutMs`) and returns its exit code and output.
 * The default sits just under the suite's 120 s test timeout: a command that takes 1 s on a quiet
 * machine takes 5–10 s on 2 busy cores, and a busy machine must not fail a test.
 */
export function runCli(args: string[], timeoutMs = 110_000): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: timeoutMs });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `footfall …` in this process (the `main` that bin/footfall.js runs) and returns its exit code and what it
 * wrote to stdout and stderr, as `runCli` does without starting Node and loading the CLI again for each command.
 * `env` is set (`undefined` unsets) for the call only, as a process's environment would be.
 * For tests of what a command does; tests of the process itself (a port in use, standard input, `serve`) use
 * `runCli`. Calls must not overlap: stdout, stderr and the environment are replaced for the call.
 */
export async function runCliInProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  const saved = new Map<string, string | undefined>();
  for (const [name, value] of Object.entries({ ...CLI_ENV_OVERRIDES, ...env })) {
    saved.set(name, process.env[name]);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  for (const [name, value] of Object.entries(CLI_ENV_DEFAULTS)) {
    if (!saved.has(name)) saved.set(name, process.env[name]);
    process.env[name] ??= value;
  }
  const { main } = await import('../../cli/main.js');
  const captured = { stdout: '', stderr: '' };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture =
    (stream: 'stdout' | 'stderr') =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      captured[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    };
  process.stdout.write = capture('stdout') as typeof process.stdout.write;
  process.stderr.write = capture('stderr') as typeof process.stderr.write;
  try {
    const status = await main(args);
    return { status, ...captured };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** Runs `footfall …` with the bytes of `inputFile` on its standard input through a pipe (as `cat file | footfall …`). */
export async function runCliWithStdin(
  args: string[],
  inputFile: string,
): Promise<{ status: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? -1)));
  // A child that exits before reading everything closes the pipe (EPIPE): its status says why.
  await pipeline(createReadStream(inputFile), child.stdin).catch(() => undefined);
  return { status: await exited, stdout, stderr };
}

/** Starts `footfall --data DIR serve --port 0 --json …` in a child process; resolves with it and its URL once it listens. */
export { startServe as startServeProcess } from '../../bench/load.js';
