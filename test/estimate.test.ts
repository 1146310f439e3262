/**
 * Per-pair model estimation by ping-pong (src/run/estimate-pairwise.ts), cost models as JSON
 * (src/model/model-json.ts) and `vcoll estimate` (src/cli/estimate-command.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runEstimate, type EstimateCommandOptions } from '../src/cli/estimate-command.js';
import { readModelFile } from '../src/cli/model-file.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { hierarchicalModel, linearModel, pairwiseModel } from '../src/model/cost-model.js';
import {
  MODEL_JSON_FORMAT,
  loadModelJson,
  modelFromSpec,
  modelToJson,
  parseModelJson,
  specOfModel,
  validateModelSpec,
  type CostModelSpec,
  type HierarchicalModelSpec,
  type LinearModelSpec,
  type PairwiseModelSpec,
} from '../src/model/model-json.js';
import {
  DEFAULT_ESTIMATE_SIZES,
  estimatePairwise,
  estimatePairwiseOnSim,
  pairwiseModelOf,
  pairwiseSpecOf,
  tournamentPartner,
  tournamentRounds,
  type PairwiseEstimate,
} from '../src/run/estimate-pairwise.js';
import { runSim } from '../src/transports/sim/index.js';
import { runThreads } from '../src/transports/threads/index.js';
import { evaluate } from '../src/trees/evaluate.js';
import { findTreeAlgorithm } from '../src/trees/registry.js';
import { sink, vcoll } from './helpers/cli.js';
import { invalidField, rejection } from './helpers/errors.js';
import { rng } from './helpers/random.js';

const dir = mkdtempSync(join(tmpdir(), 'vcoll-estimate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Mat = number[][];
const randomMatrix = (p: number, rnd: () => number, lo: number, hi: number): Mat =>
  Array.from({ length: p }, () => Array.from({ length: p }, () => lo + rnd() * (hi - lo)));
const transpose = (m: Mat): Mat => m.map((row, i) => row.map((_, j) => m[j][i]));
/** Largest |a_ij − b_ij| off the diagonal. */
function maxDiff(a: Mat, b: Mat): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) for (let j = 0; j < a.length; j++) if (i !== j) d = Math.max(d, Math.abs(a[i][j] - b[i][j]));
  return d;
}
const diagonal = (m: Mat): number[] => m.map((row, i) => row[i]);

describe('round-robin schedule', () => {
  it('every unordered pair meets exactly once, nobody has two partners in a round (p = 1…13)', () => {
    for (let p = 1; p <= 13; p++) {
      const met = new Set<string>();
      for (let r = 0; r < tournamentRounds(p); r++) {
        for (let i = 0; i < p; i++) {
          const j = tournamentPartner(i, r, p);
          if (j < 0) continue;
          expect(j).not.toBe(i);
          expect(tournamentPartner(j, r, p)).toBe(i);
          if (i < j) {
            expect(met.has(`${i},${j}`)).toBe(false);
            met.add(`${i},${j}`);
          }
        }
      }
      expect(met.size).toBe((p * (p - 1)) / 2);
      expect(tournamentRounds(p)).toBe(p <= 1 ? 0 : p % 2 === 0 ? p - 1 : p);
    }
  });
});

