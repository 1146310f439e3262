/**
 * Worker-threads rank program: runs the scenarios of comm-scenarios.ts listed in `args.batch`
 * one after the other, each on a fresh duplicate of the world (so a wildcard receive at the end
 * of one scenario can never match the next one's traffic); resolves with their results.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import { scenarios } from './comm-scenarios.js';

export interface Step {
  readonly scenario: keyof typeof scenarios;
  readonly args?: unknown;
}

export default async function program(comm: Communicator, args: { batch: readonly Step[] }): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const step of args.batch) {
    const dup = (await comm.split(0, comm.rank)) as Communicator;
    const run = scenarios[step.scenario] as (c: Communicator, a: unknown) => Promise<unknown>;
    out.push(await run(dup, step.args));
  }
  return out;
}
