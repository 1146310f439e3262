/**
 * Pictures of gather/scatter trees: a text outline for terminals and a standalone SVG in
 * the style of Traff18 Fig. 1 — ranks in a row in rank order labelled with their block
 * sizes m_i, thick arrows for the tree edges that carry data, dotted arrows for zero-size
 * edges (no message), each edge placed at the time its transfer happens.
 *
 * `treeSchedule` says when every transfer and local copy happens: the timeline of the tree
 * (`timeline.ts`, the recurrence `evaluate` runs, so the completion times agree exactly)
 * under a cost model or, without one, in unit rounds (every edge one round, one port,
 * copies free). Gather times are absolute from 0; a scatter starts at the root at time 0
 * and a node starts when its segment has arrived. This file only renders it.
 *
 * Cost: O(p·k) time for the schedule (k ports), O(p) space; the text is O(p) lines of
 * bounded length (indentation is capped, so chains of thousands of ranks are fine), the
 * SVG O(p) elements. Everything is iterative (postOrder), no recursion.
 */
import { InvalidArgumentError } from '../errors.js';
import { requireModelFits, type CostModel } from '../model/cost-model.js';
import { validateSizes } from '../model/validate.js';
import { rankOperations, timeline, type Operation, type Timeline, type TimedCosts } from './timeline.js';
import { postOrder, type Tree } from './tree.js';

export interface DrawOptions {
  /** Cost model; without one, the schedule is in unit rounds (each edge one round). */
  readonly model?: CostModel;
  readonly operation?: Operation;
}

export interface SvgOptions extends DrawOptions {
  /** Title line of the picture (escaped); a default naming the tree is used when omitted. */
  readonly title?: string;
}

/** When every operation of a gather/scatter tree happens (see `Timeline`). */
export interface TreeSchedule extends Timeline {
  /** 'time' under a cost model, 'round' in unit rounds (no model). */
  readonly unit: 'time' | 'round';
}

/** Unit rounds: every edge one round (zero-size edges included), one port, copies free. */
const UNIT_ROUNDS: TimedCosts = { ports: 1, copyAll: false, comm: () => 1, copy: () => 0 };

function checkTree(tree: Tree): void {
  if (tree === null || typeof tree !== 'object') throw new InvalidArgumentError('tree', 'must be a Tree');
  const { p, root, children, parent, copyAt } = tree;
  if (!Number.isInteger(p) || p < 1) throw new InvalidArgumentError('tree.p', `must be an integer >= 1, got ${String(p)}`);
  if (!Number.isInteger(root) || root < 0 || root >= p) throw new InvalidArgumentError('tree.root', `must be in [0, ${p - 1}], got ${String(root)}`);
  if (!Array.isArray(children) || children.length !== p) throw new InvalidArgumentError('tree.children', `must have ${p} entries`);
  if (parent === null || typeof parent !== 'object' || parent.length !== p) throw new InvalidArgumentError('tree.parent', `must have ${p} entries`);
  if (copyAt === null || typeof copyAt !== 'object' || copyAt.length !== p) throw new InvalidArgumentError('tree.copyAt', `must have ${p} entries`);
}

function readOptions(opts: DrawOptions | undefined, p: number): { model: CostModel | undefined; operation: Operation } {
  if (opts === undefined || opts === null) return { model: undefined, operation: 'gather' };
  if (typeof opts !== 'object') throw new InvalidArgumentError('opts', 'must be an object');
  const operation = opts.operation ?? 'gather';
  if (operation !== 'gather' && operation !== 'scatter') {
    throw new InvalidArgumentError('operation', `must be 'gather' or 'scatter', got ${String(operation)}`);
  }
  const model = opts.model;
  if (model !== undefined) {
    if (model === null || typeof model !== 'object' || typeof model.comm !== 'function' || typeof model.copy !== 'function') {
      throw new InvalidArgumentError('model', 'must be a CostModel');
    }
    requireModelFits(model, p);
  }
  return { model, operation };
}

/**
 * The schedule of a tree: when each transfer and each local copy happens. With a model,
 * durations are model.comm / model.copy with the model's ports; without one, every edge
 * takes one round (zero-size edges included, as in Traff18 Fig. 1) on one port.
 */
