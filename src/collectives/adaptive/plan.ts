/**
 * What the adaptive gatherv and scatterv share around the construction: the join context from
 * the caller's options (which models are accepted), the root's check of the ranges' totals
 * against its counts, the CollectiveInfo, the copy position, and the tree the ranks' roles
 * form (for tests and tools).
 */
import type { Communicator } from '../../comm/communicator.js';
import { InvalidArgumentError, VcollError } from '../../errors.js';
import type { CostModel } from '../../model/cost-model.js';
import { TreeBuilder, type Tree } from '../../trees/tree.js';
import { prefixSums, rangeElements } from '../placement.js';
import type { AdaptiveVariantOptions, CollectiveInfo } from '../types.js';
import { constructionRounds, type AdaptiveRole, type RoleEvent } from './construct.js';
import { checkPrefix, rangeCheck, type JoinContext } from './decide.js';
import { hypercubeRounds } from './hypercube.js';

/**
 * The join context of a plan. Any cost model is accepted (homogeneous linear, per-pair,
 * hierarchical; one-ported or k-ported): the decisions need only model.comm / model.copy
 * between the gather roots, whose ranks the records carry. With k ports the construction joins
 * groups of k + 1 ranges per round (kported-construct.ts); the degrading rule stays one-ported
 * (degrading.ts). `lemma4` (or a model with copyAll) selects Traff18 Lemma 4's
 * every-rank-copies convention.
 */
export function adaptiveContext(
  comm: Communicator,
  root: number,
  model: CostModel,
  options: AdaptiveVariantOptions,
): JoinContext {
  const me = comm.rank;
  if (model.size !== undefined && model.size !== comm.size) {
    throw new InvalidArgumentError('model', `is defined for ${model.size} ranks, the communicator has ${comm.size}`, { rank: me });
  }
  const rule = options.rule ?? 'exact';
  if (rule !== 'exact' && rule !== 'lemma1') {
    throw new InvalidArgumentError('adaptive.rule', `must be 'exact' or 'lemma1', got ${String(rule)}`, { rank: me });
  }
  return { model, rule, copyAll: options.lemma4 === true || model.copyAll, root };
}

/**
 * The root's check of every range that reaches it: the total the ranks of [lo..hi] reported
 * (through the construction) must equal Σ counts[lo..hi], and so must the range's count
 * checksum (decide.ts: it catches errors that cancel inside the range); otherwise
 * InvalidArgumentError on 'counts' naming the range, raised before the data of that range is
 * received or sent.
 */
export function rootRangeCheck(rank: number, counts: readonly number[]): (e: RoleEvent) => void {
  const prefix = prefixSums(counts);
  const checks = checkPrefix(counts);
  return (e) => {
    if (e.kind !== 'recv') throw new VcollError('INTERNAL', `rank ${rank}: the root was told to send in round ${e.round}`, { rank });
    const want = rangeElements(prefix, e.lo, e.hi);
    if (e.size !== want) {
      throw new InvalidArgumentError(
        'counts',
        `ranks ${e.lo}..${e.hi} have ${e.size} elements in total by their own counts, the root's counts[${e.lo}..${e.hi}] sum to ${want}`,
        { rank },
      );
    }
    if (e.check !== rangeCheck(checks, e.lo, e.hi)) {
      throw new InvalidArgumentError(
        'counts',
        `ranks ${e.lo}..${e.hi} split their ${want} elements differently from the root's counts[${e.lo}..${e.hi}] ` +
          `(the totals agree, the count checksums differ: some rank's own count is not its entry in counts)`,
        { rank },
      );
    }
  };
}

/** What an adaptive plan reports: construction rounds and the height bound ⌈log_{k+1}p⌉ (k = model.ports). */
export function adaptiveInfo(p: number, ports = 1): CollectiveInfo {
  return { algorithm: 'adaptive', constructionRounds: constructionRounds(p, ports), height: hypercubeRounds(p, ports) };
}

/** How many receives precede the rank's local copy (TreeBuilder's ordered convention, 0 under Lemma 4). */
export function copyPosition(role: AdaptiveRole, copyAll: boolean): number {
  if (copyAll) return 0;
  const first = role.children[0];
  return first !== undefined && first.lo < role.rank ? 1 : 0;
}

/** Byte offsets of the own block and of every child's range in the rank's intermediate buffer. */
export function bufferLayout(role: AdaptiveRole, unitBytes: number): { own: number; total: number; children: number[] } {
  let start = 0;
  let end = role.count * unitBytes;
  const at: { left: boolean; size: number }[] = [];
  for (const c of role.children) {
    const n = c.size * unitBytes;
    at.push({ left: c.lo < role.rank, size: n });
    if (c.lo < role.rank) start -= n;
    else end += n;
  }
  const shift = -start;
  const children: number[] = [];
  let s = 0;
  let e = role.count * unitBytes;
  for (const c of at) {
    if (c.left) {
      s -= c.size;
      children.push(s + shift);
    } else {
      children.push(e + shift);
      e += c.size;
    }
  }
  return { own: shift, total: end - start, children };
}

/** The tree formed by the roles of all p ranks (rank order), as the centralised builder returns it. */
export function roleTree(roles: readonly AdaptiveRole[], copyAll: boolean): Tree {
  const p = roles.length;
  const root = roles[0].root;
  const tb = new TreeBuilder(p, root);
  for (const r of roles) {
    for (const c of r.children) tb.addChild(r.rank, c.peer);
    tb.setCopyAt(r.rank, copyPosition(r, copyAll));
  }
  return tb.build();
}
