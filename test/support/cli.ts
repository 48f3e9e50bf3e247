import { spawn, spawnSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/footfall.js', import.meta.url));

const env = { ...process.env, FOOTFALL_DATA: '', PORT: '' };

/**
 * Runs `footfall …` to completion (killed after `timeoutMs`) and returns its exit code and output.
 * The default sits just under the suite's 120 s test timeout: a command that takes 1 s on a quiet
 * machine takes 5–10 s on 2 busy cores, and a busy machine must not fail a test.
 */
export function runCli(args: string[], timeoutMs = 110_000): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: timeoutMs });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
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
