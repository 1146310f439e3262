/**
 * THE tag table of vcoll's collectives (like Open MPI's coll_tags.h): every tag a collective or
 * communicator management sends, as ranges of offsets from COLLECTIVE_TAG (2³⁰). Every tag
 * constant of src/collectives (BASIC_TAG, ADAPTIVE_TAG_FIRST, V_TAGS, ALLGATHER_TAGS,
 * INTER_TAGS, HIER_TAG) is derived from it, and `describeTag` decodes any tag with it.
 *
 * Scheme (offsets from COLLECTIVE_TAG; user tags are 0 … TAG_UB = COLLECTIVE_TAG − 1):
 *
 *   0x100 … 0x1ff  basic          building blocks (barrier, bcast, reduce, …): one tag each
 *   0x200 … 0x2ff  adaptive       adaptive gatherv/scatterv: plan s uses 0x200 + 4·(s mod 64) + kind
 *   0x300 … 0x37f  v-plan         gatherv/scatterv planning: binomial counts, tree schedules
 *   0x380 … 0x3ff  v-data         gatherv/scatterv data: plan s uses 0x380 + (s mod 128)
 *   0x400 … 0x41f  allgather      intragroup allgather(v): one tag per algorithm + handshake
 *   0x420 … 0x43f  inter          intergroup allgather(v)
 *   0x460 … 0x46f  hierarchical   hierarchical gather(v): node level and bridge level
 *   2²⁰−16 … 2²⁰−1 management     split, intercommunicator creation and merge (comm/agree.ts,
 *                                 comm/intercomm.ts); never shifted by a call slot
 *
 * Call slots (collectives/call-scope.ts): every collective call on a communicator runs in a call
 * slot, and each collective tag t (offset < CALL_TAG_STRIDE = 0x800) travels as
 * t + slot·CALL_TAG_STRIDE, so calls in flight together never share a tag. Slots 0 … 255
 * (OWN_SLOTS) are the calls made on a communicator itself (call number mod 256); slots
 * 256 … 510 are derived-communicator slots: a communicator derived inside a call (the node
 * communicator of the hierarchical gather, an intercommunicator's local group) is used in slot
 * DERIVED_FIRST + (the call's slot mod 255). The 2²⁰ − 2048 … 2²⁰ − 1 stretch (slot 511) is not a
 * call slot: its top 16 tags are communicator management's. So every slotted range must lie
 * below CALL_TAG_STRIDE, and the whole reserved space is COLLECTIVE_TAG … COLLECTIVE_TAG + 2²⁰ − 1.
 *
 * This file is in comm/ (not collectives/) because COLLECTIVE_TAG and communicator management
 * live here and the transports (a lower layer than the collectives) describe tags with it too.
 */
import { ANY_TAG, COLLECTIVE_TAG } from './communicator.js';

/** Tags per call slot: the kind tags of every collective lie in COLLECTIVE_TAG … + CALL_TAG_STRIDE − 1. */
export const CALL_TAG_STRIDE = 0x800;
/** Slots for calls made on a communicator itself (call number mod OWN_SLOTS). */
export const OWN_SLOTS = 256;
/** Derived slots: DERIVED_FIRST + (the parent call's slot mod DERIVED_SLOTS). */
export const DERIVED_FIRST = OWN_SLOTS;
export const DERIVED_SLOTS = 255; // slot 511 holds communicator management's 16 tags (comm/agree.ts)

/** The kind tag (slot 0) of a collective tag as it travelled in any slot; other tags unchanged. */
export function unslottedTag(tag: number): number {
  const off = tag - COLLECTIVE_TAG;
  if (off < 0 || off >= (DERIVED_FIRST + DERIVED_SLOTS) * CALL_TAG_STRIDE) return tag;
  return COLLECTIVE_TAG + (off % CALL_TAG_STRIDE);
}

/** The call slot a collective tag travelled in (undefined for tags outside the slots). */
export function callSlotOfTag(tag: number): number | undefined {
  const off = tag - COLLECTIVE_TAG;
  if (off < 0 || off >= (DERIVED_FIRST + DERIVED_SLOTS) * CALL_TAG_STRIDE) return undefined;
  return Math.floor(off / CALL_TAG_STRIDE);
}

