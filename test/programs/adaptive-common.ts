/**
 * Shared by the adaptive gatherv/scatterv tests and their threads program: problem
 * instances, deterministic block contents, plan inputs and result checks.
 */
import type { Communicator } from '../../src/comm/communicator.js';
import type { CostModel } from '../../src/model/cost-model.js';
import type { AdaptiveRule } from '../../src/trees/adaptive.js';
import type { GathervPlanInput, ScattervPlanInput } from '../../src/collectives/variant.js';

export interface Instance {
  readonly sizes: readonly number[];
  readonly root: number;
  readonly unitBytes: number;
  /** Root displacements (elements); undefined = packed in rank order. */
  readonly displs?: readonly number[];
}

export interface AdaptiveFlags {
  readonly lemma4?: boolean;
  readonly overlap?: boolean;
  readonly rule?: AdaptiveRule;
  readonly inPlace?: boolean;
}

export const SENTINEL = 0xee;

/** Byte j of rank i's block (salted so two executions can carry different data). */
export function blockByte(i: number, j: number, salt: number): number {
  return (i * 131 + j * 7 + salt * 29 + 1) & 255;
}

export function blockData(i: number, bytes: number, salt: number): Uint8Array {
  const b = new Uint8Array(bytes);
  for (let j = 0; j < bytes; j++) b[j] = blockByte(i, j, salt);
  return b;
}

export function packedDispls(sizes: readonly number[]): number[] {
  const d: number[] = [];
  let at = 0;
  for (const s of sizes) {
    d.push(at);
    at += s;
  }
  return d;
}

/** Elements the root's buffer needs for `displs` (plus `slack`). */
export function extent(inst: Instance, slack = 3): number {
  const d = inst.displs ?? packedDispls(inst.sizes);
  let e = 0;
  inst.sizes.forEach((s, i) => {
    if (s > 0) e = Math.max(e, d[i] + s);
  });
  return e + slack;
}

/** Scrambled displacements: blocks in a random order with random gaps (rnd in [0, 1)). */
export function scrambledDispls(sizes: readonly number[], rnd: () => number): number[] {
  const order = sizes.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const d = new Array<number>(sizes.length).fill(0);
  let at = 0;
  for (const i of order) {
    at += Math.floor(rnd() * 3);
    d[i] = at;
    at += sizes[i];
  }
  return d;
}

/** What gatherSetup and scatterSetup share: this rank's view of the instance and the common plan-input fields. */
function planBase(comm: Communicator, inst: Instance, model: CostModel, flags: AdaptiveFlags) {
  const me = comm.rank;
  const isRoot = me === inst.root;
  const inPlace = isRoot && flags.inPlace === true;
  const displs = inst.displs ?? packedDispls(inst.sizes);
  const fields = {
    comm,
    root: inst.root,
    unitBytes: inst.unitBytes,
    count: inst.sizes[me],
    counts: isRoot ? [...inst.sizes] : undefined,
    displs: isRoot ? displs : undefined,
    inPlace,
    model,
    adaptive: { lemma4: flags.lemma4 ?? false, overlap: flags.overlap ?? true, rule: flags.rule ?? 'exact' } as const,
  };
  return { me, isRoot, inPlace, displs, fields };
}

export interface GatherSetup {
  readonly input: GathervPlanInput;
  /** Root only: the receive buffer. */
  readonly recv: Uint8Array | undefined;
  /** Rewrites this rank's block with the given salt (persistent re-execution). */
  refill(salt: number): void;
}

export function gatherSetup(comm: Communicator, inst: Instance, model: CostModel, flags: AdaptiveFlags = {}, salt = 0): GatherSetup {
  const { me, isRoot, inPlace, displs, fields } = planBase(comm, inst, model, flags);
  const u = inst.unitBytes;
  const recv = isRoot ? new Uint8Array(extent(inst) * u).fill(SENTINEL) : undefined;
  const send = inPlace ? new Uint8Array(0) : blockData(me, inst.sizes[me] * u, salt);
  const refill = (s: number): void => {
    const b = blockData(me, inst.sizes[me] * u, s);
    if (inPlace) {
      if (b.length > 0) (recv as Uint8Array).set(b, displs[me] * u);
    }
    else send.set(b);
  };
  if (inPlace) refill(salt);
  const input: GathervPlanInput = { ...fields, send, recv };
  return { input, recv, refill };
}

/** Mismatches of the root's buffer after a gather (empty list = correct and nothing else written). */
export function checkGathered(inst: Instance, recv: Uint8Array, salt: number): string[] {
  const u = inst.unitBytes;
  const displs = inst.displs ?? packedDispls(inst.sizes);
  const owner = new Int32Array(recv.length).fill(-1);
  const bad: string[] = [];
  inst.sizes.forEach((s, i) => {
    for (let j = 0; j < s * u; j++) {
      const at = displs[i] * u + j;
      owner[at] = i;
      if (recv[at] !== blockByte(i, j, salt)) bad.push(`block ${i} byte ${j}`);
    }
  });
  for (let at = 0; at < recv.length; at++) if (owner[at] < 0 && recv[at] !== SENTINEL) bad.push(`byte ${at} outside the blocks written`);
  return bad.slice(0, 5);
}

export interface ScatterSetup {
  readonly input: ScattervPlanInput;
  readonly recv: Uint8Array;
  /** Root only: rewrites the send buffer with the given salt. */
  refill(salt: number): void;
}

export function scatterSetup(comm: Communicator, inst: Instance, model: CostModel, flags: AdaptiveFlags = {}, salt = 0): ScatterSetup {
  const { me, isRoot, inPlace, displs, fields } = planBase(comm, inst, model, flags);
  const u = inst.unitBytes;
  const send = isRoot ? new Uint8Array(extent(inst) * u).fill(SENTINEL) : undefined;
  const refill = (s: number): void => {
    if (send === undefined) return;
    inst.sizes.forEach((n, i) => {
      if (n > 0) send.set(blockData(i, n * u, s), displs[i] * u);
    });
  };
  refill(salt);
  const recv = new Uint8Array(inPlace ? 0 : inst.sizes[me] * u).fill(SENTINEL);
  const input: ScattervPlanInput = { ...fields, recv, send };
  return { input, recv, refill };
}

/** Mismatches of one rank's received block after a scatter. */
export function checkScattered(rank: number, recv: Uint8Array, salt: number): string[] {
  const bad: string[] = [];
  for (let j = 0; j < recv.length; j++) if (recv[j] !== blockByte(rank, j, salt)) bad.push(`rank ${rank} byte ${j}`);
  return bad.slice(0, 5);
}