export function treeSchedule(tree: Tree, sizes: ArrayLike<number>, opts?: DrawOptions): TreeSchedule {
  checkTree(tree);
  const m = validateSizes(sizes);
  const p = tree.p;
  if (m.length !== p) throw new InvalidArgumentError('sizes', `has ${m.length} entries, the tree spans ${p} ranks`);
  const { model, operation } = readOptions(opts, p);
  return { ...timeline(tree, m, model ?? UNIT_ROUNDS, operation), unit: model ? 'time' : 'round' };
}

/** Depth of every rank and the height of the tree, iteratively. */
function depthInfo(tree: Tree, order: Int32Array): { depth: Int32Array; height: number; maxDegree: number } {
  const depth = new Int32Array(tree.p);
  let height = 0;
  let maxDegree = 0;
  for (let i = order.length - 1; i >= 0; i--) {
    const v = order[i];
    const kids = tree.children[v];
    if (kids.length > maxDegree) maxDegree = kids.length;
    for (const c of kids) {
      depth[c] = depth[v] + 1;
      if (depth[c] > height) height = depth[c];
    }
  }
  return { depth, height, maxDegree };
}

/** Short number: integers as they are, others with at most 3 decimals. */
function num(x: number): string {
  if (Number.isNaN(x)) return '-';
  if (Number.isInteger(x)) return String(x);
  const r = Math.round(x * 1000) / 1000;
  return String(r);
}

function modelLabel(model: CostModel | undefined): string {
  if (!model) return 'unit rounds (no cost model)';
  const parts: string[] = [];
  if (model.linear) parts.push(`${model.kind} alpha=${num(model.linear.alpha)} beta=${num(model.linear.beta)} gamma=${num(model.linear.gamma)}`);
  else parts.push(model.kind);
  if (model.ports > 1) parts.push(`${model.ports} ports`);
  if (model.copyAll) parts.push('all copy');
  return parts.join(', ');
}

/** Indentation is capped so that deep chains stay readable; deeper lines show their depth. */
const MAX_INDENT = 32;

/**
 * A text outline of the tree for terminals: a summary line (operation, p, root, depth,
 * max degree, messages, total time or rounds, model), then one line per rank in preorder
 * from the root, children in receive order, indented by depth:
 *   `<rank>  m=<m_v>  S=<S(v)>  C=<C(v)>  ops: recv a, copy, recv b  <edge to the parent>`.
 * Gather lists a node's operations in the order it performs them (receives and its local
 * copy); scatter in its order too (the reverse: sends, then copy). The edge part shows the
 * position of the transfer among the parent's operations and its time interval, or
 * "no message" for a zero-size subtree.
 */
export function drawTreeText(tree: Tree, sizes: ArrayLike<number>, opts?: DrawOptions): string {
  const sched = treeSchedule(tree, sizes, opts);
  const { model, operation } = readOptions(opts, tree.p);
  const m = validateSizes(sizes);
  const order = postOrder(tree);
  const { depth, height, maxDegree } = depthInfo(tree, order);
  const S = sched.subtreeSize;
  let messages = 0;
  let zero = 0;
  for (let v = 0; v < tree.p; v++) {
    if (v === tree.root) continue;
    if (S[v] > 0) messages++;
    else zero++;
  }
  const total = sched.unit === 'time' ? `time=${String(sched.time)}` : `rounds=${String(sched.time)}`;
  const lines: string[] = [
    `${operation} tree: p=${tree.p} root=${tree.root} depth=${height} max degree=${maxDegree} ` +
      `messages=${messages}${zero > 0 ? ` zero-size edges=${zero}` : ''} ${total} [${modelLabel(model)}]`,
  ];
  const stack: number[] = [tree.root];
  while (stack.length > 0) {
    const v = stack.pop() as number;
    const d = depth[v];
    const indent = '  '.repeat(Math.min(d, MAX_INDENT)) + (d > MAX_INDENT ? `(depth ${d}) ` : '');
    let line = `${indent}${v}${v === tree.root ? ' (root)' : ''}  m=${num(m[v])}  S=${num(S[v])}`;
    if (sched.unit === 'time') line += `  C=${num(sched.completion[v])}`;
    const ops = rankOperations(tree, sched, v);
    if (ops.length > 0) line += `  ops: ${ops.map((o) => (o.kind === 'copy' ? 'copy' : `${o.kind} ${o.peer}`)).join(', ')}`;
    if (v !== tree.root) {
      const par = tree.parent[v];
      const nk = tree.children[par].length;
      const j = sched.childIndex[v];
      // Position among the parent's transfers in the order they happen.
      const pos = operation === 'gather' ? j + 1 : nk - j;
      const dir = operation === 'gather' ? `-> ${par}` : `<- ${par}`;
      const when = S[v] > 0 || sched.unit === 'round'
        ? `${sched.unit === 'round' ? 'round' : 't'}=[${num(sched.edgeStart[v])}, ${num(sched.edgeEnd[v])}]`
        : '';
      const what = S[v] > 0 ? '' : ' no message';
      line += `  ${dir} #${pos}/${nk}${what}${when ? ` ${when}` : ''}`;
    }
    lines.push(line);
    const kids = tree.children[v];
    for (let j = kids.length - 1; j >= 0; j--) stack.push(kids[j]);
  }
  return lines.join('\n') + '\n';
}