/** One row of the table: a range of tags, as offsets from COLLECTIVE_TAG. */
export interface TagRange {
  readonly name: string;
  /** First and last offset (inclusive) from COLLECTIVE_TAG. */
  readonly first: number;
  readonly last: number;
  /** How describeTag names the range. */
  readonly label: string;
  /** The operations and files that use it. */
  readonly usedBy: string;
  /** false: travels unshifted, never in a call slot (communicator management). */
  readonly slotted: boolean;
  /** Named tags: offset from COLLECTIVE_TAG. */
  readonly tags?: Readonly<Record<string, number>>;
  /**
   * Per-plan sub-slots: the range is a sequence of blocks of `stride` tags, plan n (a plan
   * sequence number mod the number of blocks) uses block n, and `kinds` names the tags inside a
   * block (offset within the block).
   */
  readonly plan?: { readonly stride: number; readonly kinds: Readonly<Record<string, number>> };
  /** What a named tag or plan kind is for (describeTag's words; the name when absent). */
  readonly about?: Readonly<Record<string, string>>;
}

/** The table: every tag range of vcoll's collectives and communicator management. */
export const TAG_TABLE = [
  {
    name: 'basic',
    first: 0x100,
    last: 0x1ff,
    label: 'basic collectives',
    usedBy: 'the building blocks, one tag each (collectives/basic/)',
    slotted: true,
    tags: { barrier: 0x100, bcast: 0x101, reduce: 0x102, allreduce: 0x103, exscan: 0x104, gather: 0x105, scatter: 0x106, allgather: 0x107 },
  },
  {
    name: 'adaptive',
    first: 0x200,
    last: 0x2ff,
    label: 'adaptive gatherv/scatterv',
    usedBy: "the adaptive algorithm's plans, 64 blocks of 4 (collectives/adaptive/tags.ts)",
    slotted: true,
    plan: { stride: 4, kinds: { exchange: 0, notify: 1, data: 2, verdict: 3 } },
    about: { exchange: 'exchange between fixed roots', notify: 'fixed root → gather root notification', data: 'data' },
  },
  {
    name: 'v-plan',
    first: 0x300,
    last: 0x37f,
    label: 'gatherv/scatterv planning',
    usedBy: 'binomial counts and tree schedules of gatherv/scatterv (collectives/tree-exec.ts, V_TAGS)',
    slotted: true,
    tags: { counts: 0x301, schedule: 0x302, scheduleChildren: 0x303 },
    about: { counts: 'binomial counts', schedule: 'tree schedule', scheduleChildren: 'tree schedule children' },
  },
  {
    name: 'v-data',
    first: 0x380,
    last: 0x3ff,
    label: 'gatherv/scatterv data',
    usedBy: 'data of the linear and tree gatherv/scatterv, 128 plans (node-schedule.ts nextDataTag, V_TAGS.dataFirst)',
    slotted: true,
    plan: { stride: 1, kinds: { data: 0 } },
  },
  {
    name: 'allgather',
    first: 0x400,
    last: 0x41f,
    label: 'allgather(v)',
    usedBy: 'intragroup allgather/allgatherv, one tag per algorithm + the handshake (collectives/allgather/, ALLGATHER_TAGS)',
    slotted: true,
    tags: { ring: 0x400, recursiveDoubling: 0x401, bruck: 0x402, pipelinedRing: 0x403, handshake: 0x404 },
    about: { ring: 'ring', recursiveDoubling: 'recursive doubling', bruck: 'Bruck', pipelinedRing: 'pipelined ring', handshake: 'handshake' },
  },
  {
    name: 'inter',
    first: 0x420,
    last: 0x43f,
    label: 'intergroup allgather(v)',
    usedBy: 'interAllgather/interAllgatherv (collectives/inter/, INTER_TAGS)',
    slotted: true,
    tags: { rootExchange: 0x421, rootBcast: 0x422, exchange: 0x423, sizes: 0x424 },
    about: { rootExchange: 'exchange between the group roots', rootBcast: 'root broadcast (reserved)', exchange: 'segment exchange', sizes: 'block sizes' },
  },
  {
    name: 'hierarchical',
    first: 0x460,
    last: 0x46f,
    label: 'hierarchical gather(v)',
    usedBy: 'hierarchicalGather/hierarchicalGatherv, node and bridge level (collectives/hierarchical/, HIER_TAG)',
    slotted: true,
    tags: { local: 0x460, bridge: 0x461 },
    about: { local: 'node level', bridge: 'bridge level' },
  },
  {
    name: 'management',
    first: 2 ** 20 - 16,
    last: 2 ** 20 - 1,
    label: 'communicator management',
    usedBy: 'split, intercommunicator creation and merge (comm/agree.ts MANAGEMENT_TAG, comm/intercomm.ts)',
    slotted: false,
    tags: {
      split: 2 ** 20 - 16,
      bcast: 2 ** 20 - 15,
      leader: 2 ** 20 - 14,
      interGather: 2 ** 20 - 13,
      interBcast: 2 ** 20 - 12,
      mergeGather: 2 ** 20 - 11,
      mergeLeader: 2 ** 20 - 10,
      mergeBcast: 2 ** 20 - 9,
    },
  },
] as const satisfies readonly TagRange[];

