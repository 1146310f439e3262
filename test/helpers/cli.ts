/** The command line under test: an output sink for the library entry points and `vcoll` as a child process. */
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import type { RunCommandOptions } from '../../src/cli/run-command.js';

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

/** `vcoll run`'s options as the command line defaults them (sim, p = 8, auto, JSON): what in-process runs of runRun start from. */
export const RUN_DEFAULTS: RunCommandOptions = {
  transport: 'sim',
  p: 8,
  op: 'gatherv',
  algorithm: 'auto',
  dist: 'random',
  b: 100,
  rho: 5,
  root: 0,
  alpha: 100,
  beta: 1,
  gamma: 0,
  unitBytes: 1,
  seed: 1,
  persistent: false,
  reps: 1,
  format: 'json',
};
