/**
 * The simulator's options resolved once for its engines (sim.ts, which runs rank programs,
 * and replay.ts, which replays a whole schedule): the cost model checked against p, the port
 * model as k ports (half or full duplex) and the bytes per model unit.
 */
import { InvalidArgumentError } from '../../errors.js';
import { type CostModel, requireModelFits } from '../../model/cost-model.js';
import type { SimOptions } from './types.js';

export interface EngineOptions {
  readonly model: CostModel;
  /** Transfers a rank may have at once (in any direction unless `duplex`). */
  readonly k: number;
  /** Full duplex: one send and one receive at a time. */
  readonly duplex: boolean;
  /** Bytes per model unit. */
  readonly unit: number;
  /** The model's node of each rank, when it has one. */
  readonly nodes: ArrayLike<number> | undefined;
}

/** Checks `options` for a simulation of p ranks; typed errors name the bad option. */
export function engineOptions(p: number, options: SimOptions): EngineOptions {
  if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('p', `must be an integer >= 1, got ${p}`);
  const model = options?.model;
  if (model === null || typeof model !== 'object' || typeof model.comm !== 'function') {
    throw new InvalidArgumentError('model', 'must be a cost model');
  }
  requireModelFits(model, p);
  const ports = options.ports ?? model.ports;
  let k: number;
  let duplex = false;
  if (ports === 'one-ported') {
    k = 1;
  } else if (ports === 'full-duplex') {
    k = 1;
    duplex = true;
  } else if (typeof ports === 'number' && Number.isInteger(ports) && ports >= 1) {
    k = ports;
  } else {
    throw new InvalidArgumentError('ports', `must be 'one-ported', 'full-duplex' or an integer >= 1, got ${String(ports)}`);
  }
  const unit = options.unitBytes ?? 1;
  if (typeof unit !== 'number' || !(unit > 0) || !Number.isFinite(unit)) {
    throw new InvalidArgumentError('unitBytes', `must be a positive number, got ${String(unit)}`);
  }
  const nodeOf = (model as { nodeOf?: unknown }).nodeOf;
  const nodes =
    nodeOf !== null && typeof nodeOf === 'object' && typeof (nodeOf as ArrayLike<number>).length === 'number' ? (nodeOf as ArrayLike<number>) : undefined;
  return { model, k, duplex, unit, nodes };
}
