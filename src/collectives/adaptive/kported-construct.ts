/**
 * The distributed construction of the adaptive gather/scatter tree with k ports (Traff18 §2:
 * Lemma 3 over the (k+1)-ary ordered hypercube, Theorem 1's k-ported remark; Lemma 2's fixed
 * MPI root, Lemma 4's copyAll). The tree equals `adaptiveBinomialTree(sizes, model, { root,
 * rule })` with model.ports = k, bit for bit (kported-decide.ts). One-ported models run
 * construct.ts's own construction (48-byte records); this module is for k ≥ 2.
 *
 * Invariant for every range of level t (width (k+1)^t, hypercube.ts groupOf): its fixed root
 * (last rank) holds the range's record (kported-decide.ts: 48 + 8k bytes, the gather root's k
 * port-free times included); its gather root knows that it is one. Round t, for each group of
 * n ≤ k + 1 adjacent level-t ranges (n = 1: the range passes through):
 *   1. every fixed root of the group sends its record to the n − 1 others and receives theirs
 *      (all posted at once: with k ports one step of n − 1 receives and n − 1 sends), and all
 *      compute the same decision (GroupDecision);
 *   2. each fixed root whose gather root is another rank sends it one notification of
 *      NOTIFY_WORDS_K(k) words: the receiver learns its n − 1 senders in the order it takes
 *      them (each sender's gather root, range total and count checksum), a sender learns its
 *      receiver.
 * The last range's fixed root is the joined range's and keeps the joined record.
 *
 * Cost: ⌈log_{k+1} p⌉ rounds; per round a fixed root sends and receives at most k records of
 * 48 + 8k bytes and sends at most one notification of 16 + 24k bytes; a gather root receives at
 * most one notification per round. Longest chain of dependent messages: ⌈log_{k+1} p⌉
 * exchanges, then one notification (constructionRounds). Local work O(k³) per round.
 */
import type { Communicator, Status } from '../../comm/communicator.js';
import type { Request } from '../../comm/request.js';
import { CommunicationError, InvalidArgumentError, TruncationError, VcollError } from '../../errors.js';
import { contextFingerprint, countCheck, type RangeRecord } from './decide.js';
import { groupOf, hypercubeRounds, levelRangeHi, levelRangeLo } from './hypercube.js';
import { checkOf, GroupDecision, rangeRecordK, recordWordsK, W_FLAGS, W_PRINT, W_ROOT, W_TOTAL, writeLeafRecordK } from './kported-decide.js';
import type { AdaptiveRole, ConstructionInput, ConstructionSink, RoleEvent } from './construct.js';

/** Words of a k-ported notification: kind, round, then k (peer, size, check) triples. */
export function notifyWordsK(ports: number): number {
  return 2 + 3 * ports;
}

/** Bytes of a k-ported notification: 16 + 24k (k = 2: 64, k = 3: 88, k = 4: 112). */
export function notifyBytesK(ports: number): number {
  return 8 * notifyWordsK(ports);
}

const KIND_RECV = 0;
const KIND_SEND = 1;

/** Runs this rank's part of the k-ported construction (every rank of `comm` with the same root, context and tags). */
export function constructAdaptiveK(input: ConstructionInput): Promise<AdaptiveRole> {
  return new KConstruction(input).run();
}

/** `constructAdaptiveK` reporting to a sink (construct.ts startConstruction). */
export function startConstructionK(input: ConstructionInput, sink: ConstructionSink): void {
  new KConstruction(input, sink).run().then(
    (role) => sink.built(role),
    (e: unknown) => sink.buildFailed(e),
  );
}

class KConstruction {
  private readonly comm: Communicator;
  private readonly v: number;
  private readonly p: number;
  private readonly k: number;
  private readonly S: number;
  private readonly fingerprint: number;
  private readonly decision: GroupDecision;
  /** The group's records (range order) as words, and the same memory as bytes. */
  private readonly words: Float64Array;
  private readonly bytes: Uint8Array;
  /** Whether this rank holds its level range's record (words at `mine`·S while it does). */
  private holds = true;
  private readonly children: RoleEvent[] = [];
  private parent: RoleEvent | undefined;
  private readonly pending: Request<void>[] = [];

