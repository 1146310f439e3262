/**
 * The tag table (comm/tags.ts): its ranges are disjoint and fit one call slot, every tag
 * constant of the collectives is the table's value, describeTag decodes every range, and every
 * tag a collective actually sends on the simulator is one the table names.
 */
import { describe, expect, it } from 'vitest';
import { ADAPTIVE_TAG_FIRST, ADAPTIVE_TAG_LAST, nextPlanTags } from '../src/collectives/adaptive/tags.js';
import { ALLGATHER_TAGS } from '../src/collectives/allgather/types.js';
import { CALL_TAG_STRIDE as SCOPE_STRIDE, OWN_SLOTS as SCOPE_OWN_SLOTS, callSlotOfTag as scopeSlotOf, unslottedTag as scopeUnslotted } from '../src/collectives/call-scope.js';
import { V_TAGS } from '../src/collectives/defaults.js';
import { HIER_TAG } from '../src/collectives/hierarchical/types.js';
import {
  ALLGATHERV_ALGORITHMS,
  ALLGATHER_ALGORITHMS,
  allgather,
  allgatherv,
  allreduce,
  barrier,
  basicAllgather,
  BASIC_TAG,
  BASIC_TAG_FIRST,
  BASIC_TAG_LAST,
  bcast,
  exscan,
  gather,
  gatherv,
  gathervInit,
  GATHERV_VARIANTS,
  hierarchicalGather,
  hierarchicalGatherv,
  HIERARCHICAL_VARIANT_NAMES,
  INTER_ALLGATHER_ALGORITHMS,
  interAllgather,
  interAllgatherv,
  portableVariants,
  reduce,
  scatter,
  scatterv,
  SCATTERV_VARIANTS,
  type GathervVariant,
  type ScattervVariant,
  type VAlgorithm,
} from '../src/collectives/index.js';
import { INTER_TAGS } from '../src/collectives/inter/types.js';
import { nextDataTag } from '../src/collectives/node-schedule.js';
import { portableAlgorithms } from '../src/collectives/types.js';
import { MANAGEMENT_TAG, TAG_BCAST, TAG_LEADER, TAG_SPLIT } from '../src/comm/agree.js';
import { ANY_TAG, COLLECTIVE_TAG, type Communicator } from '../src/comm/communicator.js';
import { splitIntercomm } from '../src/comm/intercomm.js';
import {
  CALL_TAG_STRIDE,
  callSlotOfTag,
  DERIVED_FIRST,
  DERIVED_SLOTS,
  describeTag,
  OWN_SLOTS,
  TAG_TABLE,
  tagRangeOf,
  unslottedTag,
  type TagRange,
} from '../src/comm/tags.js';
import { DeadlockError } from '../src/errors.js';
import { hierarchicalModel } from '../src/model/cost-model.js';
import { runSim } from '../src/transports/sim/index.js';

const ROWS: readonly TagRange[] = TAG_TABLE;
const row = (name: string): TagRange => ROWS.find((r) => r.name === name)!;
/** The tag of offset `off` in call slot `slot`. */
const at = (off: number, slot = 0): number => COLLECTIVE_TAG + slot * CALL_TAG_STRIDE + off;

