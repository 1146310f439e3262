/** The defaults of `vcoll bench` (kept apart from the harness so the CLI can show them without loading the transports). */
import { SEED000_DISTRIBUTIONS } from '../run/spec.js';
import type { BenchConfig } from './results.js';

/** What `vcoll bench` does without options (Traff18 §5; p: a small machine's worth). */
export const BENCH_DEFAULTS: BenchConfig = {
  transport: 'threads',
  ops: ['gatherv', 'scatterv'],
  algorithms: ['linear', 'binomial', 'adaptive'],
  dists: SEED000_DISTRIBUTIONS,
  bs: [1, 10, 100, 1000, 10000],
  ps: [4],
  reps: 75,
  warmup: 10,
  root: 0,
  unitBytes: 4,
  rho: 5,
  seed: 1,
  model: { alpha: 100, beta: 1, gamma: 0 },
  calibrate: true,
  persistent: false,
  references: 'vcoll',
  alpha: 0.05,
  interSettings: [],
  interSizes: [],
  interRanks: [],
};

