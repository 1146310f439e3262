import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { URL } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Import boundaries: the layers of src/ and the roots a tree may not import, from the one list
 * in tools/layers.json (test/import-boundaries.test.ts checks the same list on the import graph,
 * including dynamic imports, which no-restricted-imports does not see).
 *
 * Relative specifiers differ with the importing file's depth, so a folder target is matched by
 * its name as a folder anywhere in the specifier, `^(?:.*\/)?collectives\/` (what the glob
 * `**\/collectives/**` says; no folder below src/ carries the name of a layer folder or of a
 * forbidden root, the test checks that). A file target (src/index.ts) is matched depth by depth
 * (`../index.js` from src/x/, `../../index.js` from src/x/y/ …) with
 * @typescript-eslint/no-restricted-imports, so that it does not clash with the folder patterns
 * of no-restricted-imports (a later config object replaces a rule's options, never merges them).
 * Regular expressions rather than globs: a known violation is let through by a lookahead, where
 * a negated glob cannot re-include a file whose folder the glob matched.
 */
const BOUNDARIES = JSON.parse(readFileSync(new URL('./tools/layers.json', import.meta.url), 'utf8'));
const EXTS = '{ts,tsx,mts,cts,js,jsx,mjs,cjs}';
/** Deepest folder level below src/ given depth-exact file patterns (src/a/b/c/d/e/f/g/h/x.ts). */
const MAX_DEPTH = 8;

const isFile = (p) => /\.[cm]?[jt]sx?$/.test(p);
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Every layer path with its level and how messages name it. */
const LAYER_PATHS = BOUNDARIES.layers.flatMap((layer) =>
  layer.paths.map((p) => ({
    path: p,
    level: layer.level,
    label: layer.name ? `${layer.name}, layer ${layer.level}` : `layer ${layer.level}`,
  })),
);
const forbiddenRoots = (from) => BOUNDARIES.forbidden.find((f) => f.from === from)?.to ?? [];
const filesOf = (p) => (isFile(p) ? [p] : [`${p}/**/*.${EXTS}`]);
const layerOf = (file) => LAYER_PATHS.find((lp) => file === lp.path || file.startsWith(`${lp.path}/`));
/** A specifier with folder `name` in it. */
const folderRegex = (name) => `(?:.*/)?${escape(name)}/`;

/**
 * Patterns: `target` (the path they keep out), `regex` (unanchored; `allow` adds lookaheads for
 * the known violations), `message`.
 */
const rule = (patterns) => [
  'error',
  {
    patterns: patterns.map((p) => ({
      regex: `^${(p.allow ?? []).map((a) => `(?!${escape(a)}$)`).join('')}${p.regex}`,
      caseSensitive: true,
      message: p.message,
    })),
  },
];

/** no-restricted-imports patterns of the files in layer path `src`: upper layer folders, forbidden roots. */
function folderPatterns(src) {
  const upper = LAYER_PATHS.filter((t) => t.level > src.level && !isFile(t.path)).map((t) => ({
    target: t.path,
    regex: folderRegex(posix.basename(t.path)),
    message: `${src.path} is ${src.label}; it may not import ${t.path} (${t.label}) — layers in tools/layers.json.`,
  }));
  const roots = forbiddenRoots('src').map((root) => ({
    target: root,
    regex: folderRegex(root),
    message: `${src.path} may not import ${root}/: nothing in src/ imports ${forbiddenRoots('src').join('/, ')}/ (tools/layers.json).`,
  }));
  return [...upper, ...roots];
}

/** The same for the upper layers that are single files (src/index.ts), from files `depth` folders below src/. */
function filePatterns(src, depth) {
  return LAYER_PATHS.filter((t) => t.level > src.level && isFile(t.path)).map((t) => {
    const spec = (depth === 0 ? './' : '../'.repeat(depth)) + posix.relative('src', t.path).replace(/\.[cm]?[jt]sx?$/, '');
    return {
      target: t.path,
      regex: `${escape(spec)}(?:\\.[^/]*)?$`,
      message: `${src.path} is ${src.label}; it may not import ${t.path} (${t.label}) — layers in tools/layers.json.`,
    };
  });
}

/** The patterns of the files of root `from` (tools, examples): its forbidden roots. */
function rootPatterns(from) {
  return forbiddenRoots(from).map((root) => ({ target: root, regex: folderRegex(root), message: `${from}/ may not import ${root}/ (tools/layers.json).` }));
}

/** The file globs of layer path `lp` whose files lie `depth` folders below src/, with that depth. */
function depthGlobs(lp) {
  const own = lp.path.split('/').length - (isFile(lp.path) ? 2 : 1);
  if (isFile(lp.path)) return [{ files: [lp.path], depth: own }];
  return Array.from({ length: MAX_DEPTH - own + 1 }, (_, k) => ({
    files: [`${lp.path}/${'*/'.repeat(k)}*.${EXTS}`],
    depth: own + k,
  }));
}

/** Known violations (tools/layers.json): the one import is let through, every other stays forbidden. */
function allowKnown(patterns, violation) {
  const target = posix.normalize(posix.join(posix.dirname(violation.file), violation.import));
  return patterns.map((p) =>
    target === p.target || target.startsWith(`${p.target}/`) || target.replace(/\.[cm]?[jt]sx?$/, '') === p.target.replace(/\.[cm]?[jt]sx?$/, '')
      ? { ...p, allow: [...(p.allow ?? []), violation.import] }
      : p,
  );
}

function importBoundaries() {
  const configs = [
    // Files of src/ in no layer (the test fails on them) still may not import the forbidden roots.
    { files: [`src/**/*.${EXTS}`], rules: { 'no-restricted-imports': rule(folderPatterns({ path: 'src', level: Infinity, label: 'src/' })) } },
  ];
  for (const lp of LAYER_PATHS) {
    configs.push({ files: filesOf(lp.path), rules: { 'no-restricted-imports': rule(folderPatterns(lp)) } });
    for (const { files, depth } of depthGlobs(lp)) {
      const patterns = filePatterns(lp, depth);
      if (patterns.length > 0) configs.push({ files, rules: { '@typescript-eslint/no-restricted-imports': rule(patterns) } });
    }
  }
  for (const { from } of BOUNDARIES.forbidden.filter((f) => f.from !== 'src')) {
    configs.push({ files: [`${from}/**/*.${EXTS}`], rules: { 'no-restricted-imports': rule(rootPatterns(from)) } });
  }
  // The known violations: that file's patterns again, with the one import let through.
  for (const v of BOUNDARIES.knownViolations) {
    const lp = layerOf(v.file);
    const rules =
      lp === undefined
        ? { 'no-restricted-imports': rule(allowKnown(rootPatterns(v.file.split('/')[0]), v)) }
        : {
            'no-restricted-imports': rule(allowKnown(folderPatterns(lp), v)),
            '@typescript-eslint/no-restricted-imports': rule(allowKnown(filePatterns(lp, v.file.split('/').length - 2), v)),
          };
    configs.push({ files: [v.file], rules });
  }
  return configs;
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['bin/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  ...importBoundaries(),
);
