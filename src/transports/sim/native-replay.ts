/**
 * The replay loop in C (native/sim/vcoll_sim.c, built by `npm run build:sim`): its typed
 * interface and its loading. Optional: sim/replay.ts runs its own loop when the addon is not
 * built (or VCOLL_SIM_NATIVE=0), with the same results; the addon is that loop compiled, for
 * speed (docs/measurements.md).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** `replay`'s parameter slots (vcoll_sim.c P_*). */
export const P = {
  p: 0,
  n: 1,
  k: 2,
  duplex: 3,
  unit: 4,
  data: 5,
  runs: 6,
  model: 7,
  alpha: 8,
  beta: 9,
  gamma: 10,
  intraAlpha: 11,
  intraBeta: 12,
  interAlpha: 13,
  interBeta: 14,
  trace: 15,
} as const;
export const PARAM_COUNT = 16;
/** Model codes (vcoll_sim.c M_*). */
export const MODEL_CODES = { linear: 0, pairwise: 1, hierarchical: 2 } as const;
/** `replay`'s output slots (vcoll_sim.c O_*). */
export const O = { messages: 0, bytes: 1, now: 2, live: 3, finished: 4 } as const;
export const OUT_COUNT = 5;

export interface SimAddon {
  /**
   * Runs a reset replay to its end on its own arrays (replay.ts documents each): true, or with
   * `params[P.trace]` the trace's records, [messages: (from, to, the send's schedule operation,
   * bytes, start, end) each, copies: (rank, bytes, start, end) each]; false when memory ran out.
   */
  replay(
    io: Int32Array,
    ro: Int32Array,
    st: Int32Array,
    stepBase: Int32Array,
    sm: Int32Array,
    pieceLo: Int32Array,
    pieceDst: Int32Array,
    pieceSrc: Int32Array,
    pieceLen: Int32Array,
    pieceShort: Uint8Array,
    mem: Uint8Array,
    params: Float64Array,
    nodeOf: Int32Array,
    alpha: Float64Array,
    beta: Float64Array,
    gamma: Float64Array,
    out: Float64Array,
  ): boolean | [Float64Array, Float64Array];
}

/** Where node-gyp puts the addon (the same from src/ and from dist/: both 3 levels down). */
export const SIM_ADDON_PATH = fileURLToPath(new URL('../../../native/sim/build/Release/vcoll_sim.node', import.meta.url));

let loaded: SimAddon | null | undefined;
let why = '';

/** The addon, or undefined (not built, not loadable, or VCOLL_SIM_NATIVE=0: `simAddonMissing` says which). */
export function simAddon(): SimAddon | undefined {
  if (loaded !== undefined) return loaded ?? undefined;
  loaded = null;
  if (process.env.VCOLL_SIM_NATIVE === '0') {
    why = 'VCOLL_SIM_NATIVE=0';
    return undefined;
  }
  if (!existsSync(SIM_ADDON_PATH)) {
    why = `not built (no ${SIM_ADDON_PATH}: npm run build:sim)`;
    return undefined;
  }
  try {
    loaded = createRequire(import.meta.url)(SIM_ADDON_PATH) as SimAddon;
  } catch (e) {
    why = `${SIM_ADDON_PATH} does not load (${e instanceof Error ? e.message : String(e)}): npm run build:sim`;
    return undefined;
  }
  return loaded;
}

/** Why simAddon() is undefined ('' when it is there). */
export function simAddonMissing(): string {
  simAddon();
  return why;
}
