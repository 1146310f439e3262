import { describe, expect, it } from 'vitest';
import { linearModel, pairwiseModel } from '../src/model/cost-model.js';
import { evaluate } from '../src/trees/evaluate.js';
import { TreeBuilder, type Tree } from '../src/trees/tree.js';
import { drawTreeSvg, drawTreeText, escapeXml, treeSchedule } from '../src/trees/draw.js';
import { invalidField } from './helpers/errors.js';
import { rng } from './helpers/random.js';
import { randomTree } from './helpers/trees.js';

// ---------------------------------------------------------------------------
// A tiny, strict XML well-formedness checker (no dependency): balanced tags, quoted and
// unique attributes, only known entities, a single root element. Returns the elements.
interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  /** Decoded text directly inside the element (children's text excluded). */
  text: string;
  parent: XmlElement | undefined;
}

const ENTITY = /&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);/y;
function decode(raw: string, where: string): string {
  for (let i = raw.indexOf('&'); i >= 0; i = raw.indexOf('&', i + 1)) {
    ENTITY.lastIndex = i;
    if (!ENTITY.test(raw)) throw new Error(`bad entity in ${where}: ${raw.slice(i, i + 12)}`);
  }
  return raw
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#([0-9]+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&amp;/g, '&');
}

function parseXml(doc: string): XmlElement[] {
  let s = doc;
  const prolog = /^<\?xml[^?]*\?>/.exec(s);
  if (prolog) s = s.slice(prolog[0].length);
  const elements: XmlElement[] = [];
  const stack: XmlElement[] = [];
  let roots = 0;
  let i = 0;
  while (i < s.length) {
    const lt = s.indexOf('<', i);
    const text = lt < 0 ? s.slice(i) : s.slice(i, lt);
    if (text.includes('>')) throw new Error(`stray '>' in text: ${text.slice(0, 30)}`);
    if (stack.length === 0) {
      if (text.trim() !== '') throw new Error(`text outside the root element: ${text.slice(0, 30)}`);
    } else {
      stack[stack.length - 1].text += decode(text, 'text');
    }
    if (lt < 0) break;
    const gt = s.indexOf('>', lt);
    if (gt < 0) throw new Error('unterminated tag');
    const tag = s.slice(lt + 1, gt);
    i = gt + 1;
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name ?? 'nothing'}>`);
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const m = /^([A-Za-z_][-\w:.]*)([\s\S]*)$/.exec(body);
    if (!m) throw new Error(`bad tag <${tag}>`);
    const attrs: Record<string, string> = {};
    let rest = m[2];
    const attrRe = /^\s+([A-Za-z_:][-\w:.]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/;
    for (;;) {
      const a = attrRe.exec(rest);
      if (!a) break;
      if (a[1] in attrs) throw new Error(`duplicate attribute ${a[1]} in <${m[1]}>`);
      attrs[a[1]] = decode(a[3] ?? a[4], `attribute ${a[1]}`);
      rest = rest.slice(a[0].length);
    }
    if (rest.trim() !== '') throw new Error(`bad attributes in <${m[1]}>: ${rest.slice(0, 30)}`);
    if (stack.length === 0 && ++roots > 1) throw new Error('more than one root element');
    const el: XmlElement = { name: m[1], attrs, text: '', parent: stack[stack.length - 1] };
    elements.push(el);
    if (!selfClosing) stack.push(el);
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack[stack.length - 1].name}>`);
  if (roots !== 1) throw new Error('no root element');
  return elements;
}

const hasClass = (el: XmlElement, c: string): boolean => (el.attrs.class ?? '').split(/\s+/).includes(c);

// ---------------------------------------------------------------------------
// Trees built directly with TreeBuilder.

