/**
 * The public shapes of vcoll's irregular collectives (MPI semantics, Traff18 §3).
 *
 * gatherv: every rank contributes `send` (its block: count = send.length / unitBytes
 * elements); the root receives all blocks into `recv` at `displs[i] * unitBytes`, block i
 * being `counts[i] * unitBytes` bytes. Only the root passes `recv`, `counts`, `displs`; every
 * other rank knows only its own count. With `inPlace` the root's block is already at its
 * displacement in `recv` and is neither copied nor read from `send`.
 *
 * scatterv: the root passes `send`, `counts`, `displs`; every rank receives its block into
 * `recv` (count = `count` elements, default recv.length / unitBytes). With `inPlace` the
 * root's block stays in `send` and the root's `recv` is not written.
 *
 * Counts and displacements are in elements of `unitBytes` bytes (default 1); the α+βm
 * model costs of `model` are per element too (as in the papers).
 */
import type { Communicator } from '../comm/communicator.js';
import type { CostModel } from '../model/cost-model.js';
import type { VVariantName } from './v-variants.js';

/**
 * The MPI library's own collective (MPI_Gatherv, MPI_Scatterv, …, through `comm.native`) as a
 * variant, so that vcoll's algorithms and what the library ships are compared in one table. It
 * exists only where the communicator has `native` (the MPI transport: `mpirun … node app.js`
 * with mpiWorld, or runMpi); elsewhere asking for it fails on every rank with an
 * UnavailableError('mpi-transport'). `auto` never picks it.
 */
export const MPI_NATIVE = 'mpi-native' as const;
export type NativeAlgorithm = typeof MPI_NATIVE;

/** Whether `algorithm` names a variant that needs the transport's own collectives (`comm.native`). */
export function requiresNative(algorithm: string): algorithm is NativeAlgorithm {
  return algorithm === MPI_NATIVE;
}

/**
 * `names` without the variants that need the transport's own collectives: what the simulator
 * and worker threads can run (tests, benchmarks and listings over those transports enumerate this).
 */
export function portableAlgorithms<T extends string>(names: readonly T[]): Exclude<T, NativeAlgorithm>[] {
  return names.filter((a): a is Exclude<T, NativeAlgorithm> => !requiresNative(a));
}

/**
 * The algorithms of gatherv / scatterv: the names of the variant table (collectives/v-variants.ts,
 * where V_ALGORITHMS, PORTABLE_V_ALGORITHMS and MODEL_TREE_ALGORITHMS are) and 'auto'.
 */
export type VAlgorithm = VVariantName | 'auto';

export interface GathervArgs {
  readonly root: number;
  /** This rank's block (ignored at the root with `inPlace`). */
  readonly send: Uint8Array;
  /** Root only. */
  readonly recv?: Uint8Array;
  /** Root only: elements per rank. */
  readonly counts?: readonly number[];
  /** Root only: element offsets in `recv` (default: the prefix sums of `counts`). */
  readonly displs?: readonly number[];
  /** Bytes per element (default 1); the same on every rank. */
  readonly unitBytes?: number;
  /** Root only: its block is already in place in `recv`. */
  readonly inPlace?: boolean;
}

export interface ScattervArgs {
  readonly root: number;
  /** This rank's receive buffer (not written at the root with `inPlace`). */
  readonly recv: Uint8Array;
  /** Elements this rank receives (default recv.length / unitBytes). */
  readonly count?: number;
  /** Root only. */
  readonly send?: Uint8Array;
  readonly counts?: readonly number[];
  readonly displs?: readonly number[];
  readonly unitBytes?: number;
  readonly inPlace?: boolean;
}

export interface AdaptiveVariantOptions {
  /** Traff18 Lemma 4: every rank copies its block into the communication buffer (default false). */
  readonly lemma4?: boolean;
  /** Gather only: overlap the construction with the data phase (Traff18 §3; default true). */
  readonly overlap?: boolean;
  /**
   * How a join whose two ranges both lack the root picks its receiver (default 'exact'):
   * 'exact' = the direction that completes first in `model`; 'lemma1' = Traff18 Lemma 1 as
   * written (the tree with the larger completion time receives). See trees/adaptive.ts.
   */
  readonly rule?: 'exact' | 'lemma1';
}

export interface AutoOptions {
  /**
   * What each dependent communication round costs beyond the model's α (model units;
   * default 0): a rank that must wait for a message before it can go on pays it once per
   * round, e.g. a worker thread waking up (src/run/calibrate.ts measures it). auto adds
   * rounds × roundLatency to every candidate's prediction (linear: 1 round; the tree
   * algorithms: their planning rounds + tree height). 0 on the simulator, whose model already
   * is the machine.
   */
  readonly roundLatency?: number;
}

export interface CollectiveOptions {
  /** Default 'auto' (which never picks 'mpi-native': that one runs only when asked for, on the MPI transport). */
  readonly algorithm?: VAlgorithm;
  /**
   * The cost model trees are built for (optimal, binary, two-block, the Dichev10 trees, auto); per element.
   * Default: linearModel({ alpha: 100, beta: 1, gamma: 0 }) … see collectives/defaults.ts.
   */
  readonly model?: CostModel;
  readonly adaptive?: AdaptiveVariantOptions;
  /** How `auto` predicts (every rank must pass the same). */
  readonly auto?: AutoOptions;
}

/** What one rank learns about the operation it took part in. */
export interface CollectiveInfo {
  /** The algorithm that ran ('auto' resolved to the one it chose). */
  readonly algorithm: Exclude<VAlgorithm, 'auto'>;
  /** Rounds of the (distributed) construction or schedule distribution phase (0 if none). */
  readonly constructionRounds: number;
  /** Levels of the data phase's communication tree (linear: 1; p = 1: 0). */
  readonly height: number;
}

/** A planned (persistent) collective: buffers and arguments bound at init, like MPI_Gatherv_init; `I`: what it reports. */
export interface PersistentCollective<I = CollectiveInfo> {
  readonly info: I;
  /** Runs the data phase once; may be called again after it resolved. */
  start(): Promise<void>;
  /**
   * Present where the transport can run the plan's data phase to completion in the calling
   * thread (a compiled schedule on the MPI transport): `start()` without a promise, for
   * latency-critical loops, as `mpiBlocking` is for point-to-point. It returns when this rank's
   * part is done and throws what `start()` would reject with; the event loop stands still
   * meanwhile (the thread waits inside MPI, under the watchdog), so every rank must be able to
   * finish without this rank's JavaScript running.
   */
  startBlocking?(): void;
}

export type GathervFn = (comm: Communicator, args: GathervArgs, options?: CollectiveOptions) => Promise<CollectiveInfo>;
export type ScattervFn = (comm: Communicator, args: ScattervArgs, options?: CollectiveOptions) => Promise<CollectiveInfo>;
