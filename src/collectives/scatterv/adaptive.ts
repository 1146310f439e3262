/**
 * Adaptive scatterv (Traff18: TUW_Scatterv, Lemmas 1–4, Theorem 1, §3).
 *
 * Construction first (adaptive/construct.ts, Lemma 3 with the MPI root fixed as in Lemma 2):
 * the tree equals `adaptiveBinomialTree(sizes, model, { root, rule })`, the gather tree run
 * backwards. Then the data top-down, each gather root sending to its children in the reverse
 * of the order it joined them: the root straight from its send buffer (a vectored send when
 * the displacements of a range are not contiguous, collectives/placement.ts); an inner rank receives
 * its whole range into an intermediate buffer in rank order, sends the sub-ranges on and
 * copies its own block out at the position the gather copy convention mirrors; a leaf
 * receives straight into its buffer (under Lemma 4 every rank goes through the buffer). An
 * empty range moves no message.
 *
 * `init` runs the construction, `start()` only the data phase (the root cannot start before
 * the tree exists, §3: the construction is not hidden as in gather). Cost: construction
 * ⌈log₂p⌉ rounds of constant-size messages; data phase exactly the evaluator's scatter time
 * of the tree, ⌈log₂p⌉α + βΣ_{i≠r} m_i for the Lemma 1 free root with γ = 0, p = 2^d.
 */
import type { MessageBuffer } from '../../comm/segments.js';
import { blockView, rangePlacement, rootLayout } from '../placement.js';
import { persistentPlan } from '../node-schedule.js';
import type { PersistentCollective } from '../types.js';
import type { ScattervPlanInput, ScattervVariant } from '../variant.js';
import { constructAdaptive, type AdaptiveRole } from '../adaptive/construct.js';
import { adaptiveContext, adaptiveInfo, bufferLayout, copyPosition, rootRangeCheck } from '../adaptive/plan.js';
import { nextPlanTags } from '../adaptive/tags.js';

interface Outgoing {
  readonly peer: number;
  readonly bytes: number;
  /** Where the range comes from (root: its placement in the send buffer). */
  readonly buffer: MessageBuffer;
}

async function initAdaptiveScatterv(input: ScattervPlanInput): Promise<PersistentCollective> {
  const { comm, root, unitBytes: u } = input;
  const me = comm.rank;
  const ctx = adaptiveContext(comm, root, input.model, input.adaptive);
  const tags = nextPlanTags(comm);
  const check = me === root ? rootRangeCheck(me, input.counts as readonly number[]) : undefined;
  const role: AdaptiveRole = await constructAdaptive({ comm, root, count: input.count, ctx, tags, onEvent: check });
  const tag = tags.data;
  const kids = role.children;
  const at = copyPosition(role, ctx.copyAll);

  let receive: (() => Promise<void>) | undefined;
  let copyOwn: () => void;
  const out: Outgoing[] = [];
  if (me === root) {
    const layout = rootLayout(input);
    const send = input.send as Uint8Array;
    for (const c of kids) out.push({ peer: c.peer, bytes: c.size * u, buffer: rangePlacement(send, layout, c.lo, c.hi).buffer });
    copyOwn = () => {
      if (!input.inPlace) comm.copy(input.recv, blockView(send, layout, me));
    };
  } else if (kids.length === 0 && !ctx.copyAll) {
    const parent = role.parent as NonNullable<AdaptiveRole['parent']>;
    receive = async () => {
      if (input.count > 0) await comm.recv(parent.peer, tag, input.recv);
    };
    copyOwn = () => {};
  } else {
    const parent = role.parent as NonNullable<AdaptiveRole['parent']>;
    const l = bufferLayout(role, u);
    const buf = new Uint8Array(l.total);
    kids.forEach((c, k) => {
      out.push({ peer: c.peer, bytes: c.size * u, buffer: buf.subarray(l.children[k], l.children[k] + c.size * u) });
    });
    receive = async () => {
      if (l.total > 0) await comm.recv(parent.peer, tag, buf);
    };
    const own = buf.subarray(l.own, l.own + input.count * u);
    copyOwn = () => comm.copy(input.recv, own);
  }

  return persistentPlan(comm, adaptiveInfo(comm.size), async () => {
    if (receive !== undefined) await receive();
    // The gather order reversed: sends to the last-joined child first, the copy mirrored.
    if (at === out.length) copyOwn();
    for (let j = out.length - 1; j >= 0; j--) {
      const o = out[j];
      if (o.bytes > 0) await comm.send(o.peer, tag, o.buffer);
      if (j === at) copyOwn();
    }
  });
}

export const ADAPTIVE_SCATTERV: ScattervVariant = {
  name: 'adaptive',
  description: 'Traff18: distributed adaptive binomial tree (Lemma 3, constant-size messages), fixed root (Lemma 2), data top-down after the construction',
  init: initAdaptiveScatterv,
};
