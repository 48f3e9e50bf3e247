import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/footfall.js', import.meta.url));

const env = { ...process.env, FOOTFALL_DATA: '', PORT: '' };

/** Runs `footfall …` to completion and returns its exit code and output. */
export function runCli(args: string[]): { status: number; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000 });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** Starts `footfall --data DIR serve --port 0 --json …` and resolves with its URL once it listens. */
export async function startServeProcess(dataDir: string, extra: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, '--data', dataDir, 'serve', '--port', '0', '--json', ...extra], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout! });
  let buffer = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 60_000);
    lines.on('line', (line) => {
      buffer += line;
      try {
        const parsed = JSON.parse(buffer) as { url: string };
        clearTimeout(timer);
        resolve(parsed.url);
      } catch {
        // Pretty-printed JSON spans several lines.
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return { child, url };
}