/** Escapes text for XML content and attribute values. */
export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => {
    switch (ch) {
      case '&': return '&amp;';
      case '<': return '&lt;';
      case '>': return '&gt;';
      case '"': return '&quot;';
      default: return '&#39;';
    }
  });
}

/** Coordinate with at most 2 decimals. */
function c2(x: number): string {
  return String(Math.round(x * 100) / 100);
}

/** Compact block size for narrow labels: 12345 -> 12.3k. */
function compact(x: number): string {
  const a = Math.abs(x);
  if (a < 10000) return num(x);
  const units: Array<[number, string]> = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [u, s] of units) {
    if (a >= u) {
      const v = x / u;
      return `${v >= 100 ? Math.round(v) : Math.round(v * 10) / 10}${s}`;
    }
  }
  return num(x);
}

/** Tick step 1, 2 or 5 times a power of ten giving at most ~`n` ticks over [0, max]. */
function tickStep(max: number, n: number, integral: boolean): number {
  const raw = max / n;
  const pow = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = pow;
  for (const f of [1, 2, 5, 10]) {
    step = f * pow;
    if (step >= raw) break;
  }
  return integral ? Math.max(1, Math.round(step)) : step;
}

const BLUE = '#1f5fbf';
const GREY = '#8a8a8a';
const COPY = '#e08a1e';
const ROOT = '#c62828';

/**
 * A standalone SVG picture of the tree in the style of Traff18 Fig. 1. Ranks stand along
 * the x-axis in rank order, labelled with rank and m_i (labels for p <= 64; larger trees
 * label every few ranks). Time grows upwards on the y-axis (model time, or rounds without
 * a model). Each edge is an arrow drawn from (sender, start of the transfer) to (receiver,
 * end of the transfer): child to parent for gather, parent to child for scatter; thick blue
 * for data-carrying edges (class "edge data"), dotted grey for zero-size edges with no
 * message (class "edge zero"). Busy intervals of each rank are narrow bars on its dotted
 * column (blue: communication, orange: local copy). The root is drawn in red.
 */
