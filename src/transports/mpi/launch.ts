/**
 * The program every rank of `runMpi` runs under mpirun:
 *   node launch.js <program module URL> <arguments file> <output directory>
 * Loads the rank program (`export default async function (comm, args)`, as for runThreads),
 * reads its arguments (v8-serialized), runs it on the MPI world communicator (runMpiRank: a
 * failing rank aborts the job naming itself) and writes its result, v8-serialized, to
 * `<output directory>/rank-<R>.bin`.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { Communicator } from '../../comm/communicator.js';
import { runMpiRank } from './world.js';

const [programUrl, argsFile, outDir] = process.argv.slice(2);
if (programUrl === undefined || argsFile === undefined || outDir === undefined) {
  process.stderr.write('usage: launch <program module URL> <arguments file> <output directory>\n');
  process.exit(2);
}

await runMpiRank(async (comm) => {
  const mod = (await import(programUrl)) as { default?: unknown };
  if (typeof mod.default !== 'function') throw new Error(`${programUrl} has no default export function (comm, args)`);
  const args: unknown = deserialize(readFileSync(argsFile));
  const result: unknown = await (mod.default as (c: Communicator, a: unknown) => unknown)(comm, args);
  writeFileSync(join(outDir, `rank-${comm.rank}.bin`), serialize(result));
});