  constructor(
    private readonly input: ConstructionInput,
    private readonly sink?: ConstructionSink,
  ) {
    const comm = input.comm;
    this.comm = comm;
    this.v = comm.rank;
    this.p = comm.size;
    this.k = input.ctx.model.ports;
    this.S = recordWordsK(this.k);
    this.fingerprint = contextFingerprint(input.ctx);
    this.decision = new GroupDecision(input.ctx);
    this.words = new Float64Array((this.k + 1) * this.S);
    this.bytes = new Uint8Array(this.words.buffer);
    writeLeafRecordK(this.words, 0, this.v, input.count, input.ctx, this.fingerprint, countCheck(this.v, input.count));
  }

  async run(): Promise<AdaptiveRole> {
    const { v, p, k } = this;
    const rounds = hypercubeRounds(p, k);
    // where this rank's record is in `words` (its range's place in the last group)
    let mine = 0;
    for (let t = 0, width = 1; t < rounds && (this.holds || this.parent === undefined); t++, width *= k + 1) {
      const g = groupOf(v, width, k, p);
      if (g.n === 1) continue; // the range passes through this round
      const own = Math.floor(v / width) - g.first;
      if (this.holds) {
        if (mine !== own) this.words.copyWithin(own * this.S, mine * this.S, (mine + 1) * this.S);
        mine = own;
        await this.exchange(t, width, g.first, g.n, own);
        const last = own === g.n - 1;
        if (last) this.words.set(this.decision.joined, own * this.S);
        this.holds = last;
      } else {
        await this.awaitNotification(t, width, g.first, g.n, own);
      }
    }
    await this.comm.waitAll(this.pending);
    if (v !== this.input.root && this.parent === undefined) {
      throw new CommunicationError(`rank ${v}: the adaptive construction gave it no parent`, { rank: v });
    }
    let final: RangeRecord | undefined;
    if (v === p - 1) {
      const rec = rangeRecordK(this.words, mine * this.S);
      // p = 1: the lone root still copies its block into the result (as adaptiveRounds and evaluate charge)
      final = p === 1 ? { ...rec, time: this.input.ctx.model.copy(v, this.input.count) } : rec;
    }
    return { rank: v, p, root: this.input.root, count: this.input.count, children: this.children, parent: this.parent, final };
  }

  private mismatch(peer: number | undefined): InvalidArgumentError {
    const who = peer === undefined ? `rank ${this.v} and a partner` : `ranks ${this.v} and ${peer}`;
    return new InvalidArgumentError(
      'model',
      `${who} run the adaptive construction with different roots, cost models or adaptive options (every rank must pass the same)`,
      { rank: this.v },
    );
  }

  /** Fixed root of range `own` of the group: the exchange of records, the decision, the notification. */
  private async exchange(t: number, width: number, first: number, n: number, own: number): Promise<void> {
    const { comm, v, S, p } = this;
    const R = 8 * S;
    const tag = this.input.tags.exchange;
    // receives first, then the sends: n − 1 of each, all outstanding at once (k ports)
    const ops: Request<Status | void>[] = [];
    const peers: number[] = [];
    for (let i = 0; i < n; i++) {
      if (i === own) continue;
      const peer = levelRangeHi(first + i, width, p);
      peers.push(peer);
      ops.push(comm.irecv(peer, tag, this.bytes.subarray(i * R, (i + 1) * R)));
    }
    const mineBytes = this.bytes.subarray(own * R, (own + 1) * R);
    for (const peer of peers) ops.push(comm.isend(peer, tag, mineBytes));
    let got: (Status | void)[];
    try {
      got = await comm.waitAll(ops);
    } catch (e) {
      // a longer record: a partner runs something else (another k, or another collective)
      if (e instanceof TruncationError) throw this.mismatch(undefined);
      throw e;
    }
    for (let j = 0; j < peers.length; j++) if ((got[j] as Status).bytes !== R) throw this.mismatch(peers[j]);
    for (let i = 0; i < n; i++) if (this.words[i * S + W_PRINT] !== this.fingerprint) throw this.mismatch(levelRangeHi(first + i, width, p));
    const d = this.decision;
    d.decide(this.words, n, levelRangeLo(first, width), width);
    const gatherRoot = this.words[own * S + W_ROOT];
    const events = this.events(t, width, first, own);
    if (gatherRoot === v) {
      for (const e of events) this.emit(e);
      return;
    }
    const f = new Float64Array(notifyWordsK(this.k));
    f[0] = own === d.receiver ? KIND_RECV : KIND_SEND;
    f[1] = t;
    events.forEach((e, i) => {
      f[2 + 3 * i] = e.peer;
      f[3 + 3 * i] = e.size;
      f[4 + 3 * i] = e.check;
    });
    this.pending.push(comm.isend(gatherRoot, this.input.tags.notify, new Uint8Array(f.buffer)));
  }