/** The 11-rank ordered tree with root 9 used for the pictures (two zero-size edges: 4->5, 5->7). */
const FIG_SIZES = [3, 0, 5, 2, 0, 0, 7, 1, 4, 2, 6];
function figTree(): Tree {
  return new TreeBuilder(11, 9)
    .addChild(1, 0).addChild(3, 2).addChild(3, 1).addChild(5, 4).addChild(7, 6).addChild(7, 5)
    .addChild(9, 8).addChild(9, 10).addChild(9, 7).addChild(7, 3)
    .build();
}

function chain(p: number): Tree {
  const b = new TreeBuilder(p, p - 1);
  for (let v = p - 1; v > 0; v--) b.addChild(v, v - 1);
  return b.build();
}

/** Binomial gather tree over 2^d ranks, root p-1, children received in increasing subtree size. */
function binomial(d: number): Tree {
  const p = 1 << d;
  const b = new TreeBuilder(p, p - 1);
  for (let h = 1; h < p; h *= 2) {
    for (let lo = 0; lo < p; lo += 2 * h) b.addChild(lo + 2 * h - 1, lo + h - 1);
  }
  return b.build();
}

/** The rank heading each node line of the text outline (skipping the summary line). */
function ranksOfText(text: string): number[] {
  const lines = text.trimEnd().split('\n').slice(1);
  return lines.map((l) => {
    const m = /^\s*(?:\(depth \d+\) )?(\d+)\s/.exec(l);
    if (!m) throw new Error(`line without rank: ${l}`);
    return Number(m[1]);
  });
}

const model = linearModel({ alpha: 10, beta: 1, gamma: 1 });

