import { describe, expect, it } from 'vitest';
import { releaseScratch, REPORT_STEP, SLAB_PIECE_MAX, scratchBuffer, scratchMade } from '../src/comm/scratch.js';
import type { VirtualClock } from '../src/comm/endpoint.js';

const clock = { now: () => 0, sync: () => Promise.resolve() } as unknown as VirtualClock;
const sim = { clock };
const real = { clock: undefined };

describe('scratch buffers (comm/scratch.ts)', () => {
  it('on a real transport: a plain zeroed Uint8Array of its own, whatever the size', () => {
    for (const n of [0, 1, 64, 65, 4096, SLAB_PIECE_MAX + 1]) {
      const b = scratchBuffer(real, n);
      expect(b.length).toBe(n);
      expect(b.buffer).toBeInstanceOf(ArrayBuffer);
      expect(b.byteOffset).toBe(0);
      expect(b.buffer.byteLength).toBe(n);
    }
  });

  it('on the simulator: small pieces cut from shared slabs, 8-byte aligned, zeroed, never overlapping', () => {
    const before = scratchMade();
    const pieces = [65, 100, 1000, 7, 4096, SLAB_PIECE_MAX].map((n) => scratchBuffer(sim, n));
    expect(pieces[3].buffer).toBeInstanceOf(ArrayBuffer); // on V8's heap: plain
    const shared = pieces.filter((_, i) => i !== 3);
    for (const b of shared) {
      expect(b.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(b.byteOffset % 8).toBe(0);
      expect(b.every((x) => x === 0)).toBe(true);
      b.fill(0xab);
    }
    // writing each piece left the others as they were: no overlap
    for (const b of shared) expect(b.every((x) => x === 0xab)).toBe(true);
    expect(scratchMade().slabs - before.slabs).toBeLessThanOrEqual(2);
  });

  it('on the simulator: a large buffer is shared memory of its own; every REPORT_STEP bytes V8 is nudged once', () => {
    const before = scratchMade();
    const big = 64 * 2 ** 20;
    const n = Math.ceil(REPORT_STEP / big) + 1;
    for (let i = 0; i < n; i++) {
      const b = scratchBuffer(sim, big); // never written: no pages touched
      expect(b.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(b.buffer.byteLength).toBe(big);
    }
    const after = scratchMade();
    expect(after.own - before.own).toBe(n);
    expect(after.nudges - before.nudges).toBe(1);
  });

  it('a released power-of-two buffer is handed out again for that size, zeroed; others and real transports keep none', () => {
    const a = scratchBuffer(sim, 4096);
    a.fill(7);
    releaseScratch(sim, a);
    const before = scratchMade();
    const b = scratchBuffer(sim, 4096);
    expect(b).toBe(a);
    expect(b.every((x) => x === 0)).toBe(true);
    expect(scratchMade().reused - before.reused).toBe(1);
    // not a power of two, or a real transport's: not kept
    const c = scratchBuffer(sim, 3000);
    releaseScratch(sim, c);
    expect(scratchBuffer(sim, 3000)).not.toBe(c);
    const d = scratchBuffer(real, 4096);
    releaseScratch(real, d);
    expect(scratchBuffer(real, 4096)).not.toBe(d);
  });
});
