/**
 * The data phases of gatherv/scatterv as schedules (src/comm/schedule.ts): the public entry
 * points. The persistent plans of `linear` and of every tree-run variant run exactly these
 * schedules (collectives/compiled-plan.ts); the compilers are with their variants —
 * gatherv/linear.ts (linearGather), scatterv/linear.ts (linearScatter), gatherv/tree.ts
 * (treeGather), scatterv/tree.ts (treeScatter) — on the parts of schedule-builder.ts.
 * Compiling never communicates.
 *
 * - `linear`: a non-root rank sends (receives) its block, even an empty one, through a
 *   'packed' communication buffer under model.copyAll; the root copies its own block and
 *   posts every receive (send) at once, in rank order — under copyAll one at a time
 *   (gather: rank order; scatter: reverse rank order, the copy last) — and with k > 1 ports
 *   runs the whole sequence in one step of window k, the copy a message to itself.
 * - the tree-run variants (`binomial` and every root-built tree, tree-exec.ts): a rank's
 *   gather sequence (its children's receives with its local copy after `copyAt` of them,
 *   empty subtrees left out) then the send of its packed buffer to its parent; a scatter
 *   rank receives its packed buffer, then runs the gather sequence reversed. One-ported the
 *   sequence runs in a step of window 1 with the copy a `copy` operation; with k ports in a
 *   step of window k, the copy a message to itself (collectives/ports.ts). A leaf that does
 *   not copy (no model.copyAll) communicates straight from 'send' (into 'recv'); every other
 *   non-root rank has a 'packed' buffer of its subtree's blocks. The root receives into
 *   (sends from) its user buffer at the blocks' displacements: one range when they are
 *   contiguous in packed order, else the ranges of the blocks (collectives/placement.ts).
 */
import { InvalidArgumentError, UnavailableError } from '../errors.js';
import type { CostModel } from '../model/cost-model.js';
import type { RankSchedule, WorldSchedule } from '../comm/schedule.js';
import { DEFAULT_MODEL, V_TAGS } from './defaults.js';
import { linearGather } from './gatherv/linear.js';
import { treeGather } from './gatherv/tree.js';
import { linearScatter } from './scatterv/linear.js';
import { treeScatter } from './scatterv/tree.js';
import type { VRankDescription } from './schedule-builder.js';
import { adaptiveGatherSchedule, adaptiveScatterSchedule, rolesOfTree } from './adaptive/schedule.js';
import { adaptiveBinomialTree } from '../trees/adaptive.js';
import {
  binomialNode,
  binomialSchedule,
  buildTree,
  CHILD_WIDTH,
  decodeSchedule,
  encodeSchedules,
  SCHEDULE_WIDTH,
  type NodeSchedule,
} from './node-schedule.js';
import { failedRestriction, variantRow, type VOp } from './v-variants.js';
import { degradingTree } from '../trees/degrading.js';

/** The data tag of the first gatherv/scatterv plan on a communicator: COLLECTIVE_TAG + 0x380 (V_TAGS.dataFirst). */
export type { VRankDescription } from './schedule-builder.js';

export const FIRST_DATA_TAG = V_TAGS.dataFirst;

/**
 * The algorithms `compileVSchedule` compiles: `linear`, `adaptive` and `degrading` (their data
 * phase once the construction has built the tree) and every tree-run variant.
 */
export const COMPILED_V_ALGORITHMS = [
  'linear',
  'adaptive',
  'degrading',
  'binomial',
  'optimal',
  'binary',
  'two-block',
  'model-binomial-min',
  'model-binomial-max',
  'model-binomial-guarded',
  'traff',
  'model-traff',
  'model-traff-guarded',
] as const;

export type CompiledVAlgorithm = (typeof COMPILED_V_ALGORITHMS)[number];

// ---------------------------------------------------------------------------------------
// Public API

function isCompiled(algorithm: string): algorithm is CompiledVAlgorithm {
  return (COMPILED_V_ALGORITHMS as readonly string[]).includes(algorithm);
}

function notCompiled(algorithm: string): UnavailableError {
  if (variantRow(algorithm) === undefined && algorithm !== 'auto') {
    return new UnavailableError('schedule', `no gatherv/scatterv algorithm named '${algorithm}'`);
  }
  return new UnavailableError(
    'schedule',
    `${algorithm} is not compiled into schedules (yet): compiled are ${COMPILED_V_ALGORITHMS.join(', ')}` +
      (algorithm === 'mpi-native' ? " (mpi-native calls the MPI library's own collective)" : '') +
      (algorithm === 'auto' ? ' (auto: choose the algorithm first)' : ''),
  );
}

/**
 * One rank's schedule of the data phase of `algorithm` (see the module comment): `node` is
 * the rank's NodeSchedule for the tree variants (ignored by `linear`), `tag` the plan's data
 * tag. Never communicates.
 */
export function compileRankSchedule(op: VOp, algorithm: string, d: VRankDescription, node: NodeSchedule | undefined, tag: number = FIRST_DATA_TAG): RankSchedule {
  if (!isCompiled(algorithm)) throw notCompiled(algorithm);
  if (!Number.isInteger(d.ports) || d.ports < 1) throw new InvalidArgumentError('ports', `must be an integer >= 1, got ${d.ports}`);
  if (algorithm === 'linear') return op === 'gatherv' ? linearGather(d, tag) : linearScatter(d, tag);
  if (algorithm === 'adaptive' || algorithm === 'degrading') {
    throw new InvalidArgumentError('algorithm', `${algorithm} compiles from a rank's constructed role: adaptiveGatherSchedule / adaptiveScatterSchedule`, { rank: d.rank });
  }
  if (node === undefined) throw new InvalidArgumentError('node', `${algorithm} needs the rank's NodeSchedule`, { rank: d.rank });
  return op === 'gatherv' ? treeGather(d, node, tag) : treeScatter(d, node, tag);
}

