/**
 * How a command line (`vcoll`, `npm start`) ends on an error: a vcoll error is printed as
 * `vcoll: message` with exit status 2 for bad input (INVALID_ARGUMENT, TOO_LARGE) and 1 for
 * a run that failed (COMMUNICATION, INTERNAL); a commander usage error (already printed by
 * commander) exits 2, its help/version exit 0. Anything else is rethrown.
 */
import { CommanderError } from 'commander';
import { VcollError } from '../errors.js';

export function exitOnError(err: unknown): void {
  if (err instanceof VcollError) {
    process.stderr.write(`vcoll: ${err.message}\n`);
    process.exitCode = err.code === 'COMMUNICATION' || err.code === 'INTERNAL' ? 1 : 2;
    return;
  }
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
    return;
  }
  throw err;
}
