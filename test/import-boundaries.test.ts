/**
 * Import boundaries of src/, from the folder-level import graph: every relative specifier of
 * every source file (import, import type, export … from, import(), import('…') in a type,
 * require(), new URL('…', import.meta.url)), found with the TypeScript parser, resolved to the
 * folder it lands in. The layers, the folders split further for the cycle check, the roots a
 * tree may not import and the known violations are tools/layers.json, the list
 * eslint.config.js builds its no-restricted-imports rules from.
 *
 * (a) an import goes to the same or a lower layer; (b) no cycle between two folders of src/
 * (each direct subfolder, and each file directly in src/), nor between the subfolders of
 * src/transports and src/collectives (each of their subfolders, and each file directly in
 * them), beyond the ones listed below; (c) nothing in src/ imports tools/, test/, examples/ or
 * bench/, nothing in tools/ or examples/ imports test/. Type-only imports count: they are
 * dependencies of the design as much as the others.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

interface Boundaries {
  layers: { level: number; paths: string[]; name?: string }[];
  subfolders: string[];
  forbidden: { from: string; to: string[] }[];
  knownViolations: { file: string; import: string; fix: string }[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BOUNDARIES = JSON.parse(readFileSync(new URL('../tools/layers.json', import.meta.url), 'utf8')) as Boundaries;

/**
 * Edges on a folder cycle today, `from -> to` (an edge is on a cycle when `to` also reaches
 * `from`). Any other edge on a cycle fails, and so does a listed one that is no longer on one
 * (delete it then).
 */
const KNOWN_CYCLE_EDGES: readonly string[] = [];

/**
 * The same between the subfolders of src/transports and src/collectives (an edge with a
 * subfolder at one end at least; each file directly in src/collectives is a node of its own),
 * counting the imports that remain at run time (see the test).
 */
const KNOWN_SUBFOLDER_CYCLE_EDGES: readonly string[] = [];

const SOURCE = /\.[cm]?[jt]sx?$/;

/** Repo-relative paths (posix) of the source files under `dir` (none if it does not exist). */
function sourceFiles(dir: string): string[] {
  if (!existsSync(ROOT + dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(ROOT + dir, { withFileTypes: true })) {
    const p = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...sourceFiles(p));
    } else if (SOURCE.test(entry.name)) out.push(p);
  }
  return out.sort();
}

interface Import {
  readonly file: string;
  readonly line: number;
  readonly kind: string;
  readonly spec: string;
  /** Repo-relative path the specifier lands on (with the .ts of a .js specifier when that exists). */
  readonly target: string;
}

const where = (i: Import): string => `${i.file}:${i.line}: ${i.kind} '${i.spec}'`;

/** The file a specifier names: `x.js` is `x.ts` in the sources. */
function resolveTarget(file: string, spec: string): string {
  const target = posix.normalize(posix.join(posix.dirname(file), spec));
  if (existsSync(ROOT + target)) return target;
  for (const [js, tsExt] of [['.js', '.ts'], ['.jsx', '.tsx'], ['.mjs', '.mts'], ['.cjs', '.cts']]) {
    if (target.endsWith(js) && existsSync(ROOT + target.slice(0, -js.length) + tsExt)) return target.slice(0, -js.length) + tsExt;
  }
  return target;
}

/** Every relative specifier of `file`, whose text is `text`. */
function importsIn(file: string, text: string): Import[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const found: Import[] = [];
  const add = (node: ts.Node, kind: string, spec: string): void => {
    if (!spec.startsWith('./') && !spec.startsWith('../')) return;
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    found.push({ file, line, kind, spec, target: resolveTarget(file, spec) });
  };
  const literals = (node: ts.Node, out: string[] = []): string[] => {
    if (ts.isStringLiteralLike(node)) out.push(node.text);
    ts.forEachChild(node, (child) => void literals(child, out));
    return out;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.importClause?.isTypeOnly ? 'import type' : 'import', node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node, node.isTypeOnly ? 'export type … from' : 'export … from', node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      if (ts.isStringLiteral(node.moduleReference.expression)) add(node, 'import = require', node.moduleReference.expression.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, "import('…') type", node.argument.literal.text);
    } else if (ts.isCallExpression(node) && node.arguments.length > 0 && ts.isStringLiteralLike(node.arguments[0])) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, 'import()', node.arguments[0].text);
      else if (ts.isIdentifier(node.expression) && node.expression.text === 'require') add(node, 'require()', node.arguments[0].text);
    } else if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'URL' &&
      node.arguments?.length === 2 &&
      node.arguments[1].getText(sf) === 'import.meta.url'
    ) {
      for (const spec of literals(node.arguments[0])) add(node, 'new URL()', spec);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const importsOf = (file: string): Import[] => importsIn(file, readFileSync(ROOT + file, 'utf8'));

interface LayerPath {
  readonly path: string;
  readonly level: number;
  readonly label: string;
}

const LAYER_PATHS: readonly LayerPath[] = BOUNDARIES.layers.flatMap((layer) =>
  layer.paths.map((path) => ({ path, level: layer.level, label: layer.name ? `${layer.name}, layer ${layer.level}` : `layer ${layer.level}` })),
);

const within = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);
const isFilePath = (p: string): boolean => SOURCE.test(p);
/** The layer path `p` lies in (a file layer path also matches its .js specifier). */
function layerOf(p: string): LayerPath | undefined {
  const bare = p.replace(SOURCE, '');
  return LAYER_PATHS.find((lp) => (isFilePath(lp.path) ? bare === lp.path.replace(SOURCE, '') : within(p, lp.path)));
}

