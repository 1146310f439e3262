/**
 * The Traff17 Table 1 comparison: completion times of the linear, binary, oblivious,
 * adaptive and optimal trees for one problem, with the root fixed (MPI's externally given
 * root, ⌊p/2⌋ by default as in the paper) and with the best root each construction finds.
 */
import { InvalidArgumentError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import { validateRoot, validateSizes } from '../model/validate.js';
import type { OptimalMode } from './optimal/homogeneous.js';
import { solveBinary, type BinarySolution } from './optimal/binary.js';
import { findTreeAlgorithm } from './registry.js';
import type { Tree } from './tree.js';
import type { BuiltTree } from './types.js';

export const COMPARED_ALGORITHMS = ['linear', 'binary', 'oblivious', 'adaptive', 'optimal'] as const;
export type ComparedAlgorithm = (typeof COMPARED_ALGORITHMS)[number];
export type RootKind = 'fixed' | 'best';
export type RootSelection = RootKind | 'both';

export interface ComparisonRow {
  readonly algorithm: ComparedAlgorithm;
  readonly root: RootKind;
  readonly rootRank: number;
  readonly time: number;
  /** Set on `optimal` rows when the other optimal mode (exact vs paper) gives a different result. */
  readonly alternative?: { readonly mode: OptimalMode; readonly time: number; readonly rootRank: number };
}

export interface CompareOptions {
  readonly roots?: RootSelection;
  /** The fixed root (default ⌊p/2⌋). */
  readonly fixedRoot?: number;
  readonly algorithms?: readonly ComparedAlgorithm[];
  /** Which optimal DP reports as `optimal`: the true optimum (default) or the paper's convention. */
  readonly optimalMode?: OptimalMode;
  /** Also compute the other optimal mode and attach it where it differs (default true). */
  readonly reportAlternative?: boolean;
  readonly onProgress?: (step: { algorithm: ComparedAlgorithm; root: RootKind; done: number; total: number }) => void;
}

export function parseRootSelection(v: string, field = 'root'): RootSelection {
  if (v === 'fixed' || v === 'best' || v === 'both') return v;
  throw new InvalidArgumentError(field, `must be fixed, best or both, got "${v}"`);
}

export function parseComparedAlgorithms(list: string, field = 'algorithms'): ComparedAlgorithm[] {
  const out: ComparedAlgorithm[] = [];
  for (const raw of list.split(',')) {
    const a = raw.trim().toLowerCase();
    if (a === '') continue;
    if (!(COMPARED_ALGORITHMS as readonly string[]).includes(a)) {
      throw new InvalidArgumentError(field, `unknown algorithm "${raw}"; choose from ${COMPARED_ALGORITHMS.join(', ')}`);
    }
    out.push(a as ComparedAlgorithm);
  }
  if (out.length === 0) throw new InvalidArgumentError(field, 'is empty');
  return out;
}

export function compareTrees(sizes: ArrayLike<number>, model: CostModel, options: CompareOptions = {}): ComparisonRow[] {
  const m = validateSizes(sizes);
  const p = m.length;
  const roots = parseRootSelection(options.roots ?? 'both');
  const fixedRoot = validateRoot(options.fixedRoot ?? Math.floor(p / 2), p, 'fixedRoot');
  const algorithms = options.algorithms ?? COMPARED_ALGORITHMS;
  const mode = options.optimalMode ?? 'exact';
  const other: OptimalMode = mode === 'exact' ? 'paper' : 'exact';
  const kinds: RootKind[] = roots === 'both' ? ['fixed', 'best'] : [roots];
  const rows: ComparisonRow[] = [];
  for (const algorithm of algorithms) {
    let binary: BinarySolution | undefined; // one table serves the fixed and the best root
    for (const kind of kinds) {
      const root = kind === 'fixed' ? fixedRoot : undefined;
      const onProgress = options.onProgress
        ? (done: number, total: number) => options.onProgress?.({ algorithm, root: kind, done, total })
        : undefined;
      const build = (name: string): BuiltTree => {
        const alg = findTreeAlgorithm(name);
        if (!alg) throw new InvalidArgumentError('algorithm', `no tree algorithm "${name}"`);
        return alg.build(m, model, { root, onProgress });
      };
      if (algorithm === 'binary') {
        binary ??= solveBinary(m, model, { onProgress });
        const built = root === undefined ? binary.best() : binary.rooted(root);
        rows.push({ algorithm, root: kind, rootRank: built.root, time: built.time });
      } else if (algorithm === 'optimal') {
        const main = build(mode === 'exact' ? 'optimal' : 'optimal-paper');
        let alternative: ComparisonRow['alternative'];
        // With a fixed root both modes are the same DP (the paper's fixed-root values follow the
        // symmetric rule, docs/optimal-dp.md), so only best-root rows can differ. An exact tree of
        // the paper's shape (outsidePaperConvention false) is also a paper-mode tree, so the paper
        // optimum then has the same time and the (slower, full-scan) paper DP is skipped.
        const differs = mode === 'paper' || outsidePaperConvention(main.tree);
        if ((options.reportAlternative ?? true) && kind === 'best' && differs) {
          const alt = build(other === 'exact' ? 'optimal' : 'optimal-paper');
          if (alt.time !== main.time || alt.root !== main.root) alternative = { mode: other, time: alt.time, rootRank: alt.root };
        }
        rows.push({ algorithm, root: kind, rootRank: main.root, time: main.time, ...(alternative ? { alternative } : {}) });
      } else {
        const built = build(algorithm);
        rows.push({ algorithm, root: kind, rootRank: built.root, time: built.time });
      }
    }
  }
  return rows;
}

/**
 * True when some node receives two or more subtrees from its left before any from its right:
 * while it is the last rank of its growing range it then takes several messages, the one shape
 * Traff17's best-root DP (paper mode) does not allow. Trees without it are paper-mode trees.
 */
export function outsidePaperConvention(tree: Tree): boolean {
  for (let v = 0; v < tree.p; v++) {
    let left = 0;
    for (const c of tree.children[v]) {
      if (c > v) break;
      if (++left >= 2) return true;
    }
  }
  return false;
}