describe('estimatePairwise on the simulator', () => {
  it.each([2, 3, 5, 8])('recovers every α_ij and β_ij of a random asymmetric pairwise model, p = %i', async (p) => {
    const rnd = rng(100 + p);
    const alpha = randomMatrix(p, rnd, 0, 60);
    const beta = randomMatrix(p, rnd, 0, 5);
    const est = await estimatePairwiseOnSim(pairwiseModel({ alpha, beta }), p);
    expect(est.unit).toBe('model');
    expect(est.p).toBe(p);
    expect(est.sizes).toEqual([...DEFAULT_ESTIMATE_SIZES]);
    expect(maxDiff(est.alpha, alpha)).toBeLessThan(1e-6);
    expect(maxDiff(est.beta, beta)).toBeLessThan(1e-10);
    expect(diagonal(est.alpha).every((x) => x === 0) && diagonal(est.beta).every((x) => x === 0)).toBe(true);
    // the comparison catches a transposed estimate (the matrices are asymmetric)
    expect(maxDiff(transpose(est.alpha), alpha)).toBeGreaterThan(1);
    expect(maxDiff(transpose(est.beta), beta)).toBeGreaterThan(0.01);
    expect(est.clamped).toBe(0);
    expect(Math.max(...est.residual.flat())).toBeLessThan(1e-6);
    // an empty message costs nothing on the simulator: nothing was subtracted
    expect(est.emptyHalfRtt.flat().every((x) => x === 0)).toBe(true);
  });

  it('β is per byte; pairwiseModelOf turns it into the per-element model of unitBytes (the truth, exactly up to rounding)', async () => {
    const p = 4;
    const rnd = rng(7);
    const alpha = randomMatrix(p, rnd, 1, 30);
    const beta = randomMatrix(p, rnd, 0.5, 8);
    const truth = pairwiseModel({ alpha, beta });
    const est = await estimatePairwiseOnSim(truth, p, { sizes: [4, 400, 4000] }, { unitBytes: 4 });
    // per byte: a quarter of the per-element β
    expect(maxDiff(est.beta, beta.map((r) => r.map((b) => b / 4)))).toBeLessThan(1e-10);
    // forgetting the unit size is caught
    expect(maxDiff(pairwiseSpecOf(est).beta as Mat, beta)).toBeGreaterThan(0.3);
    const model = pairwiseModelOf(est, { unitBytes: 4 });
    for (let i = 0; i < p; i++) {
      for (let j = 0; j < p; j++) {
        if (i === j) continue;
        for (const units of [1, 7, 1000]) expect(Math.abs(model.comm(i, j, units) - truth.comm(i, j, units))).toBeLessThan(1e-6);
      }
    }
  });

  it('recovers the two levels of a hierarchical model (permuted nodes, unequal node sizes)', async () => {
    const nodeOf = [0, 0, 1, 1, 1, 2, 0, 2, 1];
    const intra = { alpha: 2.5, beta: 0.01 };
    const inter = { alpha: 40, beta: 0.75 };
    const p = nodeOf.length;
    const est = await estimatePairwiseOnSim(hierarchicalModel({ nodeOf, intra, inter }), p, { sizes: [1, 100, 10000], reps: 2 });
    for (let i = 0; i < p; i++) {
      for (let j = 0; j < p; j++) {
        if (i === j) continue;
        const level = nodeOf[i] === nodeOf[j] ? intra : inter;
        expect(Math.abs(est.alpha[i][j] - level.alpha)).toBeLessThan(1e-8);
        expect(Math.abs(est.beta[i][j] - level.beta)).toBeLessThan(1e-12);
      }
    }
  });

  it('pairs run concurrently: the measurements end at exactly rounds · 2 · reps · Σ_m (α + β·m) (p = 6 and 5)', async () => {
    for (const p of [6, 5]) {
      const sizes = [1, 10, 100];
      const reps = 3;
      const sim = await runSim(p, (comm) => estimatePairwise(comm, { sizes, reps }), { model: linearModel({ alpha: 100, beta: 1 }), trace: true });
      const msgs = (sim.trace?.messages ?? []).filter((m) => m.tag === 0x5e5 && m.ctx === 0);
      const perLink = sizes.reduce((a, m) => a + 100 + m, 0);
      expect(Math.max(...msgs.map((m) => m.end))).toBe(tournamentRounds(p) * 2 * reps * perLink);
      // every ordered pair: (|sizes| + 1) · reps round trips of two messages
      expect(msgs.length).toBe(p * (p - 1) * (sizes.length + 1) * reps * 2);
      // every rank returns the same estimate
      for (const r of sim.results) expect(r).toEqual(sim.results[0]);
    }
  });

  it('p = 1: no links, empty-but-valid matrices', async () => {
    const est = await estimatePairwiseOnSim(linearModel({ alpha: 1, beta: 1 }), 1);
    expect(est.alpha).toEqual([[0]]);
    expect(est.beta).toEqual([[0]]);
  });

  it('bad options: InvalidArgumentError naming the option, before or during the run', async () => {
    const m = linearModel({ alpha: 1, beta: 1 });
    const field = async (o: object): Promise<string> => {
      const e = await rejection(estimatePairwiseOnSim(m, 3, o));
      expect(e).toBeInstanceOf(InvalidArgumentError);
      return (e as InvalidArgumentError).field;
    };
    expect(await field({ sizes: [8, 8] })).toBe('sizes');
    expect(await field({ sizes: [0, 8] })).toBe('sizes[0]');
    expect(await field({ sizes: [1, 2.5] })).toBe('sizes[1]');
    expect(await field({ reps: 0 })).toBe('reps');
    expect(await field({ tag: -1 })).toBe('tag');
    // inside a run: the rank fails the run fast, the cause names the option and the rank
    const e = await rejection(runSim(3, (comm) => estimatePairwise(comm, { reps: 0 }), { model: m }));
    expect(e).toBeInstanceOf(CommunicationError);
    const cause = (e as CommunicationError).cause;
    expect(cause).toBeInstanceOf(InvalidArgumentError);
    expect((cause as InvalidArgumentError).field).toBe('reps');
    expect((cause as InvalidArgumentError).rank).toBeTypeOf('number');
  });
});