export interface CompileVOptions {
  readonly root: number;
  /** The model the trees are built for and whose ports/copyAll the executors follow (default DEFAULT_MODEL). */
  readonly model?: CostModel;
  /** Bytes per element (default 1). */
  readonly unitBytes?: number;
  /** The root's displacements in elements (default: the prefix sums of the counts). */
  readonly displs?: readonly number[];
  /** The data tag (default FIRST_DATA_TAG, the first plan's). */
  readonly tag?: number;
}

/**
 * Every rank's NodeSchedule of a tree variant, as the plan delivers them: `binomial` from the
 * counts (binomialSchedule), a root-built tree from buildRootTree's tree encoded at the root
 * (encodeSchedules) and decoded per rank as distributeSchedules would deliver it.
 */
export function treeNodes(algorithm: string, op: VOp, counts: readonly number[], model: CostModel, root: number): NodeSchedule[] {
  const p = counts.length;
  if (algorithm === 'binomial') {
    return Array.from({ length: p }, (_, me) => {
      const bn = binomialNode(p, root, me);
      return binomialSchedule(p, root, me, counts.slice(bn.lo, bn.hi + 1), model.copyAll);
    });
  }
  const encoded = encodeSchedules(buildTree(algorithm, counts, model, root, root, op), counts);
  const nodes: NodeSchedule[] = [];
  let c0 = 0;
  for (let me = 0; me < p; me++) {
    const f = me * SCHEDULE_WIDTH;
    nodes.push(me === root ? encoded.root : decodeSchedule(encoded.fixed, f, encoded.children, c0));
    c0 += encoded.fixed[f + 2] * CHILD_WIDTH;
  }
  return nodes;
}

/**
 * Every rank's schedule of the data phase of `op` with `algorithm` for `counts` (elements),
 * built from the same trees the runtime uses (adaptive: the tree its construction builds, with
 * Traff18's exact rule). Checks the variant's model and counts restrictions as the ranks would.
 * `mpi-native` and `auto` are not compiled: an UnavailableError.
 */
export function compileVSchedule(op: VOp, algorithm: string, counts: readonly number[], options: CompileVOptions): WorldSchedule {
  if (!isCompiled(algorithm)) throw notCompiled(algorithm);
  const p = counts.length;
  if (p < 1) throw new InvalidArgumentError('counts', 'must have one entry per rank (p >= 1)');
  for (let i = 0; i < p; i++) {
    if (!Number.isInteger(counts[i]) || counts[i] < 0) throw new InvalidArgumentError(`counts[${i}]`, `must be an integer >= 0, got ${counts[i]}`);
  }
  const { root } = options;
  if (!Number.isInteger(root) || root < 0 || root >= p) throw new InvalidArgumentError('root', `must be an integer in 0…${p - 1}, got ${root}`);
  const model = options.model ?? DEFAULT_MODEL;
  const unitBytes = options.unitBytes ?? 1;
  if (!Number.isInteger(unitBytes) || unitBytes < 1) throw new InvalidArgumentError('unitBytes', `must be an integer >= 1, got ${unitBytes}`);
  const tag = options.tag ?? FIRST_DATA_TAG;
  let displs = options.displs;
  if (displs === undefined) {
    const prefix: number[] = [];
    let at = 0;
    for (const c of counts) {
      prefix.push(at);
      at += c;
    }
    displs = prefix;
  } else if (displs.length !== p || displs.some((x) => !Number.isInteger(x) || x < 0)) {
    throw new InvalidArgumentError('displs', `must be ${p} integers >= 0`);
  }
  const row = variantRow(algorithm);
  if (row !== undefined) {
    const failed = failedRestriction(row, { p, model, counts }, ['model', 'counts']);
    if (failed !== undefined) throw failed[0].error(failed[1], root);
  }
  const byRole = algorithm === 'adaptive' || algorithm === 'degrading';
  const nodes = algorithm === 'linear' || byRole ? undefined : treeNodes(algorithm, op, counts, model, root);
  // adaptive, degrading: the roles the construction gives, from the tree it equals (adaptive/construct.ts, adaptive/degrading.ts)
  const built = algorithm === 'adaptive' ? adaptiveBinomialTree(counts, model, { root }) : algorithm === 'degrading' ? degradingTree(counts, model, { root }) : undefined;
  const roles = built !== undefined ? rolesOfTree(built.tree, counts) : undefined;
  // the root copies where its tree says (the degrading tree's root first; adaptive's as copyPosition)
  const rootCopyAt = built?.tree.copyAt[root];
  const ranks: RankSchedule[] = [];
  for (let me = 0; me < p; me++) {
    const d: VRankDescription = {
      rank: me,
      p,
      root,
      unitBytes,
      count: counts[me],
      // fixed shape (no conditional spread: V8 would make a hidden class per object)
      counts: me === root ? counts : undefined,
      displs: me === root ? displs : undefined,
      ports: model.ports,
      copyAll: model.copyAll,
    };
    if (roles !== undefined) ranks.push((op === 'gatherv' ? adaptiveGatherSchedule : adaptiveScatterSchedule)(d, roles[me], tag, rootCopyAt));
    else ranks.push(compileRankSchedule(op, algorithm, d, nodes?.[me], tag));
  }
  return { label: `${op} ${algorithm}`, ranks };
}
