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
        const bad = [new Uint8Array(1), new Float64Array(1)] as unknown as Uint8Array[];
        return [await rejection(comm.isend(0, 0, bad)), await rejection(comm.irecv(0, 0, bad))];
      },
      { model },
    );
    for (const x of res.results[0]) {
      expect(x).toBeInstanceOf(InvalidArgumentError);
    }
  });
});