describe('estimatePairwise on worker threads', () => {
  it('p = 3: finite non-negative values in µs, the same on every rank, a model that builds trees', async () => {
    const program = new URL('../src/run/estimate-pairwise.ts', import.meta.url);
    const ranks = await runThreads<PairwiseEstimate>(3, program, { sizes: [1, 4096, 65536], reps: 3, warmupMs: 60 });
    const est = ranks[0];
    for (const r of ranks) expect(r).toEqual(est);
    expect(est.unit).toBe('us');
    for (const m of [est.alpha, est.beta, est.residual, est.emptyHalfRtt]) {
      expect(m.length).toBe(3);
      for (const x of m.flat()) expect(Number.isFinite(x) && x >= 0).toBe(true);
    }
    expect(maxDiff(est.alpha, [[0, 0, 0], [0, 0, 0], [0, 0, 0]]) + maxDiff(est.beta, [[0, 0, 0], [0, 0, 0], [0, 0, 0]])).toBeGreaterThan(0);
    const model = pairwiseModelOf(est, { unitBytes: 8 });
    const sizes = [100, 2000, 30];
    for (const name of ['linear', 'oblivious', 'optimal-pairwise']) {
      const alg = findTreeAlgorithm(name);
      if (!alg) throw new Error(`no tree algorithm ${name}`);
      const built = alg.build(sizes, model, { root: 0 });
      const t = evaluate(built.tree, sizes, model, 'gather').time;
      expect(Number.isFinite(t) && t > 0).toBe(true);
    }
  }, 60_000);
});

// -------------------------------------------------------------------------------------------

const linearSpec: LinearModelSpec = { kind: 'linear', alpha: 100, beta: 0.1 + 0.2, gamma: 1e-300, ports: 2, copyAll: true };
const pairwiseSpec: PairwiseModelSpec = {
  kind: 'pairwise',
  alpha: [
    [0, 1 / 3, 5e-324],
    [1.7976931348623157e308, 0, 2],
    [Math.PI, Math.E, 0.5],
  ],
  beta: [
    [0, 0.001, 123456789.123],
    [4, 0, 2 ** -40],
    [1e-7, 3, 0],
  ],
  gamma: [0.25, 0, 1 / 7],
  ports: 1,
  copyAll: false,
};
const hierarchicalSpec: HierarchicalModelSpec = {
  kind: 'hierarchical',
  nodeOf: [1, 0, 1, 2, 0],
  intra: { alpha: 0.3, beta: 1 / 3 },
  inter: { alpha: 40.00000000000001, beta: 2.5 },
  gamma: 0.1,
  ports: 3,
  copyAll: false,
};