export function drawTreeSvg(tree: Tree, sizes: ArrayLike<number>, opts?: SvgOptions): string {
  const sched = treeSchedule(tree, sizes, opts);
  const { model, operation } = readOptions(opts, tree.p);
  const title = opts?.title;
  if (title !== undefined && typeof title !== 'string') throw new InvalidArgumentError('title', 'must be a string');
  const m = validateSizes(sizes);
  const p = tree.p;
  const root = tree.root;
  const S = sched.subtreeSize;
  const small = p <= 64;
  // Columns: wide enough for labels up to p = 64; larger trees squeeze into ~1536 px.
  const colW = p <= 32 ? 44 : small ? 34 : 1536 / p;
  const left = 72;
  const right = 24;
  const top = 78;
  const plotH = small ? 380 : 520;
  const bottom = small ? 56 : 40;
  const plotW = Math.max(colW * p, 360);
  const width = left + plotW + right;
  const height = top + plotH + bottom;
  const x0 = left + (plotW - colW * p) / 2;
  const xOf = (v: number): number => x0 + colW * (v + 0.5);
  const T = sched.time > 0 ? sched.time : 1;
  const yBase = top + plotH;
  const yOf = (t: number): number => yBase - (t / T) * plotH;
  const thick = small ? 2.6 : p <= 512 ? 1.4 : 0.8;
  const thin = small ? 1.2 : 0.6;
  const barW = Math.min(7, Math.max(1, colW * 0.3));
  const unitName = sched.unit === 'time' ? 'time' : 'round';

  const out: string[] = [];
  out.push('<?xml version="1.0" encoding="UTF-8"?>');
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${c2(width)}" height="${c2(height)}" ` +
      `viewBox="0 0 ${c2(width)} ${c2(height)}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
  );
  const heading = title ?? `${operation} tree, p=${p}, root=${root}`;
  out.push(`<title>${escapeXml(heading)}</title>`);
  out.push('<defs>');
  for (const [id, color] of [['vcoll-ah-data', BLUE], ['vcoll-ah-zero', GREY]] as const) {
    out.push(
      `<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="4" markerHeight="4" orient="auto">` +
        `<path d="M0,0 L10,5 L0,10 z" fill="${color}"/></marker>`,
    );
  }
  out.push('</defs>');
  out.push(`<rect x="0" y="0" width="${c2(width)}" height="${c2(height)}" fill="#ffffff"/>`);
  // Heading and legend.
  out.push(`<text class="title" x="${left}" y="22" font-size="15" font-weight="bold">${escapeXml(heading)}</text>`);
  const total = sched.unit === 'time' ? `completion time ${num(sched.time)}` : `${num(sched.time)} rounds`;
  out.push(
    `<text class="subtitle" x="${left}" y="40" font-size="11" fill="#444">${escapeXml(`${operation}, ${total}; ${modelLabel(model)}`)}</text>`,
  );
  const ly = 58;
  out.push('<g class="legend" font-size="10" fill="#333">');
  out.push(`<line x1="${left}" y1="${ly}" x2="${left + 26}" y2="${ly}" stroke="${BLUE}" stroke-width="2.6" marker-end="url(#vcoll-ah-data)"/>`);
  out.push(`<text x="${left + 32}" y="${ly + 3.5}">message</text>`);
  out.push(`<line x1="${left + 90}" y1="${ly}" x2="${left + 116}" y2="${ly}" stroke="${GREY}" stroke-width="1.2" stroke-dasharray="2,2" marker-end="url(#vcoll-ah-zero)"/>`);
  out.push(`<text x="${left + 122}" y="${ly + 3.5}">zero size, no message</text>`);
  out.push(`<rect x="${left + 240}" y="${ly - 4}" width="12" height="8" fill="${COPY}"/>`);
  out.push(`<text x="${left + 256}" y="${ly + 3.5}">local copy</text>`);
  out.push('</g>');

  // Time axis with grid lines.
  const integral = sched.unit === 'round' || Number.isInteger(sched.time);
  const step = tickStep(T, 8, integral);
  out.push('<g class="axis" font-size="10" fill="#333">');
  out.push(`<line x1="${left - 8}" y1="${c2(yBase)}" x2="${left - 8}" y2="${c2(top)}" stroke="#333" stroke-width="1"/>`);
  for (let k = 0; k * step <= T * (1 + 1e-9); k++) {
    const t = k * step;
    const y = c2(yOf(t));
    out.push(`<line x1="${left - 12}" y1="${y}" x2="${left - 8}" y2="${y}" stroke="#333" stroke-width="1"/>`);
    out.push(`<line class="grid" x1="${left - 8}" y1="${y}" x2="${c2(left + plotW)}" y2="${y}" stroke="#e4e4e4" stroke-width="0.6"/>`);
    out.push(`<text x="${left - 14}" y="${c2(yOf(t) + 3.5)}" text-anchor="end">${escapeXml(compact(Math.round(t * 1e6) / 1e6))}</text>`);
  }
  out.push(
    `<text x="14" y="${c2(top + plotH / 2)}" transform="rotate(-90 14 ${c2(top + plotH / 2)})" text-anchor="middle" font-size="11">${unitName}</text>`,
  );
  out.push('</g>');

  // Rank columns: dotted guides, busy bars, labels.
  const labelEvery = small ? 1 : tickStep(p, 32, true);
  out.push('<g class="ranks">');
  for (let v = 0; v < p; v++) {
    const x = c2(xOf(v));
    const isRoot = v === root;
    if (colW < 3 && !isRoot) continue; // guides would fill the plot grey
    out.push(
      `<line class="column" x1="${x}" y1="${c2(yBase)}" x2="${x}" y2="${c2(top)}" stroke="${isRoot ? ROOT : '#b0b0b0'}" ` +
        `stroke-width="${isRoot ? thin * 1.2 : thin * 0.8}" stroke-dasharray="${small ? '2,3' : '1,2'}"/>`,
    );
  }
  // Busy bars: every transfer occupies both ends; copies in orange.
  for (let v = 0; v < p; v++) {
    if (v !== root && S[v] > 0 && sched.edgeEnd[v] > sched.edgeStart[v]) {
      const y1 = yOf(sched.edgeEnd[v]);
      const h = yOf(sched.edgeStart[v]) - y1;
      const par = tree.parent[v];
      for (const u of [v, par]) {
        out.push(`<rect class="busy" x="${c2(xOf(u) - barW / 2)}" y="${c2(y1)}" width="${c2(barW)}" height="${c2(h)}" fill="#9dbbe6" fill-opacity="0.55"/>`);
      }
    }
    if (!Number.isNaN(sched.copyStart[v]) && sched.copyEnd[v] > sched.copyStart[v]) {
      const y1 = yOf(sched.copyEnd[v]);
      const h = yOf(sched.copyStart[v]) - y1;
      out.push(
        `<rect class="copy" x="${c2(xOf(v) - barW / 2)}" y="${c2(y1)}" width="${c2(barW)}" height="${c2(h)}" fill="${COPY}">` +
          `<title>${escapeXml(`rank ${v} copies ${num(m[v])} elements, ${unitName} ${num(sched.copyStart[v])}..${num(sched.copyEnd[v])}`)}</title></rect>`,
      );
    }
  }
  for (let v = 0; v < p; v++) {
    const isRoot = v === root;
    if (!small && !isRoot && v % labelEvery !== 0) continue;
    const x = c2(xOf(v));
    const fill = isRoot ? ROOT : '#111';
    const weight = isRoot ? ' font-weight="bold"' : '';
    out.push(
      `<text class="rank-label" x="${x}" y="${c2(yBase + 16)}" text-anchor="middle" font-size="${small ? 12 : 9}" fill="${fill}"${weight}>${v}</text>`,
    );
    if (small) {
      out.push(
        `<text class="size-label" x="${x}" y="${c2(yBase + 30)}" text-anchor="middle" font-size="10" fill="#555">${escapeXml(compact(m[v]))}<title>m_${v} = ${escapeXml(num(m[v]))}</title></text>`,
      );
    }
    if (isRoot) {
      // Gather ends at the root at the top; a scatter starts there at time 0.
      const ty = yOf(operation === 'gather' ? sched.time : 0);
      out.push(`<circle class="root-mark" cx="${x}" cy="${c2(ty)}" r="${small ? 4.5 : 3}" fill="${ROOT}"/>`);
    }
  }
  if (small) {
    out.push(`<text x="${left - 14}" y="${c2(yBase + 16)}" text-anchor="end" font-size="10" fill="#333">rank</text>`);
    out.push(`<text x="${left - 14}" y="${c2(yBase + 30)}" text-anchor="end" font-size="10" fill="#333">m_i</text>`);
  }
  out.push('</g>');

  // Edges: from sender at the start of the transfer to receiver at its end.
  out.push('<g class="edges">');
  for (let v = 0; v < p; v++) {
    if (v === root) continue;
    const par = tree.parent[v];
    const [from, to] = operation === 'gather' ? [v, par] : [par, v];
    const data = S[v] > 0;
    const x1 = xOf(from);
    const x2 = xOf(to);
    const y1 = yOf(sched.edgeStart[v]);
    const y2 = yOf(sched.edgeEnd[v]);
    // Pull the arrow tip back a little so it ends at the receiver's column.
    const dx = x2 - x1;
    const dy = y2 - y1;
    const len = Math.hypot(dx, dy);
    const back = len > 0 ? Math.min(len * 0.3, data ? thick * 2.5 : 3) / len : 0;
    const tx = x2 - dx * back;
    const ty = y2 - dy * back;
    const tip = `${operation === 'gather' ? `${v} -> ${par}` : `${par} -> ${v}`}: ` +
      (data ? `${num(S[v])} elements` : 'zero size, no message') +
      `, ${unitName} ${num(sched.edgeStart[v])}..${num(sched.edgeEnd[v])}`;
    const style = data
      ? `stroke="${BLUE}" stroke-width="${thick}" marker-end="url(#vcoll-ah-data)"`
      : `stroke="${GREY}" stroke-width="${thin}" stroke-dasharray="3,3" marker-end="url(#vcoll-ah-zero)"`;
    out.push(
      `<line class="edge ${data ? 'data' : 'zero'}" x1="${c2(x1)}" y1="${c2(y1)}" x2="${c2(tx)}" y2="${c2(ty)}" ${style} stroke-linecap="round">` +
        `<title>${escapeXml(tip)}</title></line>`,
    );
  }
  out.push('</g>');
  out.push('</svg>');
  return out.join('\n') + '\n';
}
