import { describe, expect, it } from 'vitest';
import { PORTABLE_V_ALGORITHMS } from '../src/collectives/v-variants.js';
import { runMainJob } from '../src/cli/demo-command.js';
import { SEED000_DISTRIBUTIONS } from '../src/run/spec.js';
import { sink } from './helpers/cli.js';

describe('main job', () => {
  it('runs every gatherv/scatterv algorithm on every Traff18 distribution on threads (p = 3, b = 10), all verified', async () => {
    const out = sink();
    const result = await runMainJob({ p: 3, b: 10, root: 1, reps: 1, warmup: 0, out: out.stream });
    expect(result.ok).toBe(true);
    expect(result.rows).toHaveLength(2 * PORTABLE_V_ALGORITHMS.length * SEED000_DISTRIBUTIONS.length);
    for (const row of result.rows) {
      if (row.skipped !== undefined) {
        // only two-block is ever not applicable (more than two distinct block sizes)
        expect(row.algorithm).toBe('two-block');
        continue;
      }
      const { call, start } = row;
      if (!call || !start) throw new Error(`${row.op} ${row.algorithm} ${row.dist}: missing result`);
      expect(call.verified, `${row.op} ${row.algorithm} ${row.dist}`).toBe(true);
      expect(start.verified).toBe(true);
      expect(call.transport).toBe('threads');
      expect(call.p).toBe(3);
      expect(call.root).toBe(1);
      expect(start.persistent).toBe(true);
      expect(call.time).toBeGreaterThan(0);
      expect(start.time).toBeGreaterThan(0);
      expect(Number.isFinite(start.predicted)).toBe(true);
      expect(start.predicted).toBeGreaterThanOrEqual(0);
    }
    // two-block runs on the distributions with at most two block sizes
    expect(result.rows.some((r) => r.algorithm === 'two-block' && r.dist === 'two-blocks' && r.call?.verified)).toBe(true);
    const c = result.calibration;
    expect(c.alphaUs).toBeGreaterThan(0);
    expect(c.betaUs).toBeGreaterThanOrEqual(0);
    expect(c.roundUs).toBeGreaterThanOrEqual(0);
    // every case ran with the calibrated model and round latency, which auto chose with
    for (const row of result.rows) if (row.call) expect(row.call.roundLatency).toBe(c.roundUs);
    const text = out.text();
    expect(text).toMatch(/α = [\d.]+ µs/);
    expect(text).toMatch(/round latency [\d.]+ µs/);
    expect(text).toMatch(/every result verified/);
    for (const alg of PORTABLE_V_ALGORITHMS) expect(text).toContain(alg);
  }, 60_000);
});
