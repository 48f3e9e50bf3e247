import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/footfall.js', import.meta.url));

const env = { ...process.env, FOOTFALL_DATA: '', PORT: '' };

/** Runs `footfall …` to completion and returns its exit code and output. */
export function runCli(args: string[]): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** Starts `footfall --data DIR serve --port 0 --json …` in a child process; resolves with it and its URL once it listens. */
export { startServe as startServeProcess } from '../../bench/load.js';
