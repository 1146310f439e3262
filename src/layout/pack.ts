/**
 * Pack, unpack and direct placement through a layout (TraffRougier14 §4 MPI_Pack/MPI_Unpack, §6
 * element-count semantics):
 * - `pack(layout, src, first, count, dst)`: elements first … first + count − 1 of the
 *   repetition of `layout` over `src` → the start of the contiguous `dst`;
 * - `unpack(layout, dst, first, count, src)`: the inverse: contiguous `src` → the elements'
 *   places in `dst`; the runs written must not overlap;
 * - `views(layout, buf, first, count)`: the elements' places in `buf` as byte views in
 *   element order (adjacent runs merged, empty ones dropped): one view, or an array of views
 *   that a vectored send reads or a vectored receive fills segment by segment — the message
 *   goes straight through the layout, nothing staged (TraffRougier14 §6, Fig. 6).
 * Offsets and counts are in elements of `unitBytes` bytes (default: the layout-side buffer's
 * BYTES_PER_ELEMENT, 1 for a DataView). Buffers may be any typed array or DataView.
 * Cost: O(runs + log blocks) besides the bytes; unpack and write views also check overlap
 * (O(runs), O(runs log runs) if the runs do not ascend in memory).
 */
import { InvalidArgumentError } from '../errors.js';
import { checkRange, forEachRun, positiveInt, requiredLength, requireLayout, safe, type Layout } from './layout.js';
import { requireDisjoint, runs } from './runs.js';

/** One contiguous view, or views filled / sent in order (the shape of comm's MessageBuffer). */
export type LayoutViews = Uint8Array | Uint8Array[];

/** Whether views are for reading (a send: overlapping runs allowed) or writing (a receive). */
export type ViewAccess = 'read' | 'write';

function bytesOf(buf: unknown, field: string): Uint8Array {
  if (!ArrayBuffer.isView(buf)) throw new InvalidArgumentError(field, 'must be a typed array or DataView');
  return buf instanceof Uint8Array ? buf : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function unitOf(buf: ArrayBufferView, unitBytes: number | undefined): number {
  if (unitBytes !== undefined) return positiveInt(unitBytes, 'unitBytes');
  const per = (buf as { BYTES_PER_ELEMENT?: unknown }).BYTES_PER_ELEMENT;
  return typeof per === 'number' ? per : 1;
}

/** Runs this short (bytes) are copied by a loop: cheaper than a subarray and a set. */
const SHORT_RUN = 64;

/** Copies n bytes from s at sAt to d at dAt. */
function copyRun(d: Uint8Array, dAt: number, s: Uint8Array, sAt: number, n: number): void {
  if (n <= SHORT_RUN) {
    for (let k = 0; k < n; k++) d[dAt + k] = s[sAt + k];
  } else {
    d.set(s.subarray(sAt, sAt + n), dAt);
  }
}

function requireBytes(bytes: Uint8Array, need: number, field: string): void {
  if (bytes.length < need) throw new InvalidArgumentError(field, `holds ${bytes.length} bytes, needs ${need}`);
}

/**
 * Copies `count` elements of `layout` over `src`, starting at element `first`, to the start of
 * `dst`, back to back. Returns the bytes written (count·unitBytes).
 */
export function pack(
  layout: Layout,
  src: ArrayBufferView,
  first: number,
  count: number,
  dst: ArrayBufferView,
  unitBytes?: number,
): number {
  requireLayout(layout);
  const s = bytesOf(src, 'src');
  const d = bytesOf(dst, 'dst');
  const u = unitOf(src, unitBytes);
  checkRange(layout, first, count);
  const total = safe(count * u, 'count');
  requireBytes(d, total, 'dst');
  requireBytes(s, safe(requiredLength(layout, first, count) * u, 'count'), 'src');
  let at = 0;
  let pendAt = -1;
  let pendLen = 0;
  const flush = (): void => {
    if (pendLen > 0) copyRun(d, at, s, pendAt * u, pendLen * u);
    at += pendLen * u;
  };
  forEachRun(layout, first, count, (o, l) => {
    if (o === pendAt + pendLen && pendAt >= 0) {
      pendLen += l;
      return;
    }
    flush();
    pendAt = o;
    pendLen = l;
  });
  flush();
  return total;
}

/**
 * Copies `count·unitBytes` bytes from the start of the contiguous `src` to elements first …
 * first + count − 1 of `layout` over `dst`; bytes of `dst` outside those elements are left
 * alone. The elements must not overlap. Returns the bytes read.
 */
export function unpack(
  layout: Layout,
  dst: ArrayBufferView,
  first: number,
  count: number,
  src: ArrayBufferView,
  unitBytes?: number,
): number {
  requireLayout(layout);
  const d = bytesOf(dst, 'dst');
  const s = bytesOf(src, 'src');
  const u = unitOf(dst, unitBytes);
  checkRange(layout, first, count);
  const total = safe(count * u, 'count');
  requireBytes(s, total, 'src');
  const r = runs(layout, first, count);
  requireBytes(d, safe(r.end * u, 'count'), 'dst');
  requireDisjoint(r);
  let at = 0;
  for (let t = 0; t < r.offsets.length; t++) {
    const n = r.lengths[t] * u;
    copyRun(d, r.offsets[t] * u, s, at, n);
    at += n;
  }
  return total;
}

/**
 * The places of elements first … first + count − 1 of `layout` in `buf`, as byte views in
 * element order: an empty view for no elements, one view for one run, else an array. Pass the
 * result to send/recv (isend/irecv) as the message buffer. `access` 'write' (default: a
 * receive) rejects overlapping runs; 'read' (a send) allows them.
 */
export function views(
  layout: Layout,
  buf: ArrayBufferView,
  first: number,
  count: number,
  unitBytes?: number,
  access: ViewAccess = 'write',
): LayoutViews {
  requireLayout(layout);
  const b = bytesOf(buf, 'buf');
  const u = unitOf(buf, unitBytes);
  if (access !== 'read' && access !== 'write') throw new InvalidArgumentError('access', `must be 'read' or 'write', got ${String(access)}`);
  checkRange(layout, first, count);
  const r = runs(layout, first, count);
  requireBytes(b, safe(r.end * u, 'count'), 'buf');
  if (access === 'write') requireDisjoint(r);
  const n = r.offsets.length;
  if (n === 0) return b.subarray(0, 0);
  if (n === 1) return b.subarray(r.offsets[0] * u, (r.offsets[0] + r.lengths[0]) * u);
  const out = new Array<Uint8Array>(n);
  for (let t = 0; t < n; t++) out[t] = b.subarray(r.offsets[t] * u, (r.offsets[t] + r.lengths[t]) * u);
  return out;
}
