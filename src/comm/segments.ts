/**
 * Vectored message buffers: a message is either one contiguous `Uint8Array` or a list of
 * segments taken in order, back to back (like an MPI indexed datatype). A vectored send
 * sends the segments' bytes as one message; a vectored receive fills the segments in order.
 * The root of gatherv/scatterv uses them to receive into (send from) the displacements of a
 * run of blocks that are not contiguous in its buffer, with no staging copy.
 *
 * Cost: O(segments) per operation besides the bytes themselves.
 */

/** One contiguous view, or segments filled / sent in order (what transports handle). */
export type MessageBuffer = Uint8Array | readonly Uint8Array[];

/**
 * What communicators accept: any typed array or DataView (its bytes), or segments of them.
 * `toBytes` turns it into a MessageBuffer without copying data.
 */
export type MessageData = ArrayBufferView | readonly ArrayBufferView[];

/** The byte view of one view (no copy). */
function viewBytes(v: ArrayBufferView): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/**
 * The bytes of `data` as a MessageBuffer: itself when it already is one (no allocation),
 * else byte views of the same memory. Anything that is not MessageData is returned as it is,
 * for the transport's validation to reject.
 */
export function toBytes(data: MessageData): MessageBuffer {
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return viewBytes(data);
  if (!Array.isArray(data)) return data as unknown as MessageBuffer;
  let plain = true;
  for (const s of data) if (!(s instanceof Uint8Array)) plain = false;
  if (plain) return data as readonly Uint8Array[];
  return (data as readonly unknown[]).map((s) => (ArrayBuffer.isView(s) ? viewBytes(s) : s)) as Uint8Array[];
}

/** Whether `x` is a MessageBuffer (a Uint8Array, or an array of Uint8Arrays). */
export function isMessageBuffer(x: unknown): x is MessageBuffer {
  if (x instanceof Uint8Array) return true;
  if (!Array.isArray(x)) return false;
  for (const s of x) if (!(s instanceof Uint8Array)) return false;
  return true;
}

/** Total bytes of a buffer. */
export function byteLength(buf: MessageData): number {
  if (ArrayBuffer.isView(buf)) return buf.byteLength;
  let n = 0;
  for (let i = 0; i < buf.length; i++) n += buf[i].byteLength;
  return n;
}

/**
 * Walks the first `n` bytes of `dst` and `src` (both contiguous or vectored; `n` at most the
 * byte length of each) as pairs of equally long pieces, in order: `piece(d, s)` for each.
 */
export function forEachPiece(dst: MessageBuffer, src: MessageBuffer, n: number, piece: (d: Uint8Array, s: Uint8Array) => void): void {
  const ds = dst instanceof Uint8Array ? [dst] : dst;
  const ss = src instanceof Uint8Array ? [src] : src;
  let di = 0;
  let doff = 0;
  let si = 0;
  let soff = 0;
  let left = n;
  while (left > 0) {
    const d = ds[di];
    const s = ss[si];
    const k = Math.min(left, d.length - doff, s.length - soff);
    if (k > 0) {
      piece(d.subarray(doff, doff + k), s.subarray(soff, soff + k));
      doff += k;
      soff += k;
      left -= k;
    }
    if (doff === d.length) {
      di++;
      doff = 0;
    }
    if (soff === s.length) {
      si++;
      soff = 0;
    }
  }
}

const setPiece = (d: Uint8Array, s: Uint8Array): void => d.set(s);

/**
 * Copies the first `n` bytes of `src` into `dst` (both contiguous or vectored; `n` at most
 * the byte length of each).
 */
export function copyBytes(dst: MessageBuffer, src: MessageBuffer, n: number): void {
  if (dst instanceof Uint8Array && src instanceof Uint8Array) {
    if (n === src.length) dst.set(src);
    else dst.set(src.subarray(0, n));
    return;
  }
  if (dst instanceof Uint8Array && !(src instanceof Uint8Array)) {
    // segments into one view (a vectored message received whole): each segment at its offset,
    // no views made but of a last segment cut short — a simulation copies one such message per rank
    let off = 0;
    for (let i = 0; i < src.length && off < n; i++) {
      const s = src[i];
      const k = Math.min(s.length, n - off);
      dst.set(k === s.length ? s : s.subarray(0, k), off);
      off += k;
    }
    return;
  }
  forEachPiece(dst, src, n, setPiece);
}

/** The buffer as one contiguous view: itself, or a new array holding the segments back to back. */
export function contiguous(buf: MessageBuffer): Uint8Array {
  if (buf instanceof Uint8Array) return buf;
  if (buf.length === 1) return buf[0];
  const out = new Uint8Array(byteLength(buf));
  let off = 0;
  for (const s of buf) {
    out.set(s, off);
    off += s.length;
  }
  return out;
}
