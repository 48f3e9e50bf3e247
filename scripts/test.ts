import { spawn } from 'node:child_process';

/**
 * `npm test`: the type check, lint and format check run beside the unit and integration tests (vitest) instead of
 * before them. Each check is one single-threaded process while vitest's two workers spend much of their time
 * waiting on dynalite, sockets and child processes, so on two cores the four finish well before the same steps run
 * in a row would. Vitest writes to the terminal as it goes; each check's output is held and printed after vitest's,
 * so lines never interleave. Arguments go to vitest (`npm test -- test/domain`). Exits 1 if any step failed.
 */
const CHECKS = ['typecheck', 'lint', 'format:check'] as const;

type Outcome = { name: string; code: number; output: string; seconds: number };

function run(command: string, args: string[], held: boolean, name: string): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const done = (code: number) => resolve({ name, code, output, seconds: (performance.now() - started) / 1000 });
    child.once('error', (error) => {
      output += String(error);
      done(1);
    });
    child.once('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const checks = CHECKS.map((name) => run(npm, ['run', '--silent', name], true, name));
const tests = run(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)],
  false,
  'vitest',
);
const outcomes = await Promise.all([...checks, tests]);
for (const { name, code, output, seconds } of outcomes.slice(0, CHECKS.length)) {
  const status = code === 0 ? 'passed' : `FAILED (exit ${code})`;
  process.stdout.write(`\n${output}npm run ${name}: ${status} in ${seconds.toFixed(0)} s\n`);
}
const failed = outcomes.filter((o) => o.code !== 0).map((o) => o.name);
if (failed.length > 0) process.stdout.write(`\nnpm test failed: ${failed.join(', ')}\n`);
process.exitCode = failed.length > 0 ? 1 : 0;