describe('the tag table', () => {
  it('ranges are disjoint, each lies within one call slot (slotted ones in the first), named tags lie inside', () => {
    const sorted = [...ROWS].sort((a, b) => a.first - b.first);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i].first, `${sorted[i - 1].name} / ${sorted[i].name}`).toBeGreaterThan(sorted[i - 1].last);
    for (const r of ROWS) {
      expect(r.first, r.name).toBeLessThanOrEqual(r.last);
      expect(Math.floor(r.first / CALL_TAG_STRIDE), r.name).toBe(Math.floor(r.last / CALL_TAG_STRIDE));
      if (r.slotted) expect(r.last, r.name).toBeLessThan(CALL_TAG_STRIDE);
      // unslotted (management): past every call slot, inside the reserved 2^20 tags
      else expect(r.first, r.name).toBeGreaterThanOrEqual((DERIVED_FIRST + DERIVED_SLOTS) * CALL_TAG_STRIDE);
      expect(r.last, r.name).toBeLessThan(2 ** 20);
      for (const [name, off] of Object.entries(r.tags ?? {})) {
        expect(off, `${r.name}.${name}`).toBeGreaterThanOrEqual(r.first);
        expect(off, `${r.name}.${name}`).toBeLessThanOrEqual(r.last);
      }
      if (r.plan !== undefined) {
        expect((r.last - r.first + 1) % r.plan.stride, r.name).toBe(0);
        for (const [name, k] of Object.entries(r.plan.kinds)) expect(k >= 0 && k < r.plan.stride, `${r.name} kind ${name}`).toBe(true);
      }
    }
    expect(new Set(ROWS.map((r) => r.name)).size).toBe(ROWS.length);
  });

  it('the values are those on the wire today', () => {
    const offsets = Object.fromEntries(ROWS.map((r) => [r.name, [r.first, r.last]]));
    expect(offsets).toEqual({
      basic: [0x100, 0x1ff],
      adaptive: [0x200, 0x2ff],
      'v-plan': [0x300, 0x37f],
      'v-data': [0x380, 0x3ff],
      allgather: [0x400, 0x41f],
      inter: [0x420, 0x43f],
      hierarchical: [0x460, 0x46f],
      management: [2 ** 20 - 16, 2 ** 20 - 1],
    });
    expect([CALL_TAG_STRIDE, OWN_SLOTS, DERIVED_FIRST, DERIVED_SLOTS]).toEqual([0x800, 256, 256, 255]);
  });

  it('every exported tag constant is its table value', () => {
    const abs = (name: string): Record<string, number> => Object.fromEntries(Object.entries(row(name).tags ?? {}).map(([k, o]) => [k, COLLECTIVE_TAG + o]));
    expect([BASIC_TAG_FIRST, BASIC_TAG_LAST]).toEqual([COLLECTIVE_TAG + row('basic').first, COLLECTIVE_TAG + row('basic').last]);
    expect({ ...BASIC_TAG }).toEqual(abs('basic'));
    expect(BASIC_TAG).toMatchObject({ barrier: at(0x100), bcast: at(0x101), allgather: at(0x107) });
    expect([ADAPTIVE_TAG_FIRST, ADAPTIVE_TAG_LAST]).toEqual([COLLECTIVE_TAG + row('adaptive').first, COLLECTIVE_TAG + row('adaptive').last]);
    expect({ ...V_TAGS }).toEqual({ ...abs('v-plan'), dataFirst: COLLECTIVE_TAG + row('v-data').first });
    expect({ ...V_TAGS }).toEqual({ counts: at(0x301), schedule: at(0x302), scheduleChildren: at(0x303), dataFirst: at(0x380) });
    expect({ ...ALLGATHER_TAGS }).toEqual(abs('allgather'));
    expect(ALLGATHER_TAGS).toMatchObject({ ring: at(0x400), handshake: at(0x404) });
    expect({ ...INTER_TAGS }).toEqual(abs('inter'));
    expect(INTER_TAGS).toMatchObject({ rootExchange: at(0x421), sizes: at(0x424) });
    expect({ ...HIER_TAG }).toEqual(abs('hierarchical'));
    expect(HIER_TAG).toEqual({ local: at(0x460), bridge: at(0x461) });
    const mgmt = abs('management');
    expect([MANAGEMENT_TAG, TAG_SPLIT, TAG_BCAST, TAG_LEADER]).toEqual([COLLECTIVE_TAG + row('management').first, mgmt.split, mgmt.bcast, mgmt.leader]);
    // call-scope.ts re-exports the slot arithmetic of the table
    expect([SCOPE_STRIDE, SCOPE_OWN_SLOTS, scopeSlotOf, scopeUnslotted]).toEqual([CALL_TAG_STRIDE, OWN_SLOTS, callSlotOfTag, unslottedTag]);
  });

  it('the per-plan tags cycle through exactly their range', () => {
    const comm = {} as Communicator;
    const adaptive = row('adaptive');
    const plans = Array.from({ length: 130 }, () => nextPlanTags(comm));
    expect(plans[0]).toEqual({ exchange: at(0x200), notify: at(0x201), data: at(0x202), verdict: at(0x203) });
    expect(plans[63]).toEqual({ exchange: at(0x2fc), notify: at(0x2fd), data: at(0x2fe), verdict: at(0x2ff) });
    expect(plans[64]).toEqual(plans[0]);
    for (const t of plans.flatMap((x) => [x.exchange, x.notify, x.data, x.verdict])) {
      expect(t - COLLECTIVE_TAG).toBeGreaterThanOrEqual(adaptive.first);
      expect(t - COLLECTIVE_TAG).toBeLessThanOrEqual(adaptive.last);
    }
    const data = Array.from({ length: 260 }, () => nextDataTag(comm, V_TAGS.dataFirst) - COLLECTIVE_TAG);
    expect([Math.min(...data), Math.max(...data)]).toEqual([row('v-data').first, row('v-data').last]);
    expect(data[128]).toBe(data[0]);
  });
});

