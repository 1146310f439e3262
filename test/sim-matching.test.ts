import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ANY_SOURCE, ANY_TAG, type Communicator } from '../src/comm/communicator.js';
import type { Endpoint } from '../src/comm/endpoint.js';
import { GroupCommunicator } from '../src/comm/group.js';
import { CommunicationError } from '../src/errors.js';
import { linearModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';
import { rejection } from './helpers/errors.js';

const free = linearModel({ alpha: 0, beta: 0, gamma: 1 });
const model10 = linearModel({ alpha: 10, beta: 0 });

function endpointOf(comm: Communicator): Endpoint {
  if (!(comm instanceof GroupCommunicator)) throw new Error('runSim must hand out GroupCommunicators');
  return comm.endpoint;
}

describe('simulator: contexts', () => {
  it('a message of one communicator never matches a receive of another, wildcards included', async () => {
    const res = await runSim(
      3,
      async (comm) => {
        const dup = (await comm.split(0, comm.rank)) as Communicator;
        if (comm.rank === 1) {
          const world = comm.isend(0, 7, Uint8Array.of(1)); // posted first
          await dup.send(0, 7, Uint8Array.of(2));
          await world;
          return [];
        }
        if (comm.rank === 2) {
          await dup.send(0, 8, Uint8Array.of(3));
          return [];
        }
        const got: string[] = [];
        const rx = async (c: Communicator, name: string, src: number, tag: number) => {
          const into = new Uint8Array(1);
          const st = await c.recv(src, tag, into);
          got.push(`${name}:${st.source}/${st.tag}/${into[0]}`);
        };
        await rx(dup, 'dup', ANY_SOURCE, ANY_TAG); // the world message came first but is not dup's
        await rx(dup, 'dup', ANY_SOURCE, ANY_TAG);
        await rx(comm, 'world', ANY_SOURCE, ANY_TAG);
        return got.sort();
      },
      { model: model10 },
    );
    expect(res.results[0]).toEqual(['dup:1/7/2', 'dup:2/8/3', 'world:1/7/1']);
  });

  it('endpoint contexts: an unmatched message reports its context; a bad context is an InvalidArgumentError', async () => {
    const e = await rejection(
      runSim(
        2,
        async (comm) => {
          const ep = endpointOf(comm);
          if (comm.rank === 0) await ep.isend(5, 1, 3, new Uint8Array(1));
          else await ep.irecv(0, ANY_SOURCE, ANY_TAG, new Uint8Array(1));
        },
        { model: model10 },
      ),
    );
    expect(e).toBeInstanceOf(CommunicationError);
    expect((e as Error).message).toContain('rank 0: send to 1 tag 3 (1 bytes) (context 5)');
    expect((e as Error).message).toContain('rank 1: recv from any source tag any tag');
    const fields = await runSim(
      1,
      async (comm) => {
        const ep = endpointOf(comm);
        const errs = [await rejection(ep.isend(-1, 0, 0, new Uint8Array(1))), await rejection(ep.irecv(1.5, 0, 0, new Uint8Array(1)))];
        return errs.map((x) => (x as { field?: string }).field);
      },
      { model: model10 },
    );
    expect(fields.results[0]).toEqual(['ctx', 'ctx']);
  });
});

interface SendSpec {
  id: number;
  src: number;
  tag: number;
  dup: boolean;
}
interface RecvSpec {
  src: number;
  tag: number;
  dup: boolean;
  /** Posted before (0) or after (1) the sends arrive. */
  phase: number;
}

/** MPI matching by hand: receives of phase 0, then the sends in arrival order, then receives of phase 1. */
function reference(sends: SendSpec[], recvs: RecvSpec[]): (number | null)[] {
  const accepts = (r: RecvSpec, s: SendSpec) =>
    r.dup === s.dup && (r.src === ANY_SOURCE || r.src === s.src) && (r.tag === ANY_TAG || r.tag === s.tag);
  const got: (number | null)[] = recvs.map(() => null);
  const posted: number[] = [];
  const unexpected: SendSpec[] = [];
  for (let i = 0; i < recvs.length; i++) if (recvs[i].phase === 0) posted.push(i);
  for (const s of sends) {
    const j = posted.findIndex((i) => accepts(recvs[i], s));
    if (j < 0) unexpected.push(s);
    else got[posted.splice(j, 1)[0]] = s.id;
  }
  for (let i = 0; i < recvs.length; i++) {
    if (recvs[i].phase !== 1) continue;
    const j = unexpected.findIndex((s) => accepts(recvs[i], s));
    if (j >= 0) got[i] = unexpected.splice(j, 1)[0].id;
  }
  return got;
}

describe('simulator: matching equals MPI matching (indexed and scanned queues)', () => {
  it('random sends and receives with wildcards, two contexts, posted before and after the sends', async () => {
    const m = 5; // senders 1..m
    const sendArb = fc.record({ src: fc.integer({ min: 1, max: m }), tag: fc.integer({ min: 0, max: 2 }), dup: fc.boolean() });
    const recvArb = fc.record({
      src: fc.oneof({ arbitrary: fc.constant(ANY_SOURCE), weight: 1 }, { arbitrary: fc.integer({ min: 1, max: m }), weight: 3 }),
      tag: fc.oneof({ arbitrary: fc.constant(ANY_TAG), weight: 1 }, { arbitrary: fc.integer({ min: 0, max: 2 }), weight: 2 }),
      dup: fc.boolean(),
      phase: fc.integer({ min: 0, max: 1 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(sendArb, { maxLength: 120, size: 'max' }), fc.array(recvArb, { maxLength: 120, size: 'max' }), async (rawSends, recvs) => {
        // Arrival order = rank order, then program order.
        const sends: SendSpec[] = rawSends
          .map((s, i) => ({ ...s, id: i }))
          .sort((a, b) => a.src - b.src || a.id - b.id);
        const want = reference(sends, recvs);
        const got: (number | null)[] = recvs.map(() => null);
        const run = runSim(
          m + 1,
          async (comm) => {
            const dup = (await comm.split(0, comm.rank)) as Communicator;
            await comm.clock?.sync();
            if (comm.rank > 0) {
              for (const s of sends) {
                if (s.src === comm.rank) void (s.dup ? dup : comm)
                    .isend(0, s.tag, new Uint8Array(Uint16Array.of(s.id).buffer))
                    .then(undefined, () => undefined);
              }
              return;
            }
            const post = (i: number) => {
              const r = recvs[i];
              const into = new Uint8Array(2);
              void (r.dup ? dup : comm)
                .irecv(r.src, r.tag, into)
                .then(
                  () => {
                    got[i] = new Uint16Array(into.buffer)[0];
                  },
                  () => undefined,
                );
            };
            for (let i = 0; i < recvs.length; i++) if (recvs[i].phase === 0) post(i);
            comm.copy(new Uint8Array(1), new Uint8Array(1)); // later than every send
            for (let i = 0; i < recvs.length; i++) if (recvs[i].phase === 1) post(i);
          },
          { model: free },
        );
        const leftovers = want.filter((x) => x === null).length + sends.length - want.filter((x) => x !== null).length;
        if (leftovers > 0) expect(await rejection(run)).toBeInstanceOf(CommunicationError);
        else await run;
        expect(got).toEqual(want);
      }),
      { numRuns: 80, seed: 20261123 },
    );
  });
});