describe('cost models as JSON', () => {
  it.each([linearSpec, pairwiseSpec, hierarchicalSpec])('round trip of a $kind model is exact (spec, text and costs)', (spec: CostModelSpec) => {
    const text = modelToJson(spec, { unit: 'us', description: 'test' });
    const loaded = loadModelJson(text);
    expect(loaded.spec).toEqual(spec);
    expect(loaded.meta).toEqual({ unit: 'us', description: 'test' });
    expect(JSON.parse(text).format).toBe(MODEL_JSON_FORMAT);
    // saving the loaded model gives the same text
    expect(modelToJson(loaded.model, loaded.meta)).toBe(text);
    expect(specOfModel(loaded.model)).toEqual(spec);
    const direct = modelFromSpec(spec);
    const p = spec.kind === 'linear' ? 4 : spec.kind === 'pairwise' ? spec.alpha.length : spec.nodeOf.length;
    expect(loaded.model.kind).toBe(spec.kind);
    expect(loaded.model.ports).toBe(spec.ports);
    expect(loaded.model.copyAll).toBe(spec.copyAll);
    for (let i = 0; i < p; i++) {
      expect(loaded.model.copy(i, 3)).toBe(direct.copy(i, 3));
      for (let j = 0; j < p; j++) for (const u of [0, 1, 1000]) expect(loaded.model.comm(i, j, u)).toBe(direct.comm(i, j, u));
    }
  });

  it('round trip of random pairwise models is bit-exact (property)', () => {
    const value = fc.oneof(fc.double({ min: 0, max: 1e308, noNaN: true }), fc.integer({ min: 0, max: 1000 }), fc.constant(5e-324));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }).chain((p) =>
          fc.record({
            alpha: fc.array(fc.array(value, { minLength: p, maxLength: p }), { minLength: p, maxLength: p }),
            beta: fc.array(fc.array(value, { minLength: p, maxLength: p }), { minLength: p, maxLength: p }),
            gamma: fc.oneof(value, fc.array(value, { minLength: p, maxLength: p })),
            ports: fc.integer({ min: 1, max: 8 }),
            copyAll: fc.boolean(),
          }),
        ),
        (r) => {
          const spec: PairwiseModelSpec = { kind: 'pairwise', ...r };
          const back = parseModelJson(modelToJson(spec)).spec as PairwiseModelSpec;
          // −0 is saved as 0 (the same time)
          const norm = (x: number): number => (x === 0 ? 0 : x);
          expect(back.alpha).toEqual(spec.alpha.map((row) => row.map(norm)));
          expect(back.beta).toEqual(spec.beta.map((row) => row.map(norm)));
          expect(back.gamma).toEqual(typeof spec.gamma === 'number' ? norm(spec.gamma) : spec.gamma.map(norm));
          expect([back.ports, back.copyAll]).toEqual([spec.ports, spec.copyAll]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a linear model built by linearModel saves directly; pairwise/hierarchical ones built directly say why not', () => {
    expect(parseModelJson(modelToJson(linearModel({ alpha: 3, beta: 0.5, gamma: 1, ports: 2 }))).spec).toEqual({
      kind: 'linear',
      alpha: 3,
      beta: 0.5,
      gamma: 1,
      ports: 2,
      copyAll: false,
    });
    expect(invalidField(() => modelToJson(pairwiseModel({ alpha: [[0]], beta: [[0]] })))).toBe('model');
    expect(invalidField(() => specOfModel(hierarchicalModel({ nodeOf: [0], intra: { alpha: 1, beta: 1 }, inter: { alpha: 1, beta: 1 } })))).toBe('model');
  });

  /** The field named when loading `doc` (a JSON value, or raw text). */
  const loadField = (doc: unknown): string => invalidField(() => loadModelJson(typeof doc === 'string' ? doc : JSON.stringify(doc)));
  const base = (): Record<string, unknown> => JSON.parse(modelToJson(pairwiseSpec)) as Record<string, unknown>;
  const p3 = (x: number): number[][] => [
    [0, x, x],
    [x, 0, x],
    [x, x, 0],
  ];

  it('bad documents: InvalidArgumentError with the JSON path of the bad field', () => {
    const without = (k: string) => {
      const d = base();
      delete d[k];
      return d;
    };
    expect(loadField(without('beta'))).toBe('beta');
    expect(loadField(without('version'))).toBe('version');
    expect(loadField(without('ports'))).toBe('ports');
    expect(loadField({ ...base(), version: 2 })).toBe('version');
    expect(loadField({ ...base(), format: 'other' })).toBe('format');
    expect(loadField({ ...base(), kind: 'tree' })).toBe('kind');
    expect(loadField({ ...base(), extra: 1 })).toBe('extra');
    // wrong shapes
    expect(loadField({ ...base(), beta: p3(1).slice(0, 2) })).toBe('beta');
    expect(loadField({ ...base(), beta: [[0, 1, 1], [1, 0], [1, 1, 0]] })).toBe('beta[1]');
    expect(loadField({ ...base(), alpha: 'x' })).toBe('alpha');
    expect(loadField({ ...base(), alpha: [] })).toBe('alpha');
    expect(loadField({ ...base(), gamma: [1, 2] })).toBe('gamma');
    // negative, non-finite, not a number
    const b = p3(1);
    b[2][1] = -1;
    expect(loadField({ ...base(), beta: b })).toBe('beta[2][1]');
    expect(loadField(modelToJson(pairwiseSpec).replace('123456789.123', '1e999'))).toBe('beta[0][2]');
    expect(loadField({ ...base(), gamma: [0, -0.5, 0] })).toBe('gamma[1]');
    expect(loadField({ ...base(), alpha: [[0, '1', 1], [1, 0, 1], [1, 1, 0]] })).toBe('alpha[0][1]');
    expect(loadField({ ...base(), ports: 0 })).toBe('ports');
    expect(loadField({ ...base(), copyAll: 'yes' })).toBe('copyAll');
    expect(loadField({ ...base(), unit: 3 })).toBe('unit');
    // hierarchical and linear fields
    const h = JSON.parse(modelToJson(hierarchicalSpec)) as Record<string, unknown>;
    expect(loadField({ ...h, intra: { alpha: -1, beta: 0 } })).toBe('intra.alpha');
    expect(loadField({ ...h, inter: { alpha: 1 } })).toBe('inter.beta');
    expect(loadField({ ...h, inter: { alpha: 1, beta: 1, gamma: 1 } })).toBe('inter.gamma');
    expect(loadField({ ...h, nodeOf: [0, 1.5] })).toBe('nodeOf[1]');
    expect(loadField({ ...h, nodeOf: [] })).toBe('nodeOf');
    // node numbers are int32 (larger ones would wrap), ports at most 2^16
    expect(loadField({ ...h, nodeOf: [0, 2 ** 32] })).toBe('nodeOf[1]');
    expect(loadField({ ...base(), ports: 2 ** 40 })).toBe('ports');
    expect(loadField({ ...h, alpha: 1 })).toBe('alpha');
    const l = JSON.parse(modelToJson(linearSpec)) as Record<string, unknown>;
    expect(loadField({ ...l, gamma: null })).toBe('gamma');
    // not JSON, not an object
    expect(loadField('{"format": ')).toBe('(document)');
    expect(loadField('NaN')).toBe('(document)');
    expect(loadField('[1]')).toBe('(document)');
  });

  it('the spec kept for a loaded model is frozen: it cannot drift from the model', () => {
    const loaded = loadModelJson(modelToJson(pairwiseSpec));
    const spec = loaded.spec as PairwiseModelSpec;
    expect(() => {
      (spec.alpha[0] as number[])[1] = -5;
    }).toThrow(TypeError);
    expect(modelToJson(loaded.model)).toBe(modelToJson(pairwiseSpec));
  });

  it('bad specs given in code: NaN and Infinity are caught with their path', () => {
    const a = p3(1);
    a[1][2] = NaN;
    expect(invalidField(() => validateModelSpec({ ...pairwiseSpec, alpha: a }))).toBe('alpha[1][2]');
    expect(invalidField(() => modelToJson({ ...linearSpec, beta: Infinity }))).toBe('beta');
    expect(invalidField(() => modelFromSpec({ ...hierarchicalSpec, gamma: -1 }))).toBe('gamma');
  });
});