  /** The events of the decided group for range `own`'s gather root (the receiver's in sender order, or the sender's one). */
  private events(t: number, width: number, first: number, own: number): RoleEvent[] {
    const { S, p } = this;
    const d = this.decision;
    const w = this.words;
    const out: RoleEvent[] = [];
    if (own === d.receiver) {
      for (let i = 0; i < d.n - 1; i++) {
        const s = d.senders[i];
        const at = s * S;
        out.push({ kind: 'recv', round: t, peer: w[at + W_ROOT], size: w[at + W_TOTAL], lo: levelRangeLo(first + s, width), hi: levelRangeHi(first + s, width, p), check: checkOf(w[at + W_FLAGS]) });
      }
    } else {
      const at = own * S;
      out.push({ kind: 'send', round: t, peer: w[d.receiver * S + W_ROOT], size: w[at + W_TOTAL], lo: levelRangeLo(first + own, width), hi: levelRangeHi(first + own, width, p), check: 0 });
    }
    return out;
  }

  /** Gather root only (not its range's fixed root): the notification of round t from the fixed root. */
  private async awaitNotification(t: number, width: number, first: number, n: number, own: number): Promise<void> {
    const { comm, v, p } = this;
    const from = levelRangeHi(first + own, width, p);
    const nb = notifyBytesK(this.k);
    const f = new Float64Array(notifyWordsK(this.k));
    let st;
    try {
      st = await comm.recv(from, this.input.tags.notify, new Uint8Array(f.buffer));
    } catch (e) {
      if (e instanceof TruncationError) throw this.shortNotification(from, e.bytes, nb);
      throw e;
    }
    if (st.bytes !== nb) throw this.shortNotification(from, st.bytes, nb);
    if (f[1] !== t) throw new CommunicationError(`rank ${v}: adaptive construction notification for round ${f[1]} in round ${t}`, { rank: v });
    if (f[0] === KIND_SEND) {
      this.emit({ kind: 'send', round: t, peer: f[2], size: f[3], lo: levelRangeLo(first + own, width), hi: levelRangeHi(first + own, width, p), check: 0 });
      return;
    }
    if (f[0] !== KIND_RECV) throw new VcollError('INTERNAL', `rank ${v}: adaptive construction notification of kind ${f[0]}`, { rank: v });
    // the senders in the order the receiver takes them: outward from its range (GroupDecision)
    let i = 0;
    for (let dist = 1; dist < n; dist++) {
      for (const s of [own - dist, own + dist]) {
        if (s < 0 || s >= n) continue;
        this.emit({ kind: 'recv', round: t, peer: f[2 + 3 * i], size: f[3 + 3 * i], lo: levelRangeLo(first + s, width), hi: levelRangeHi(first + s, width, p), check: f[4 + 3 * i] });
        i++;
      }
    }
  }

  private shortNotification(peer: number, got: number, expected: number): CommunicationError {
    return new CommunicationError(`rank ${this.v}: adaptive construction notification of ${got} bytes from rank ${peer}, ${expected} expected`, { rank: this.v });
  }

  private emit(e: RoleEvent): void {
    if (e.kind === 'recv') this.children.push(e);
    else this.parent = e;
    const sink = this.sink;
    if (sink?.joined !== undefined) sink.joined(e);
    else this.input.onEvent?.(e);
  }
}
