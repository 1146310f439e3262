/**
 * The hierarchical gather or gatherv (TraffRougier14, src/collectives/hierarchical/) once on the
 * simulator at large p (as `vcoll run --algorithm hierarchical --per-node N` does), verified at
 * the root, printing one JSON line: p, nodes, ranks per node, the virtual time of the call,
 * wall seconds and peak RSS (KiB, and per rank).
 *
 *   node --max-old-space-size=16000 --import tsx tools/hier-scale.ts --nodes 4096 --per-node 256 \
 *        [--op gather|gatherv] [--variant zero-copy|reorder|flat] [--b 8] [--placement ordered|random] \
 *        [--root 0] [--seed 1] [--no-share]
 *
 * The machine is tools/hier-bench.ts's (TraffRougier14 §4: inter-node α = 2 µs, β = 1/3200 µs/B;
 * intra-node α = 0.5 µs, β = 1/4000 µs/B; γ = 1/5000 µs/B; one-ported). gather: b bytes per
 * rank; gatherv: uniform in [0, 2b]. The node structure is computed once and shared by every
 * rank (HierarchicalOptions.structure); --no-share lets each rank compute its own (O(p) each,
 * O(p²) in all: only for small p, to compare).
 */
import { parseArgs } from 'node:util';
import prand from 'pure-rand';
import { hierarchicalGather, hierarchicalGatherv, HIERARCHICAL_VARIANT_NAMES, nodeStructure, type HierarchicalVariantName } from '../src/collectives/hierarchical/index.js';
import { hierarchicalModel } from '../src/model/cost-model.js';
import { blockOf, firstMismatch, fullBuffer } from '../src/run/data.js';
import { runSim } from '../src/transports/sim/index.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '16' },
    'per-node': { type: 'string', default: '256' },
    op: { type: 'string', default: 'gather' },
    variant: { type: 'string', default: 'zero-copy' },
    b: { type: 'string', default: '8' },
    placement: { type: 'string', default: 'ordered' },
    root: { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
    'no-share': { type: 'boolean', default: false },
  },
});
const nodes = Number(values.nodes);
const perNode = Number(values['per-node']);
const b = Number(values.b);
const seed = Number(values.seed);
const p = nodes * perNode;
const root = Number(values.root);
const op = values.op;
const variant = values.variant as HierarchicalVariantName;
const bad = (what: string): never => {
  process.stderr.write(`hier-scale: ${what}\n`);
  process.exit(2);
};
if (!(Number.isInteger(nodes) && nodes >= 1 && Number.isInteger(perNode) && perNode >= 1)) bad('--nodes and --per-node must be integers >= 1');
if (!(Number.isInteger(b) && b >= 0)) bad('--b must be an integer >= 0');
if (!(Number.isInteger(root) && root >= 0 && root < p)) bad(`--root must be in [0, ${p - 1}]`);
if (op !== 'gather' && op !== 'gatherv') bad('--op must be gather or gatherv');
if (!HIERARCHICAL_VARIANT_NAMES.includes(variant)) bad(`--variant must be one of ${HIERARCHICAL_VARIANT_NAMES.join(', ')}`);
if (values.placement !== 'ordered' && values.placement !== 'random') bad('--placement must be ordered or random');

const nodeOf = new Int32Array(p);
for (let r = 0; r < p; r++) nodeOf[r] = Math.floor(r / perNode);
const rng = prand.xoroshiro128plus(seed);
if (values.placement === 'random') {
  for (let i = p - 1; i > 0; i--) {
    const j = prand.unsafeUniformIntDistribution(0, i, rng);
    const t = nodeOf[i];
    nodeOf[i] = nodeOf[j];
    nodeOf[j] = t;
  }
}
const counts = op === 'gather' ? new Array<number>(p).fill(b) : Array.from({ length: p }, () => prand.unsafeUniformIntDistribution(0, 2 * b, rng));
const model = hierarchicalModel({ nodeOf, intra: { alpha: 0.5, beta: 1 / 4000 }, inter: { alpha: 2, beta: 1 / 3200 }, gamma: 1 / 5000 });
const t0 = performance.now();
const structure = values['no-share'] ? undefined : nodeStructure(p, (r) => nodeOf[r]);
let verified = false;
const res = await runSim(
  p,
  async (comm) => {
    const send = blockOf(comm.rank, counts[comm.rank], 1);
    const expected = comm.rank === root ? fullBuffer(counts, 1) : undefined;
    const recv = expected === undefined ? undefined : new Uint8Array(expected.length);
    const clock = comm.clock;
    if (clock === undefined) throw new Error('the simulator has a clock');
    await clock.sync();
    const start = clock.now();
    if (op === 'gather') await hierarchicalGather(comm, { send, recv, root }, { variant, structure });
    else await hierarchicalGatherv(comm, { send, recv, root, counts: comm.rank === root ? counts : undefined }, { variant, structure });
    await clock.sync();
    if (recv !== undefined && expected !== undefined) verified = firstMismatch(recv, expected, 'recv') === undefined;
    return clock.now() - start;
  },
  { model },
);
const maxRssKiB = process.resourceUsage().maxRSS;
process.stdout.write(
  `${JSON.stringify({ op, variant, p, nodes, perNode, placement: values.placement, shared: structure !== undefined, verified, time: res.results[root], wallS: (performance.now() - t0) / 1000, maxRssKiB, rssPerRankKiB: maxRssKiB / p })}\n`,
);
if (!verified) process.exitCode = 1;