describe('describeTag', () => {
  it('decodes a tag of each range, in slot 0, a later call slot and a derived slot', () => {
    expect(describeTag(BASIC_TAG.bcast)).toBe('basic collectives: bcast (call slot 0)');
    expect(describeTag(at(0x200 + 4 * 3, 2))).toBe('adaptive gatherv/scatterv: plan 3, exchange between fixed roots (call slot 2)');
    expect(describeTag(at(0x200 + 4 * 7 + 1))).toBe('adaptive gatherv/scatterv: plan 7, fixed root → gather root notification (call slot 0)');
    expect(describeTag(at(0x200 + 2, 5))).toBe('adaptive gatherv/scatterv: plan 0, data (call slot 5)');
    expect(describeTag(V_TAGS.dataFirst + 5)).toBe('gatherv/scatterv data, plan 5 (call slot 0)');
    expect(describeTag(V_TAGS.dataFirst + 127 + 9 * CALL_TAG_STRIDE)).toBe('gatherv/scatterv data, plan 127 (call slot 9)');
    expect(describeTag(V_TAGS.counts + 255 * CALL_TAG_STRIDE)).toBe('gatherv/scatterv planning: binomial counts (call slot 255)');
    expect(describeTag(V_TAGS.scheduleChildren)).toBe('gatherv/scatterv planning: tree schedule children (call slot 0)');
    expect(describeTag(ALLGATHER_TAGS.handshake + CALL_TAG_STRIDE)).toBe('allgather(v): handshake (call slot 1)');
    expect(describeTag(INTER_TAGS.sizes)).toBe('intergroup allgather(v): block sizes (call slot 0)');
    expect(describeTag(HIER_TAG.local + (DERIVED_FIRST + 4) * CALL_TAG_STRIDE)).toBe('hierarchical gather(v): node level (derived-communicator slot 260, of call slot 4)');
    expect(describeTag(HIER_TAG.bridge + DERIVED_FIRST * CALL_TAG_STRIDE)).toBe('hierarchical gather(v): bridge level (derived-communicator slot 256, of call slot 0 or 255)');
    expect(describeTag(TAG_SPLIT)).toBe('communicator management: split');
    expect(describeTag(MANAGEMENT_TAG + 7)).toBe('communicator management: mergeBcast');
  });

  it('user tags, ANY_TAG and tags the table does not name', () => {
    expect(describeTag(17)).toBe('user tag 17');
    expect(describeTag(0)).toBe('user tag 0');
    expect(describeTag(COLLECTIVE_TAG - 1)).toBe(`user tag ${COLLECTIVE_TAG - 1}`);
    expect(describeTag(ANY_TAG)).toBe('any tag');
    expect(describeTag(at(0x450))).toBe('unknown collective tag 0x40000450 (call slot 0)');
    expect(describeTag(at(0x50, 3))).toBe('unknown collective tag 0x40001850 (call slot 3)');
    expect(describeTag(at(0x108))).toMatch(/^unknown tag 0x108 in the range of basic collectives/);
    expect(describeTag(at(0x203))).toMatch(/^adaptive gatherv\/scatterv: plan 0, verdict/);
    expect(describeTag(MANAGEMENT_TAG - 1)).toMatch(/^unknown collective tag/);
    expect(describeTag(MANAGEMENT_TAG + 8)).toMatch(/^unknown tag/);
    expect(describeTag(COLLECTIVE_TAG + 2 ** 20)).toBe(`unknown collective tag 0x${(COLLECTIVE_TAG + 2 ** 20).toString(16)}`);
    expect(tagRangeOf(17)).toBeUndefined();
    expect(tagRangeOf(at(0x301, 7))?.name).toBe('v-plan');
  });

  it("the simulator's deadlock report describes a collective's pending tag after the raw number", async () => {
    const e = await runSim(2, (comm) => (comm.rank === 0 ? bcast(comm, new Uint8Array(4), 1) : Promise.resolve()), {
      model: hierarchicalModel({ nodeOf: [0, 0], intra: { alpha: 1, beta: 1 }, inter: { alpha: 1, beta: 1 } }),
    }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(DeadlockError);
    expect((e as Error).message).toContain(`rank 0: recv from 1 tag ${BASIC_TAG.bcast} (basic collectives: bcast (call slot 0))`);
  });
});

describe('every tag a collective sends is in the table', () => {
  it('gatherv/scatterv (every algorithm, once and persistent), allgather(v), the building blocks, hierarchical, intergroup', async () => {
    const p = 7;
    const nodeOf = [0, 0, 0, 1, 1, 2, 2];
    const model = hierarchicalModel({ nodeOf, intra: { alpha: 1, beta: 1 }, inter: { alpha: 10, beta: 2 }, gamma: 0 });
    const counts = Array.from({ length: p }, (_, i) => (i % 2 === 0 ? 3 : 1)); // two sizes: the two-block tree takes them
    const total = counts.reduce((a, b) => a + b, 0);
    const vAlgorithms: VAlgorithm[] = [
      ...new Set([...portableVariants<GathervVariant | ScattervVariant>([...GATHERV_VARIANTS, ...SCATTERV_VARIANTS]).map((v) => v.name), 'auto' as const]),
    ];
    const res = await runSim(
      p,
      async (comm) => {
        const me = comm.rank;
        for (const algorithm of vAlgorithms) {
          const root = vAlgorithms.indexOf(algorithm) % p;
          const send = new Uint8Array(counts[me]);
          await gatherv(comm, { root, send, recv: me === root ? new Uint8Array(total) : undefined, counts }, { algorithm });
          await scatterv(comm, { root, recv: new Uint8Array(counts[me]), send: me === root ? new Uint8Array(total) : undefined, counts }, { algorithm });
        }
        const plan = await gathervInit(comm, { root: 1, send: new Uint8Array(counts[me]), recv: me === 1 ? new Uint8Array(total) : undefined, counts }, { algorithm: 'adaptive' });
        await plan.start();
        await plan.start();
        for (const algorithm of ALLGATHERV_ALGORITHMS) {
          await allgatherv(comm, { send: new Uint8Array(counts[me]), recv: new Uint8Array(total), counts }, { algorithm });
        }
        for (const algorithm of ALLGATHER_ALGORITHMS) await allgather(comm, { send: new Uint8Array(3), recv: new Uint8Array(3 * p) }, { algorithm });
        await barrier(comm);
        await bcast(comm, new Uint8Array(10), 2);
        await allreduce(comm, { send: Float64Array.of(me), recv: new Float64Array(1), op: 'sum' });
        await reduce(comm, { send: Float64Array.of(me), recv: me === 0 ? new Float64Array(1) : undefined, root: 0, op: 'max' });
        await exscan(comm, { send: Float64Array.of(me), recv: new Float64Array(1), op: 'sum' });
        await gather(comm, { send: new Uint8Array(2), recv: me === 3 ? new Uint8Array(2 * p) : undefined, root: 3 });
        await scatter(comm, { recv: new Uint8Array(2), send: me === 3 ? new Uint8Array(2 * p) : undefined, root: 3 });
        await basicAllgather(comm, { send: new Uint8Array(2), recv: new Uint8Array(2 * p) });
        for (const variant of HIERARCHICAL_VARIANT_NAMES) {
          await hierarchicalGather(comm, { send: new Uint8Array(2), recv: me === 4 ? new Uint8Array(2 * p) : undefined, root: 4 }, { variant });
          await hierarchicalGatherv(comm, { send: new Uint8Array(counts[me]), recv: me === 0 ? new Uint8Array(total) : undefined, counts, root: 0 }, { variant });
        }
        const color = me < 3 ? 0 : 1;
        const inter = await splitIntercomm(comm, color);
        const remoteCounts = Array.from({ length: inter.remoteSize }, (_, i) => i + 1);
        for (const algorithm of portableAlgorithms(INTER_ALLGATHER_ALGORITHMS)) {
          await interAllgather(inter, { send: new Uint8Array(color + 2), recv: new Uint8Array((3 - color) * inter.remoteSize) }, { algorithm });
          const recv = new Uint8Array(remoteCounts.reduce((a, b) => a + b, 0));
          await interAllgatherv(inter, { send: new Uint8Array(inter.rank + 1), recv, counts: remoteCounts }, { algorithm });
        }
      },
      { model, trace: true },
    );
    const tags = new Set((res.trace?.messages ?? []).map((m) => m.tag).filter((t) => t >= COLLECTIVE_TAG));
    expect(tags.size).toBeGreaterThan(50);
    const outside = [...tags].filter((t) => /unknown/.test(describeTag(t))).map((t) => `${t}: ${describeTag(t)}`);
    expect(outside).toEqual([]);
    // every range of the table was exercised, in several call slots, own and derived
    expect(new Set([...tags].map((t) => tagRangeOf(t)?.name))).toEqual(new Set(ROWS.map((r) => r.name)));
    const slots = [...tags].map((t) => callSlotOfTag(t) ?? -1);
    expect(Math.max(...slots)).toBeGreaterThanOrEqual(DERIVED_FIRST);
    expect(new Set(slots.filter((s) => s >= 0 && s < DERIVED_FIRST)).size).toBeGreaterThan(20);
  });
});
