/**
 * `vcoll run --transport sim` (likewise `vcoll bench` and `vcoll inter` on the simulator) at a
 * p whose ranks need more JavaScript heap than Node's default limit (about 4 GiB) but fit the
 * memory limit (VCOLL_MAX_MEMORY, default half the RAM): the same command runs again in a child Node with --max-old-space-size raised
 * (util/limits.ts heapToRaise) and the simulator's semi-space (SIM_SEMI_SPACE_MIB), its standard streams the parent's, its exit status the
 * command's. So `vcoll run --transport sim --p 1048576` needs no Node flag. Once at most
 * (VCOLL_HEAP_RERUN marks the child); VCOLL_HEAP_RERUN=off turns it off.
 */
import { spawnSync } from 'node:child_process';
import { formatBytes, simHeapFlags } from '../util/limits.js';

const MARK = 'VCOLL_HEAP_RERUN';

/**
 * Runs this command again with a heap of `mib` MiB and returns its exit status, or undefined
 * when it must not (already the rerun, or turned off): the caller goes on in this process.
 */
export function rerunWithHeap(mib: number): number | undefined {
  const mark = process.env[MARK];
  if (mark === '1' || mark === 'off') return undefined;
  process.stderr.write(`vcoll: running with a ${formatBytes(mib * 2 ** 20)} JavaScript heap (node --max-old-space-size=${mib}; ${MARK}=off to keep Node's limit)\n`);
  // the user's own semi-space flag wins over the simulator's (util/limits.ts SIM_SEMI_SPACE_MIB)
  const own = process.execArgv.filter((a) => !a.startsWith('--max-old-space-size'));
  const flags = simHeapFlags(mib).filter((f) => !own.some((a) => a.split('=')[0] === f.split('=')[0]));
  const args = [...own, ...flags, ...process.argv.slice(1)];
  const child = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, [MARK]: '1' } });
  if (child.error !== undefined) throw child.error;
  if (child.signal !== null) {
    process.kill(process.pid, child.signal);
    return 1;
  }
  return child.status ?? 1;
}

/**
 * When `mib` is given (the command's ranks need a larger heap than Node's), runs the command
 * again with it and sets process.exitCode to the child's status: true when that happened and the
 * caller must stop; false when the caller goes on in this process.
 */
export function ranAgainWithHeap(mib: number | undefined): boolean {
  if (mib === undefined) return false;
  const status = rerunWithHeap(mib);
  if (status === undefined) return false;
  process.exitCode = status;
  return true;
}
