/** The command line under test: an output sink for the library entry points and `vcoll` as a child process. */
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';

/** A writable stream that keeps what it was given. */
export function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/** Runs `vcoll …args` (src/cli/main.ts through tsx) to completion; `env`: variables added to the environment. */
export function vcoll(args: readonly string[], env: Readonly<Record<string, string>> = {}): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
}