describe('drawTreeText', () => {
  it('lists every rank once in preorder, the root first, with the summary and the exact total time', () => {
    const t = figTree();
    for (const operation of ['gather', 'scatter'] as const) {
      const text = drawTreeText(t, FIG_SIZES, { model, operation });
      const ranks = ranksOfText(text);
      expect(ranks).toHaveLength(11);
      expect([...ranks].sort((a, b) => a - b)).toEqual([...Array(11).keys()]);
      expect(ranks[0]).toBe(9);
      const lines = text.split('\n');
      expect(lines[1]).toMatch(/^9 \(root\)/);
      const time = evaluate(t, FIG_SIZES, model, operation).time;
      expect(time).toBe(78);
      expect(lines[0]).toContain(`${operation} tree: p=11 root=9 depth=4 max degree=3`);
      expect(lines[0]).toContain('messages=8 zero-size edges=2');
      expect(lines[0]).toMatch(new RegExp(`time=${time}\\b`));
      // Preorder with children in receive order.
      expect(ranks).toEqual([9, 8, 10, 7, 6, 5, 4, 3, 2, 1, 0]);
    }
  });

  it('shows subtree sizes, completion times, the operation order with the copy, and edge timing', () => {
    const text = drawTreeText(figTree(), FIG_SIZES, { model });
    const line = (r: number): string => text.split('\n').find((l) => new RegExp(`^\\s*${r}\\s`).test(l)) as string;
    expect(line(9)).toContain('m=2  S=30  C=78  ops: recv 8, copy, recv 10, recv 7');
    expect(line(7)).toContain('S=18  C=50  ops: recv 6, copy, recv 5, recv 3  -> 9 #3/3 t=[50, 78]');
    expect(line(8)).toContain('-> 9 #1/3 t=[0, 14]');
    expect(line(4)).toContain('-> 5 #1/1 no message');
    expect(line(4)).not.toContain('t=[');
    // Indentation reflects depth.
    expect(line(0)).toMatch(/^ {8}0 /);
    const scatter = drawTreeText(figTree(), FIG_SIZES, { model, operation: 'scatter' });
    expect(scatter).toContain('9 (root)  m=2  S=30  C=78  ops: send 7, send 10, copy, send 8');
    expect(scatter).toMatch(/\n {2}7 .*<- 9 #1\/3 t=\[0, 28\]/);
  });

  it('puts the copy where copyAt says', () => {
    const t = new TreeBuilder(4, 1).addChild(1, 0).addChild(1, 2).addChild(1, 3).setCopyAt(1, 2).build();
    expect(drawTreeText(t, [1, 1, 1, 1], { model })).toContain('ops: recv 0, recv 2, copy, recv 3');
    const t0 = new TreeBuilder(3, 0).addChild(0, 1).addChild(0, 2).build();
    expect(drawTreeText(t0, [1, 1, 1], { model })).toContain('ops: copy, recv 1, recv 2');
  });

  it('counts unit rounds without a model', () => {
    const text = drawTreeText(binomial(4), new Array(16).fill(1));
    expect(text.split('\n')[0]).toContain('rounds=4');
    expect(text).not.toContain('C=');
    expect(ranksOfText(text)).toHaveLength(16);
  });

  it('handles p = 1', () => {
    const t = new TreeBuilder(1, 0).build();
    const text = drawTreeText(t, [5], { model });
    expect(text).toBe('gather tree: p=1 root=0 depth=0 max degree=0 messages=0 time=5 [linear alpha=10 beta=1 gamma=1]\n0 (root)  m=5  S=5  C=5  ops: copy\n');
  });

  it('draws a chain of 3000 ranks without deep recursion and with bounded line length', () => {
    const p = 3000;
    const t = chain(p);
    const sizes = Array.from({ length: p }, (_, i) => (i % 3 === 0 ? 0 : i % 17));
    const text = drawTreeText(t, sizes, { model });
    const ranks = ranksOfText(text);
    expect(ranks).toHaveLength(p);
    expect(new Set(ranks).size).toBe(p);
    expect(text.split('\n')[0]).toMatch(new RegExp(`depth=${p - 1} max degree=1 .*time=${evaluate(t, sizes, model).time}\\b`));
    expect(Math.max(...text.split('\n').map((l) => l.length))).toBeLessThan(200);
    expect(text).toContain('(depth 2999) 0 ');
  });

  it('validates its inputs with typed errors naming the field', () => {
    const t = figTree();
    expect(invalidField(() => drawTreeText(t, [1, 2, 3]))).toBe('sizes');
    expect(invalidField(() => drawTreeText(t, FIG_SIZES.map((x, i) => (i === 2 ? -1 : x))))).toBe('sizes[2]');
    expect(invalidField(() => drawTreeText(t, FIG_SIZES, { operation: 'reduce' as 'gather' }))).toBe('operation');
    const pw = pairwiseModel({ alpha: [[0, 1], [1, 0]], beta: [[0, 1], [1, 0]] });
    expect(invalidField(() => drawTreeSvg(t, FIG_SIZES, { model: pw }))).toBe('model');
    expect(invalidField(() => drawTreeSvg(t, FIG_SIZES, { title: 5 as unknown as string }))).toBe('title');
    expect(invalidField(() => drawTreeSvg(null as unknown as Tree, FIG_SIZES))).toBe('tree');
  });
});

describe('treeSchedule', () => {
  it('agrees with evaluate on completion times and keeps every processor one-ported', () => {
    const rnd = rng(7);
    for (let trial = 0; trial < 60; trial++) {
      const p = 1 + Math.floor(rnd() * 40);
      const t = randomTree(p, Math.floor(rnd() * p), rnd);
      const sizes = Array.from({ length: p }, () => (rnd() < 0.25 ? 0 : Math.floor(rnd() * 50)));
      const ports = trial % 3 === 0 ? 2 : 1;
      const mdl = linearModel({ alpha: 1 + Math.floor(rnd() * 20), beta: 1, gamma: Math.floor(rnd() * 3), ports, copyAll: trial % 5 === 0 });
      for (const operation of ['gather', 'scatter'] as const) {
        const ev = evaluate(t, sizes, mdl, operation);
        const s = treeSchedule(t, sizes, { model: mdl, operation });
        expect(s.time).toBe(ev.time);
        expect(Array.from(s.completion)).toEqual(Array.from(ev.completion));
        expect(Array.from(s.subtreeSize)).toEqual(Array.from(ev.subtreeSize));
        let last = 0;
        for (let v = 0; v < p; v++) {
          last = Math.max(last, s.end[v]);
          if (v === t.root) continue;
          const par = t.parent[v];
          // Duration is the model's, and the transfer respects causality.
          expect(s.edgeEnd[v] - s.edgeStart[v]).toBeCloseTo(mdl.comm(v, par, s.subtreeSize[v]), 9);
          if (operation === 'gather') expect(s.edgeStart[v]).toBeGreaterThanOrEqual(s.completion[v]);
          else expect(s.edgeStart[v]).toBeGreaterThanOrEqual(s.begin[par]);
        }
        expect(last).toBe(ev.time);
        if (ports === 1) {
          // No processor takes part in two overlapping operations.
          const busy: Array<Array<[number, number]>> = Array.from({ length: p }, () => []);
          for (let v = 0; v < p; v++) {
            if (!Number.isNaN(s.copyStart[v])) busy[v].push([s.copyStart[v], s.copyEnd[v]]);
            if (v !== t.root && s.edgeEnd[v] > s.edgeStart[v]) {
              busy[v].push([s.edgeStart[v], s.edgeEnd[v]]);
              busy[t.parent[v]].push([s.edgeStart[v], s.edgeEnd[v]]);
            }
          }
          for (const iv of busy) {
            iv.sort((a, b) => a[0] - b[0]);
            for (let k = 1; k < iv.length; k++) expect(iv[k][0]).toBeGreaterThanOrEqual(iv[k - 1][1]);
          }
        }
      }
    }
  });

  it('gives a binomial tree log2 p unit rounds, one round per edge', () => {
    const t = binomial(5);
    const s = treeSchedule(t, new Array(32).fill(1));
    expect(s.unit).toBe('round');
    expect(s.time).toBe(5);
    for (let v = 0; v < 31; v++) expect(s.edgeEnd[v] - s.edgeStart[v]).toBe(1);
  });
});

describe('drawTreeSvg', () => {
  it('is well-formed XML with p rank labels, p-1 edges (zero-size ones dotted) and a highlighted root', () => {
    const t = figTree();
    for (const operation of ['gather', 'scatter'] as const) {
      for (const mdl of [model, undefined]) {
        const svg = drawTreeSvg(t, FIG_SIZES, { model: mdl, operation });
        const els = parseXml(svg);
        expect(els[0].name).toBe('svg');
        expect(els[0].attrs.xmlns).toBe('http://www.w3.org/2000/svg');
        const labels = els.filter((e) => hasClass(e, 'rank-label'));
        expect(labels.map((e) => Number(e.text))).toEqual([...Array(11).keys()]);
        const sizeLabels = els.filter((e) => hasClass(e, 'size-label'));
        expect(sizeLabels.map((e) => e.text)).toEqual(FIG_SIZES.map(String));
        const edges = els.filter((e) => hasClass(e, 'edge'));
        expect(edges).toHaveLength(10);
        const zero = edges.filter((e) => hasClass(e, 'zero'));
        expect(zero).toHaveLength(2);
        for (const z of zero) expect(z.attrs['stroke-dasharray']).toBeDefined();
        for (const d of edges.filter((e) => hasClass(e, 'data'))) expect(d.attrs['stroke-dasharray']).toBeUndefined();
        const rootLabel = labels[9];
        expect(rootLabel.attrs['font-weight']).toBe('bold');
        expect(labels.filter((e) => e.attrs['font-weight'] === 'bold')).toHaveLength(1);
        expect(els.filter((e) => hasClass(e, 'root-mark'))).toHaveLength(1);
      }
    }
  });

  it('places each edge at the time of its transfer (time grows upwards)', () => {
    const t = figTree();
    const s = treeSchedule(t, FIG_SIZES, { model });
    const els = parseXml(drawTreeSvg(t, FIG_SIZES, { model }));
    const edges = els.filter((e) => hasClass(e, 'edge'));
    const tooltip = (el: XmlElement): string | undefined => els.find((e) => e.name === 'title' && e.parent === el)?.text;
    // Edges are emitted for v = 0..p-1 without the root.
    const children = [...Array(11).keys()].filter((v) => v !== 9);
    const y1 = edges.map((e) => Number(e.attrs.y1));
    const starts = children.map((v) => s.edgeStart[v]);
    // y = a - b * t with b > 0: fit on two edges with different start times and check all.
    const i = starts.indexOf(0);
    const j = starts.indexOf(50);
    const slope = (y1[j] - y1[i]) / (starts[j] - starts[i]);
    expect(slope).toBeLessThan(0);
    for (let k = 0; k < children.length; k++) expect(y1[k]).toBeCloseTo(y1[i] + slope * starts[k], 1);
    // Tooltips state sender, receiver, size and interval.
    expect(tooltip(edges[children.indexOf(7)])).toBe('7 -> 9: 18 elements, time 50..78');
    expect(tooltip(edges[children.indexOf(4)])).toBe('4 -> 5: zero size, no message, time 0..0');
  });

  it('escapes the title and other text', () => {
    const title = `a <b> & "c" 'd'`;
    const svg = drawTreeSvg(figTree(), FIG_SIZES, { model, title });
    expect(svg).not.toContain('<b>');
    const els = parseXml(svg);
    expect(els.find((e) => hasClass(e, 'title'))?.text).toBe(title);
    expect(els.find((e) => e.name === 'title' && e.parent?.name === 'svg')?.text).toBe(title);
    expect(escapeXml(`<&>"'`)).toBe('&lt;&amp;&gt;&quot;&#39;');
  });

  it('handles p = 1', () => {
    const svg = drawTreeSvg(new TreeBuilder(1, 0).build(), [3], { model });
    const els = parseXml(svg);
    expect(els.filter((e) => hasClass(e, 'rank-label')).map((e) => e.text)).toEqual(['0']);
    expect(els.filter((e) => hasClass(e, 'edge'))).toHaveLength(0);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('stays valid for a chain of 3000 ranks (no labels for most ranks, no recursion)', () => {
    const p = 3000;
    const sizes = Array.from({ length: p }, (_, i) => (i % 3 === 0 ? 0 : 1 + (i % 5)));
    const svg = drawTreeSvg(chain(p), sizes, { model });
    expect(svg).not.toMatch(/NaN|Infinity/);
    const els = parseXml(svg);
    const edges = els.filter((e) => hasClass(e, 'edge'));
    expect(edges).toHaveLength(p - 1);
    // Edge v -> v+1 carries S = sizes[0..v], zero only while all those blocks are zero (v = 0).
    expect(edges.filter((e) => hasClass(e, 'zero'))).toHaveLength(1);
    const labels = els.filter((e) => hasClass(e, 'rank-label'));
    expect(labels.length).toBeLessThanOrEqual(40);
    expect(labels.some((e) => e.text === String(p - 1) && e.attrs['font-weight'] === 'bold')).toBe(true);
  });
});

describe('the XML checker used above', () => {
  it('rejects malformed documents', () => {
    expect(() => parseXml('<a><b></a></b>')).toThrow();
    expect(() => parseXml('<a>x & y</a>')).toThrow();
    expect(() => parseXml('<a x=1/>')).toThrow();
    expect(() => parseXml('<a x="1" x="2"/>')).toThrow();
    expect(() => parseXml('<a/><b/>')).toThrow();
    expect(() => parseXml('<a>')).toThrow();
    expect(parseXml('<?xml version="1.0"?>\n<a k="&lt;1&gt;"><b>x &amp; y</b></a>')[1].text).toBe('x & y');
  });
});
