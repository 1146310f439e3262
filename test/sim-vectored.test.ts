import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Communicator } from '../src/comm/communicator.js';
import { byteLength, contiguous, copyBytes, isMessageBuffer, type MessageBuffer } from '../src/comm/segments.js';
import { CommunicationError, InvalidArgumentError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { rejection } from './helpers/errors.js';

/** Splits `bytes` into segments of the given lengths (the rest in a last segment). */
function split(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let off = 0;
  for (const c of cuts) {
    const n = Math.min(c, bytes.length - off);
    out.push(bytes.subarray(off, off + n));
    off += n;
  }
  out.push(bytes.subarray(off));
  return out;
}

const pattern = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

describe('segments', () => {
  it('copyBytes between any two segmentations equals a contiguous copy (zero-length segments too)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12, size: 'medium' }),
        fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 12, size: 'medium' }),
        fc.integer({ min: 0, max: 200 }),
        (len, cutsS, cutsD, nRaw) => {
          const src = pattern(len, 7);
          const n = Math.min(nRaw, len);
          const dst = new Uint8Array(len + 5).fill(0xee);
          const ss = split(src, cutsS);
          const ds = split(dst, cutsD);
          expect(byteLength(ss)).toBe(len);
          copyBytes(ds, ss, n);
          expect(Array.from(dst.subarray(0, n))).toEqual(Array.from(src.subarray(0, n)));
          expect(dst.subarray(n).every((x) => x === 0xee)).toBe(true);
          expect(Array.from(contiguous(ss))).toEqual(Array.from(src));
        },
      ),
    );
    expect(isMessageBuffer([new Uint8Array(1), new Uint8Array(0)])).toBe(true);
    expect(isMessageBuffer([new Uint8Array(1), new Uint16Array(1)])).toBe(false);
    expect(isMessageBuffer('x')).toBe(false);
  });
});

describe('simulator: vectored sends and receives', () => {
  const model = linearModel({ alpha: 10, beta: 1, gamma: 0 });

  it('contiguous and vectored on either side carry the same bytes, in one message of α + βn', async () => {
    const n = 37;
    for (const sendVec of [false, true]) {
      for (const recvVec of [false, true]) {
        const into = new Uint8Array(n + 3).fill(0xee);
        const res = await runSim(
          2,
          async (comm: Communicator) => {
            if (comm.rank === 0) {
              const data = pattern(n, 1);
              const buf: MessageBuffer = sendVec ? split(data, [0, 5, 0, 11]) : data;
              await comm.send(1, 3, buf);
              return -1;
            }
            const buf: MessageBuffer = recvVec ? split(into, [4, 0, 20]) : into;
            const st = await comm.recv(0, 3, buf);
            return st.bytes;
          },
          { model },
        );
        expect(res.results[1]).toBe(n);
        expect(res.messages).toBe(1);
        expect(res.time).toBe(10 + n);
        expect(Array.from(into.subarray(0, n))).toEqual(Array.from(pattern(n, 1)));
        expect(into.subarray(n).every((x) => x === 0xee)).toBe(true);
      }
    }
  });

  it('any typed array or DataView, contiguous or in segments, travels as its bytes (world and split communicators)', async () => {
    const res = await runSim(
      3,
      async (comm: Communicator) => {
        const sub = (await comm.split(0, -comm.rank)) as Communicator; // reversed ranks
        for (const c of [comm, sub]) {
          const right = (c.rank + 1) % c.size;
          const left = (c.rank + c.size - 1) % c.size;
          const f64 = Float64Array.of(c.rank + 0.5, -c.rank);
          const i16 = Int16Array.of(c.rank, 7, -3);
          const into64 = new Float64Array(2);
          const intoParts = [new Int16Array(1), new DataView(new ArrayBuffer(4))];
          const sends = [c.isend(right, 1, f64), c.isend(right, 2, [i16.subarray(0, 1), i16.subarray(1)])];
          const st = await c.recv(left, 1, into64);
          const st2 = await c.recv(left, 2, intoParts);
          await c.waitAll(sends);
          expect(st.bytes).toBe(16);
          expect(Array.from(into64)).toEqual([left + 0.5, -left]);
          expect(st2.bytes).toBe(6);
          expect(intoParts[0] instanceof Int16Array ? intoParts[0][0] : NaN).toBe(left);
          const dv = intoParts[1] as DataView;
          expect([dv.getInt16(0, true), dv.getInt16(2, true)]).toEqual([7, -3]);
        }
        return [await rejection(comm.isend(0, 0, 'text' as unknown as Uint8Array)), await rejection(comm.irecv(0, 0, [new Uint8Array(1), 5] as unknown as Uint8Array[]))];
      },
      { model },
    );
    for (const errs of res.results) {
      expect(errs.map((e) => (e as InvalidArgumentError).field)).toEqual(['data', 'into']);
    }
  });

  it('truncation counts every segment; bad segments are typed errors', async () => {
    const e = await rejection(
      runSim(
        2,
        async (comm: Communicator) => {
          if (comm.rank === 0) await comm.send(1, 0, [new Uint8Array(4), new Uint8Array(4)]);
          else await comm.recv(0, 0, [new Uint8Array(3), new Uint8Array(4)]);
        },
        { model },
      ),
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as Error).message).toContain('message of 8 bytes');
    expect((e as Error).message).toContain('holds 7 bytes');
    const res = await runSim(
      1,
      async (comm: Communicator) => {
        const bad = [new Uint8Array(1), 'not bytes'] as unknown as Uint8Array[];
        return [await rejection(comm.isend(0, 0, bad)), await rejection(comm.irecv(0, 0, bad))];
      },
      { model },
    );
    for (const x of res.results[0]) {
      expect(x).toBeInstanceOf(InvalidArgumentError);
    }
  });
});