/** A node of the folder graph: a direct subfolder of src/ or a file directly in it; `split` folders one level deeper. */
function folderOf(p: string, split: readonly string[]): string {
  const parts = p.split('/');
  const top = parts.slice(0, 2).join('/');
  if (parts.length <= 2) return top;
  if (split.includes(top)) return parts.slice(0, 3).join('/');
  return top;
}

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly imports: Import[];
}

function folderEdges(imports: readonly Import[], split: readonly string[]): Map<string, Edge> {
  const edges = new Map<string, Edge>();
  for (const i of imports) {
    if (!within(i.target, 'src')) continue;
    const from = folderOf(i.file, split);
    const to = folderOf(i.target, split);
    if (from === to) continue;
    const key = `${from} -> ${to}`;
    const edge = edges.get(key) ?? { from, to, imports: [] };
    edge.imports.push(i);
    edges.set(key, edge);
  }
  return edges;
}

/** The strongly connected components of the graph (Tarjan), as node → component index. */
function components(edges: Iterable<Edge>): Map<string, number> {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const component = new Map<string, number>();
  let counter = 0;
  let count = 0;
  const connect = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.set(w, count);
      } while (w !== v);
      count++;
    }
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return component;
}

/** The edges on a cycle (both ends in one component), those `keep` accepts, sorted. */
function cycleEdges(edges: Map<string, Edge>, keep: (e: Edge) => boolean = () => true): Edge[] {
  const component = components(edges.values());
  return [...edges.entries()]
    .filter(([, e]) => component.get(e.from) === component.get(e.to) && keep(e))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, e]) => e);
}

/** Unexpected cycle edges (with their imports) and listed ones no longer on a cycle. */
function compareCycles(found: Edge[], known: readonly string[]): string[] {
  const keys = found.map((e) => `${e.from} -> ${e.to}`);
  const unexpected = found
    .filter((e) => !known.includes(`${e.from} -> ${e.to}`))
    .map((e) => {
      const shown = e.imports.slice(0, 5).map((i) => `    ${where(i)}`);
      if (e.imports.length > 5) shown.push(`    … and ${e.imports.length - 5} more`);
      return `${e.from} -> ${e.to} is on a cycle:\n${shown.join('\n')}`;
    });
  const gone = known.filter((k) => !keys.includes(k)).map((k) => `${k} is no longer on a cycle: delete it from the known cycle edges`);
  const problems = [...unexpected, ...gone];
  if (problems.length > 0) problems.push(`the edges on a cycle now:\n${keys.map((k) => `  '${k}',`).join('\n')}`);
  return problems;
}

const SRC_FILES = sourceFiles('src');
const SRC_IMPORTS = SRC_FILES.flatMap(importsOf);

/** The imports in the known violations of tools/layers.json, as `file spec`. */
const KNOWN = new Set(BOUNDARIES.knownViolations.map((v) => `${v.file} ${v.import}`));

interface Violation {
  readonly imp: Import;
  readonly message: string;
}

/** The imports of src/ to a higher layer, or to a file of src/ in no layer. */
const LAYER_VIOLATIONS: readonly Violation[] = (() => {
  const found: Violation[] = [];
  for (const imp of SRC_IMPORTS) {
    if (!within(imp.target, 'src')) continue;
    const from = layerOf(imp.file);
    const to = layerOf(imp.target);
    if (from === undefined) continue; // the coverage test reports it
    if (to === undefined) found.push({ imp, message: `${where(imp)} lands on ${imp.target}, in no layer of tools/layers.json` });
    else if (to.level > from.level) found.push({ imp, message: `${where(imp)}: ${from.path} is ${from.label}; it may not import ${to.path} (${to.label})` });
  }
  return found;
})();

/** The imports of a root (src, tools, examples) into one it may not import. */
const ROOT_VIOLATIONS: readonly Violation[] = (() => {
  const found: Violation[] = [];
  for (const { from, to } of BOUNDARIES.forbidden) {
    for (const imp of from === 'src' ? SRC_IMPORTS : sourceFiles(from).flatMap(importsOf)) {
      const root = to.find((r) => within(imp.target, r));
      if (root !== undefined) found.push({ imp, message: `${where(imp)}: ${from}/ may not import ${root}/ (${imp.target})` });
    }
  }
  return found;
})();

