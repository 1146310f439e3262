/**
 * Scratch buffers of the collectives (a tree's packed buffer of a subtree's blocks, an adaptive
 * gather root's growing range buffer, a subtree's counts): on the simulator, memory V8 is told
 * of in steps of a GiB rather than 64 MiB.
 *
 * Why: V8 counts every ArrayBuffer's bytes as external memory and starts a full (mark-compact)
 * collection each time that memory has grown by 64 MiB since the last one ("external memory
 * pressure" in node --trace-incremental-marking). A simulation of 2^20 ranks allocates over a
 * GiB of such buffers while its heap holds gigabytes of rank state: a full collection of a 4–5
 * GiB heap every few seconds (15 in one binomial gatherv at 2^20, most of the run's time).
 * Memory of a SharedArrayBuffer is not counted that way (measured: no such collection with
 * it), so on the simulator scratch buffers are SharedArrayBuffer memory: pieces of up to
 * SLAB_PIECE_MAX bytes cut from 1 MiB slabs (8-byte aligned), larger ones each their own; a
 * slab is freed once none of its pieces is referenced. So that garbage of such memory cannot
 * pile up unseen (e.g. many runs in one process), every REPORT_STEP bytes of it made, one
 * short-lived ordinary ArrayBuffer of REPORT_NUDGE bytes (never touched: no pages written)
 * makes V8 collect once. A buffer whose owner is done with it (an adaptive range buffer that
 * grew out of it) may be given back (releaseScratch): buffers of a power-of-two size are then
 * kept, up to RELEASED_MAX bytes in all, and handed out again for that size (zeroed first). On
 * the real transports (each rank its own process or thread, a buffer
 * possibly handed to native code or another thread) scratch buffers are plain Uint8Arrays.
 * Typed arrays of up to 64 bytes live on V8's heap: always plain.
 */
import type { Communicator } from './communicator.js';

/** The largest buffer cut from a slab (bytes); larger ones get a SharedArrayBuffer of their own. */
export const SLAB_PIECE_MAX = 64 * 1024;
const SLAB_BYTES = 1 << 20;
/** Shared memory made between two nudges of V8 (bytes). */
export const REPORT_STEP = 2 ** 30;
/** Just over V8's 64 MiB step of external memory: one collection. */
const REPORT_NUDGE = 65 * 2 ** 20;
/** V8 keeps typed arrays of at most this many bytes on its heap (no ArrayBuffer memory at all). */
const ON_HEAP_MAX = 64;

/** Bytes of released buffers kept for reuse at most. */
export const RELEASED_MAX = 256 * 2 ** 20;
/** Released simulator buffers by size (powers of two only). */
const released = new Map<number, Uint8Array[]>();
let releasedBytes = 0;

let slab: Uint8Array = new Uint8Array(0);
let used = 0;
let unreported = 0;
const made = { slabs: 0, own: 0, nudges: 0, reused: 0 };

/** A zeroed buffer of `bytes` for scratch use by a collective on `comm` (see the module comment). */
export function scratchBuffer(comm: Pick<Communicator, 'clock'>, bytes: number): Uint8Array {
  if (comm.clock === undefined || bytes <= ON_HEAP_MAX) return new Uint8Array(bytes);
  const again = released.get(bytes)?.pop();
  if (again !== undefined) {
    releasedBytes -= bytes;
    made.reused++;
    return again.fill(0);
  }
  if (bytes > SLAB_PIECE_MAX) {
    made.own++;
    return new Uint8Array(sharedMemory(bytes));
  }
  if (used + bytes > slab.length) {
    slab = new Uint8Array(sharedMemory(SLAB_BYTES));
    used = 0;
    made.slabs++;
  }
  const piece = slab.subarray(used, used + bytes);
  used += (bytes + 7) & ~7;
  return piece;
}

function sharedMemory(bytes: number): SharedArrayBuffer {
  unreported += bytes;
  if (unreported >= REPORT_STEP) {
    unreported = 0;
    made.nudges++;
    void new ArrayBuffer(REPORT_NUDGE);
  }
  return new SharedArrayBuffer(bytes);
}

/**
 * Gives back a buffer of scratchBuffer(comm, …) that nothing will read or write any more; on the
 * simulator, one of a power-of-two size is kept for the next scratchBuffer of that size.
 */
export function releaseScratch(comm: Pick<Communicator, 'clock'>, buffer: Uint8Array): void {
  const n = buffer.length;
  if (comm.clock === undefined || n <= ON_HEAP_MAX || (n & (n - 1)) !== 0 || releasedBytes + n > RELEASED_MAX) return;
  if (!(buffer.buffer instanceof SharedArrayBuffer)) return;
  let list = released.get(n);
  if (list === undefined) {
    list = [];
    released.set(n, list);
  }
  list.push(buffer);
  releasedBytes += n;
}

/** What scratchBuffer made so far on the simulator: slabs, buffers of their own, nudges of V8, buffers reused (for tests). */
export function scratchMade(): { readonly slabs: number; readonly own: number; readonly nudges: number; readonly reused: number } {
  return { ...made };
}
