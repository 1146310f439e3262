/**
 * Linear (star) gather/scatter tree: every non-root rank sends its block straight to the
 * root, which receives them in rank order after copying its own block (Traff17 §5.1,
 * "Linear"; what Open MPI and MPICH ship for MPI_Gatherv).
 *
 * Cost: O(p) time and space for a fixed root. Best root (root omitted): the cheapest root,
 * ties to the lowest rank; O(p) under a homogeneous one-ported model without `copyAll`
 * (closed form Σ_{i≠r, m_i>0} (α + β·m_i) + γ·m_r), otherwise every root is simulated
 * exactly as `evaluate` does, O(p²·k).
 *
 * A zero-size block is still a child of the root (the tree spans all ranks) but sends
 * nothing and costs nothing (comm(…, 0) = 0).
 *
 * The module also holds the small input-validation helper the tree builders of this
 * directory share (`prepareProblem`).
 */
import { InvalidArgumentError } from '../errors.js';
import { requireFiniteCosts, requireModelFits, type CostModel } from '../model/cost-model.js';
import { validateRoot, validateSizes } from '../model/validate.js';
import { PortClock } from './evaluate.js';
import { TreeBuilder } from './tree.js';
import type { BuiltTree, RootOption } from './types.js';

/** Validated problem: sizes as Float64Array, p, and the fixed root (undefined = builder chooses). */
export interface Problem {
  readonly m: Float64Array;
  readonly p: number;
  readonly root: number | undefined;
}

/**
 * Validates the public arguments of a tree builder: sizes (non-negative integers, p ≥ 1),
 * the model (a CostModel that fits p ranks, with finite tree times: requireFiniteCosts) and `opts.root` (an integer in [0, p−1] or omitted).
 * Throws InvalidArgumentError naming the field.
 * @internal shared by the builders in src/trees.
 */
export function prepareProblem(sizes: ArrayLike<number>, model: CostModel, opts: RootOption | undefined): Problem {
  const m = validateSizes(sizes);
  const p = m.length;
  if (model === null || typeof model !== 'object' || typeof model.comm !== 'function' || typeof model.copy !== 'function') {
    throw new InvalidArgumentError('model', 'must be a CostModel (see linearModel, pairwiseModel, hierarchicalModel)');
  }
  requireModelFits(model, p);
  requireFiniteCosts(model, m);
  if (opts !== undefined && (opts === null || typeof opts !== 'object')) {
    throw new InvalidArgumentError('opts', 'must be an options object');
  }
  const root = opts?.root === undefined ? undefined : validateRoot(opts.root, p);
  return { m, p, root };
}

/**
 * Exact completion time of the star rooted at r, exactly as `evaluate` computes it:
 * the root copies first (copyAt 0), then receives from every other rank in rank order;
 * with k ports each operation takes the port that frees first.
 */
function starTime(m: Float64Array, model: CostModel, r: number, ports: PortClock): number {
  const p = m.length;
  const k = model.ports;
  const copy = model.copy(r, m[r]); // the root always copies its block (p = 1 too)
  if (p === 1) return copy;
  if (k === 1) {
    let t = copy;
    for (let i = 0; i < p; i++) {
      if (i === r) continue;
      const ready = model.copyAll ? model.copy(i, m[i]) : 0;
      t = Math.max(t, ready) + model.comm(i, r, m[i]);
    }
    return t;
  }
  ports.reset();
  let end = ports.run(0, copy);
  for (let i = 0; i < p; i++) {
    if (i === r) continue;
    end = Math.max(end, ports.run(model.copyAll ? model.copy(i, m[i]) : 0, model.comm(i, r, m[i])));
  }
  return end;
}

/** The star tree rooted at r: the root copies first, then receives in rank order. */
function buildStar(p: number, r: number): TreeBuilder {
  const b = new TreeBuilder(p, r);
  for (let i = 0; i < p; i++) if (i !== r) b.addChild(r, i);
  b.setCopyAt(r, 0);
  return b;
}

/**
 * Linear (star) tree. `opts.root` given: that root; omitted: the cheapest root, ties to the
 * lowest rank.
 */
export function linearTree(sizes: ArrayLike<number>, model: CostModel, opts?: RootOption): BuiltTree {
  const { m, p, root } = prepareProblem(sizes, model, opts);
  const ports = new PortClock(model.ports);
  let r: number;
  let time: number;
  if (root !== undefined) {
    r = root;
    time = starTime(m, model, r, ports);
  } else if (model.linear !== undefined && model.ports === 1 && !model.copyAll) {
    // Closed form: T(r) = Σ_{i≠r, m_i>0}(α + β·m_i) + γ·m_r (p > 1).
    const { alpha, beta, gamma } = model.linear;
    // T(r) = (the sum over all ranks) − comm(m_r) + γ·m_r: minimise the root-dependent part.
    r = 0;
    let bestKey = Infinity;
    for (let i = 0; i < p; i++) {
      const key = (m[i] > 0 ? -(alpha + beta * m[i]) : 0) + (p > 1 ? gamma * m[i] : 0);
      if (key < bestKey) {
        bestKey = key;
        r = i;
      }
    }
    // The chosen root's time in evaluation order (bit-identical to evaluate()).
    time = starTime(m, model, r, ports);
  } else {
    r = 0;
    time = Infinity;
    for (let i = 0; i < p; i++) {
      const t = starTime(m, model, i, ports);
      if (t < time) {
        time = t;
        r = i;
      }
    }
  }
  return { tree: buildStar(p, r).build(), time, root: r };
}