describe('import boundaries (tools/layers.json)', () => {
  it('the layer list is well formed and covers every file of src/', () => {
    const levels = BOUNDARIES.layers.map((l) => l.level);
    expect(levels, 'levels rise strictly').toEqual([...levels].sort((a, b) => a - b).filter((l, k, a) => a.indexOf(l) === k));
    expect(LAYER_PATHS.filter((lp) => !existsSync(ROOT + lp.path)).map((lp) => lp.path), 'layer paths that do not exist').toEqual([]);
    for (const s of BOUNDARIES.subfolders) expect(LAYER_PATHS.some((lp) => lp.path === s && statSync(ROOT + s).isDirectory()), s).toBe(true);
    expect(SRC_FILES.length).toBeGreaterThan(50);
    const unplaced = SRC_FILES.filter((f) => LAYER_PATHS.filter((lp) => within(f, lp.path)).length !== 1);
    expect(unplaced, 'files of src/ in no layer (or in two): add their folder to tools/layers.json').toEqual([]);
  });

  it('no folder below src/ has the name of a layer folder or a forbidden root (the lint rules match a folder by its name)', () => {
    const names = new Set([
      ...LAYER_PATHS.filter((lp) => !isFilePath(lp.path)).map((lp) => posix.basename(lp.path)),
      ...BOUNDARIES.forbidden.flatMap((f) => f.to),
    ]);
    const folders = new Set(SRC_FILES.flatMap((f) => f.split('/').slice(1, -1).map((_, k, parts) => `src/${parts.slice(0, k + 1).join('/')}`)));
    const clashes = [...folders].filter((d) => names.has(posix.basename(d)) && !LAYER_PATHS.some((lp) => lp.path === d));
    expect(clashes).toEqual([]);
  });

  it('(a) every import of src/ goes to its own layer or a lower one', () => {
    const problems = LAYER_VIOLATIONS.filter((v) => !KNOWN.has(`${v.imp.file} ${v.imp.spec}`)).map((v) => v.message);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('(b) no import cycle between the folders of src/ beyond the known ones', () => {
    const problems = compareCycles(cycleEdges(folderEdges(SRC_IMPORTS, [])), KNOWN_CYCLE_EDGES);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it(`(b) no import cycle between the subfolders of ${BOUNDARIES.subfolders.join(', ')} beyond the known ones`, () => {
    const split = BOUNDARIES.subfolders;
    // Edges inside one of them with a subfolder at one end at least (a cycle among the files
    // directly in src/collectives is a file-level one, not between folders).
    const inside = (e: Edge): boolean =>
      split.some((s) => e.from.startsWith(`${s}/`) && e.to.startsWith(`${s}/`)) && !(isFilePath(e.from) && isFilePath(e.to));
    // Type-only imports are left out here: they are erased at run time, and the variant table
    // (v-variants.ts) defines the name union that types.ts, which every subfolder uses, names.
    const runtime = SRC_IMPORTS.filter((i) => !i.kind.includes('type'));
    const problems = compareCycles(cycleEdges(folderEdges(runtime, split), inside), KNOWN_SUBFOLDER_CYCLE_EDGES);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('(c) nothing imports a root it may not (src/ → tools/ test/ examples/ bench/, tools/ and examples/ → test/)', () => {
    const problems = ROOT_VIOLATIONS.filter((v) => !KNOWN.has(`${v.imp.file} ${v.imp.spec}`)).map((v) => v.message);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('every known violation of tools/layers.json is still there (delete the ones that are gone)', () => {
    const found = new Set([...LAYER_VIOLATIONS, ...ROOT_VIOLATIONS].map((v) => `${v.imp.file} ${v.imp.spec}`));
    expect([...KNOWN].filter((k) => !found.has(k))).toEqual([]);
  });

  it('the scanner finds every kind of relative specifier, and only those', () => {
    const text = [
      "import { a } from '../run/a.js';",
      "import type { B } from '../run/b.js';",
      "import {",
      "  c,",
      "} from './c.js';",
      "import './side-effect.js';",
      "export { d } from '../d.js';",
      "export * from '../../test/e.js';",
      "export type { F } from './f.js';",
      "const g = await import('../harness/g.js');",
      "type H = import('../report/h.js').H;",
      "const i = require('../cli/i.js');",
      "const j = new URL(ts ? './j.ts' : './j.js', import.meta.url);",
      "import k from 'node:fs';",
      "import l from 'commander';",
      "// import { m } from '../cli/m.js';",
      "const n = \"import { n } from '../cli/n.js'\";",
    ].join('\n');
    expect(importsIn('src/trees/x.ts', text).map((i) => `${i.line} ${i.kind} ${i.spec} ${i.target}`)).toEqual([
      '1 import ../run/a.js src/run/a.js',
      '2 import type ../run/b.js src/run/b.js',
      '3 import ./c.js src/trees/c.js',
      '6 import ./side-effect.js src/trees/side-effect.js',
      '7 export … from ../d.js src/d.js',
      '8 export … from ../../test/e.js test/e.js',
      '9 export type … from ./f.js src/trees/f.js',
      '10 import() ../harness/g.js src/harness/g.js',
      "11 import('…') type ../report/h.js src/report/h.js",
      '12 require() ../cli/i.js src/cli/i.js',
      '13 new URL() ./j.ts src/trees/j.ts',
      '13 new URL() ./j.js src/trees/j.js',
    ]);
  });
});