export type TagRangeName = (typeof TAG_TABLE)[number]['name'];
type RowOf<N extends TagRangeName> = Extract<(typeof TAG_TABLE)[number], { name: N }>;

/** The row of range `name`. */
export function tagRange<N extends TagRangeName>(name: N): RowOf<N> {
  return TAG_TABLE.find((r) => r.name === name) as RowOf<N>;
}

/** The first tag of range `name` (COLLECTIVE_TAG + first). */
export function firstTag(name: TagRangeName): number {
  return COLLECTIVE_TAG + tagRange(name).first;
}

/** The last tag of range `name` (COLLECTIVE_TAG + last). */
export function lastTag(name: TagRangeName): number {
  return COLLECTIVE_TAG + tagRange(name).last;
}

type NamedRange = Extract<(typeof TAG_TABLE)[number], { tags: unknown }>['name'];

/** The named tags of range `name`, as tags (COLLECTIVE_TAG + offset). */
export function namedTags<N extends NamedRange>(name: N): { readonly [K in keyof RowOf<N>['tags']]: number } {
  const row = tagRange(name) as TagRange;
  const out: Record<string, number> = {};
  for (const [k, off] of Object.entries(row.tags ?? {})) out[k] = COLLECTIVE_TAG + off;
  return Object.freeze(out) as { readonly [K in keyof RowOf<N>['tags']]: number };
}

/** The tags of the building-block collectives (collectives/basic/): one per collective. */
export const BASIC_TAG_FIRST = firstTag('basic');
export const BASIC_TAG_LAST = lastTag('basic');
export const BASIC_TAG = namedTags('basic');

/** The row a tag (as it travelled, in any call slot) lies in; undefined for user tags and tags outside every range. */
export function tagRangeOf(tag: number): TagRange | undefined {
  if (!Number.isInteger(tag) || tag < COLLECTIVE_TAG) return undefined;
  const slotted = callSlotOfTag(tag) !== undefined;
  const off = unslottedTag(tag) - COLLECTIVE_TAG;
  const rows: readonly TagRange[] = TAG_TABLE;
  return rows.find((r) => r.slotted === slotted && off >= r.first && off <= r.last);
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

function slotSuffix(slot: number): string {
  if (slot < DERIVED_FIRST) return ` (call slot ${slot})`;
  const k = slot - DERIVED_FIRST;
  return ` (derived-communicator slot ${slot}, of call slot ${k}${k === 0 ? ` or ${DERIVED_SLOTS}` : ''})`;
}

function describeOffset(row: TagRange, off: number): string {
  const word = (name: string): string => row.about?.[name] ?? name;
  for (const [name, o] of Object.entries(row.tags ?? {})) if (o === off) return `${row.label}: ${word(name)}`;
  if (row.plan !== undefined) {
    const rel = off - row.first;
    const n = Math.floor(rel / row.plan.stride);
    const kinds = Object.entries(row.plan.kinds);
    const kind = kinds.find(([, o]) => o === rel % row.plan!.stride);
    if (kind !== undefined) return kinds.length === 1 ? `${row.label}, plan ${n}` : `${row.label}: plan ${n}, ${word(kind[0])}`;
  }
  return `unknown tag ${hex(off)} in the range of ${row.label} (${row.name})`;
}

/**
 * A human-readable decoding of `tag`, e.g. "adaptive gatherv/scatterv: plan 3, exchange
 * between fixed roots (call slot 2)", "gatherv/scatterv data, plan 5 (call slot 0)",
 * "user tag 17", "any tag"; a tag the table does not name says "unknown" (e.g. "unknown
 * collective tag 0x40000450").
 */
export function describeTag(tag: number): string {
  if (tag === ANY_TAG) return 'any tag';
  if (!Number.isInteger(tag) || tag < 0) return `invalid tag ${tag}`;
  if (tag < COLLECTIVE_TAG) return `user tag ${tag}`;
  const slot = callSlotOfTag(tag);
  const off = unslottedTag(tag) - COLLECTIVE_TAG;
  const row = tagRangeOf(tag);
  if (row === undefined) return `unknown collective tag ${hex(tag)}${slot === undefined ? '' : slotSuffix(slot)}`;
  return describeOffset(row, off) + (slot === undefined ? '' : slotSuffix(slot));
}

/** The raw tag, and for a collective's tag what it is, e.g. "1073742081 (basic collectives: bcast (call slot 0))": how the transports print a pending operation's tag. */
export function tagText(tag: number): string {
  return tag >= COLLECTIVE_TAG ? `${tag} (${describeTag(tag)})` : String(tag);
}