describe('vcoll estimate', () => {
  const defaults: EstimateCommandOptions = { transport: 'sim', unitBytes: 1, out: join(dir, 'unused.json'), format: 'json' };

  it('measures a --truth model on the simulator and writes a model that loads back to it', async () => {
    const rnd = rng(3);
    const p = 5;
    const truthSpec: PairwiseModelSpec = { kind: 'pairwise', alpha: randomMatrix(p, rnd, 0, 50), beta: randomMatrix(p, rnd, 0, 2), gamma: 0, ports: 1, copyAll: false };
    const truthFile = join(dir, 'truth.json');
    writeFileSync(truthFile, modelToJson(truthSpec));
    const outFile = join(dir, 'est.json');
    const out = sink();
    const summary = await runEstimate({ ...defaults, truth: truthFile, unitBytes: 2, reps: 1, out: outFile }, out.stream);
    expect(JSON.parse(out.text())).toEqual(JSON.parse(JSON.stringify(summary)));
    expect(summary.p).toBe(p);
    expect(summary.maxRelativeError).toBeLessThan(1e-9);
    const loaded = readModelFile(outFile, '--model-file');
    expect(loaded.meta.unit).toBe('model');
    const spec = loaded.spec as PairwiseModelSpec;
    expect(maxDiff(spec.alpha as Mat, truthSpec.alpha as Mat)).toBeLessThan(1e-6);
    expect(maxDiff(spec.beta as Mat, truthSpec.beta as Mat)).toBeLessThan(1e-9);
    // --p that disagrees with the truth's size
    expect((await rejection(runEstimate({ ...defaults, truth: truthFile, p: 4 }, sink().stream))) as InvalidArgumentError).toHaveProperty('field', '--p');
  });

  it('errors: a bad truth file names the JSON path; options name the option', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, modelToJson(pairwiseSpec).replace('"ports": 1', '"ports": 1.5'));
    const e = await rejection(runEstimate({ ...defaults, truth: bad }, sink().stream));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as InvalidArgumentError).field).toBe('ports');
    expect((e as Error).message).toContain(bad);
    expect(await rejection(runEstimate({ ...defaults, truth: join(dir, 'missing.json') }, sink().stream))).toHaveProperty('field', '--truth');
    expect(await rejection(runEstimate({ ...defaults, sizes: [1, 0] }, sink().stream))).toHaveProperty('field', '--sizes[1]');
    expect(await rejection(runEstimate({ ...defaults, transport: 'threads', truth: bad }, sink().stream))).toHaveProperty('field', '--truth');
  });

  it('as a process: writes a file that loads back; bad input exits 2 naming the field', () => {
    const outFile = join(dir, 'cli.json');
    const r = vcoll(['estimate', '--p', '4', '--sizes', '1,64,4096', '--reps', '1', '--out', outFile]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('model written to');
    const loaded = loadModelJson(readFileSync(outFile, 'utf8'));
    expect(loaded.spec.kind).toBe('pairwise');
    const spec = loaded.spec as PairwiseModelSpec;
    // the default truth: linear α = 100, β = 1 per element
    expect(maxDiff(spec.alpha as Mat, p3x(4, 100))).toBeLessThan(1e-9);
    expect(maxDiff(spec.beta as Mat, p3x(4, 1))).toBeLessThan(1e-12);
    const bad = vcoll(['estimate', '--sizes', '5,5', '--out', join(dir, 'never.json')]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--sizes');
    // An unwritable --out fails before measuring, naming the option.
    const noDir = vcoll(['estimate', '--p', '2', '--out', join(dir, 'no', 'such', 'dir.json')]);
    expect(noDir.status).toBe(2);
    expect(noDir.stderr).toContain('--out');
  }, 30_000);
});

function p3x(p: number, x: number): number[][] {
  return Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => (i === j ? 0 : x)));
}
