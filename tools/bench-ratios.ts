/**
 * Ratios of `vcoll bench --json` results files against a reference algorithm: for each
 * (op, distribution, b) the median of each algorithm's times over the reference's, then the
 * geometric mean over the cases; and how many GL2 checks each algorithm held. One line per
 * file, so repeated runs show their spread side by side.
 *
 *   npx tsx tools/bench-ratios.ts [--reference mpi-native] results1.json [results2.json …]
 */
import { readFileSync } from 'node:fs';
import type { BenchResults } from '../src/harness/results.js';

const args = process.argv.slice(2);
let reference = 'mpi-native';
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--reference') reference = args[++i];
  else files.push(args[i]);
}
if (files.length === 0) {
  console.error('usage: npx tsx tools/bench-ratios.ts [--reference NAME] results.json …');
  process.exit(2);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

for (const file of files) {
  const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
  const cases = new Map<string, Map<string, number>>();
  for (const row of results.rows) {
    if (row.kind !== 'algorithm' || row.algorithm === undefined) continue;
    const key = `${row.op} ${row.dist} ${row.b} p=${row.p}`;
    const byAlgorithm = cases.get(key) ?? new Map<string, number>();
    byAlgorithm.set(row.algorithm, median(row.times));
    cases.set(key, byAlgorithm);
  }
  const algorithms = new Set<string>();
  for (const byAlgorithm of cases.values()) for (const a of byAlgorithm.keys()) if (a !== reference) algorithms.add(a);
  const parts: string[] = [];
  for (const a of algorithms) {
    let logSum = 0;
    let n = 0;
    for (const byAlgorithm of cases.values()) {
      const t = byAlgorithm.get(a);
      const ref = byAlgorithm.get(reference);
      if (t !== undefined && ref !== undefined && ref > 0) {
        logSum += Math.log(t / ref);
        n++;
      }
    }
    const gl2 = results.verdicts.filter((v) => v.guideline === 'GL2' && v.algorithm === a);
    const held = gl2.filter((v) => v.verdict !== 'violated').length;
    parts.push(`${a} ${n > 0 ? Math.exp(logSum / n).toFixed(2) : '-'}x of ${reference} (${n} cases; GL2 held ${held}/${gl2.length})`);
  }
  console.log(`${file}: ${parts.join('; ')}`);
}
