/**
 * Exact completion time of a gather or scatter tree under any cost model
 * (seed 004 Definition 2; k-ported with greedy port assignment), in O(p·k).
 *
 * Gather, node v with operations o_1..o_n (its receives in order, the local copy inserted
 * after `copyAt[v]` receives): one-ported, t ← max(t, ready(o)) + dur(o), where a receive
 * from child c is ready at C(c) and lasts comm(c → v, S(c)), and the copy is ready at 0
 * and lasts copy(v, m_v). C(v) is the final t; a leaf has C = 0 (or its copy under
 * `copyAll`, seed 000 Lemma 4). With k ports each operation goes, in sequence order, to
 * the port that frees first.
 *
 * Scatter runs the same operations in reverse order: v sends segment S(c) to c, then c
 * scatters on; C(v) = max over operations of (its end + C(c)). With one port the two are
 * equal (time reversal of the same schedule), as seed 004 §5 states.
 */
import { InvalidArgumentError } from '../errors.js';
import { requireModelFits, type CostModel } from '../model/cost-model.js';
import { postOrder, type Tree } from './tree.js';

export type Operation = 'gather' | 'scatter';

export interface Evaluation {
  /** Completion time of the whole tree. */
  readonly time: number;
  /** Completion time C(v) of the subtree rooted at every rank. */
  readonly completion: Float64Array;
  /** Size S(v) (sum of blocks) of the subtree rooted at every rank. */
  readonly subtreeSize: Float64Array;
}

export function evaluate(
  tree: Tree,
  sizes: ArrayLike<number>,
  model: CostModel,
  operation: Operation = 'gather',
): Evaluation {
  const p = tree.p;
  if (sizes.length !== p) throw new InvalidArgumentError('sizes', `has ${sizes.length} entries, the tree spans ${p} ranks`);
  requireModelFits(model, p);
  const order = postOrder(tree);
  const S = new Float64Array(p);
  const C = new Float64Array(p);
  const k = model.ports;
  const ports = new PortClock(k);
  for (const v of order) {
    const kids = tree.children[v];
    let s = sizes[v];
    for (const c of kids) s += S[c];
    S[v] = s;
    // A node that receives something copies its own block; so does the root always (it assembles
    // the result, even alone: p = 1), and every node under copyAll.
    const copyCost = kids.length > 0 || model.copyAll || v === tree.root ? model.copy(v, sizes[v]) : 0;
    if (kids.length === 0) {
      C[v] = copyCost;
      continue;
    }
    const at = tree.copyAt[v];
    if (operation === 'gather') {
      if (k === 1) {
        let t = 0;
        for (let j = 0; j < kids.length; j++) {
          if (j === at) t += copyCost;
          const c = kids[j];
          t = Math.max(t, C[c]) + model.comm(c, v, S[c]);
        }
        if (at === kids.length) t += copyCost;
        C[v] = t;
      } else {
        ports.reset();
        let end = 0;
        for (let j = 0; j < kids.length; j++) {
          if (j === at) end = Math.max(end, ports.run(0, copyCost));
          const c = kids[j];
          end = Math.max(end, ports.run(C[c], model.comm(c, v, S[c])));
        }
        if (at === kids.length) end = Math.max(end, ports.run(0, copyCost));
        C[v] = end;
      }
    } else {
      ports.reset();
      let end = 0;
      if (at === kids.length) end = Math.max(end, ports.run(0, copyCost));
      for (let j = kids.length - 1; j >= 0; j--) {
        const c = kids[j];
        end = Math.max(end, ports.run(0, model.comm(v, c, S[c])) + C[c]);
        if (j === at) end = Math.max(end, ports.run(0, copyCost));
      }
      C[v] = end;
    }
  }
  return { time: C[tree.root], completion: C, subtreeSize: S };
}

/** Completion time only. */
export function completionTime(tree: Tree, sizes: ArrayLike<number>, model: CostModel, operation: Operation = 'gather'): number {
  return evaluate(tree, sizes, model, operation).time;
}

/**
 * Greedy k-port assignment: each operation, in sequence order, goes to the port that frees
 * first and starts when both that port and its data are ready.
 */
export class PortClock {
  private readonly free: Float64Array;

  constructor(ports: number) {
    this.free = new Float64Array(ports);
  }

  reset(): void {
    this.free.fill(0);
  }

  /** Runs an operation that can start at `ready` and lasts `duration`; returns its end. */
  run(ready: number, duration: number): number {
    const f = this.free;
    let best = 0;
    for (let q = 1; q < f.length; q++) if (f[q] < f[best]) best = q;
    const end = Math.max(f[best], ready) + duration;
    f[best] = end;
    return end;
  }
}
