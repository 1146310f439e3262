/** `vcoll tree`: builds one tree for given sizes or a distribution; draws it as text and SVG. */
import { writeFileSync } from 'node:fs';
import { blockSizes, parseDistribution } from '../workloads/distributions.js';
import { InvalidArgumentError, TooLargeError } from '../errors.js';
import { checkTreeWork } from '../util/limits.js';
import { linearModel } from '../model/cost-model.js';
import { drawTreeSvg, drawTreeText } from '../trees/draw.js';
import { evaluate, type Operation } from '../trees/evaluate.js';
import { TREE_ALGORITHMS, findTreeAlgorithm, treeLimit } from '../trees/registry.js';
import { treeToJSON } from '../trees/tree.js';
import { readModelFile } from './model-file.js';
import { checkOutputPath } from './options.js';

export interface TreeCommandOptions {
  sizes?: number[];
  dist?: string;
  p?: number;
  b: number;
  rho: number;
  seed: number;
  algorithm: string;
  root?: number;
  alpha: number;
  beta: number;
  gamma: number;
  ports: number;
  copyAll: boolean;
  operation: Operation;
  format: 'text' | 'svg' | 'json';
  svg?: string;
  /** A cost model JSON file (vcoll estimate, or hand-written) instead of alpha/beta/gamma/ports/copyAll. */
  modelFile?: string;
}

export function runTree(opts: TreeCommandOptions, out: NodeJS.WritableStream = process.stdout): void {
  if (opts.svg !== undefined) checkOutputPath('--svg', opts.svg);
  const loaded = opts.modelFile !== undefined ? readModelFile(opts.modelFile, '--model-file') : undefined;
  if (opts.sizes && opts.dist) throw new InvalidArgumentError('--sizes', 'give either --sizes or --dist, not both');
  const alg = findTreeAlgorithm(opts.algorithm);
  if (!alg) {
    throw new InvalidArgumentError('--algorithm', `unknown tree algorithm "${opts.algorithm}"; choose from ${TREE_ALGORITHMS.map((a) => a.name).join(', ')}`);
  }
  const model = loaded?.model ?? linearModel({ alpha: opts.alpha, beta: opts.beta, gamma: opts.gamma, ports: opts.ports, copyAll: opts.copyAll });
  // the tree's p limit, memory and time before any block size is drawn
  const p = opts.sizes?.length ?? opts.p ?? loaded?.model.size ?? 16;
  const field = opts.sizes ? '--sizes' : '--p';
  const limit = treeLimit(alg.name, model);
  if (limit !== undefined && p > limit) throw new TooLargeError(field, `${p} ranks > ${limit}, the largest p of the '${alg.name}' tree under this model`);
  checkTreeWork(field, p, [alg.name], 1);
  let sizes: number[];
  if (opts.sizes) {
    sizes = opts.sizes;
  } else {
    const dist = parseDistribution(opts.dist ?? 'random', '--dist');
    sizes = blockSizes(dist, { p, b: opts.b, rho: opts.rho, seed: opts.seed });
  }
  if (model.size !== undefined && model.size !== sizes.length) {
    throw new InvalidArgumentError('--model-file', `defines ${model.size} ranks, the tree has ${sizes.length}`);
  }
  const built = alg.build(sizes, model, { root: opts.root, op: opts.operation });
  const ev = evaluate(built.tree, sizes, model, opts.operation);
  const title = `${alg.name} ${opts.operation} tree, p=${sizes.length}, root ${built.root}: time ${ev.time}`;
  if (opts.svg) writeFileSync(opts.svg, drawTreeSvg(built.tree, sizes, { model, operation: opts.operation, title }));
  if (opts.format === 'json') {
    out.write(JSON.stringify({ algorithm: alg.name, operation: opts.operation, root: built.root, time: ev.time, sizes, tree: treeToJSON(built.tree) }, null, 2) + '\n');
  } else if (opts.format === 'svg') {
    out.write(drawTreeSvg(built.tree, sizes, { model, operation: opts.operation, title }));
  } else {
    out.write(`${title}\n${drawTreeText(built.tree, sizes, { model, operation: opts.operation })}\n`);
    if (opts.svg) out.write(`SVG written to ${opts.svg}\n`);
  }
}
