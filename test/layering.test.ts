// The layering rule of docs/architecture.md, enforced: value imports go down the floors only
// (type-only imports are free: they vanish at run time), nothing but cli/ imports cli/, and no
// value-import cycle between files. A new top-level folder must be given its floor here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './e2e/harness.js';

const src = join(repoRoot, 'src');

/** Lowest first; a folder may import from the floors below its own. */
const floors: readonly (readonly string[])[] = [
  ['util'],
  ['api'],
  ['storage', 'client', 'streaming', 'images'],
  ['apiserver'],
  ['controllers', 'scheduler', 'kubelet', 'proxy', 'dns', 'sim', 'timeline'],
  ['agent'],
  ['cli'],
];

/** Imports along a floor that are allowed, one way only. */
const sideways = new Set([
  // Upstream's kubelet admits pods with the scheduler's own filter plugins (lifecycle/predicate.go).
  'kubelet -> scheduler',
]);

const floorOf = new Map(floors.flatMap((names, i) => names.map((n) => [n, i] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The project files a file imports for their values (relative specifiers only). */
function valueImports(file: string, text = readFileSync(file, 'utf8')): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const add = (spec: ts.Expression | undefined) => {
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) return;
    out.push(normalize(join(dirname(file), spec.text.replace(/\.js$/, '.ts'))));
  };
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes = clause && !clause.name && named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes) add(st.moduleSpecifier);
    } else if (ts.isExportDeclaration(st) && !st.isTypeOnly) {
      add(st.moduleSpecifier);
    }
  }
  return out;
}

const files = sourceFiles(src).filter((f) => !f.endsWith('.test.ts'));
const graph = new Map(files.map((f) => [f, valueImports(f)]));
const topFolder = (f: string) => relative(src, f).split('/')[0]!;

test('every top-level folder of src has a floor', () => {
  const unplaced = [...new Set(files.map(topFolder))].filter((f) => !floorOf.has(f) && !f.endsWith('.ts'));
  assert.deepEqual(unplaced, []);
});

test('value imports go down the floors only', () => {
  const bad: string[] = [];
  for (const [file, targets] of graph) {
    const from = topFolder(file);
    for (const target of targets) {
      const to = topFolder(target);
      if (from === to) continue;
      const ok = (floorOf.get(to) ?? Infinity) < (floorOf.get(from) ?? -Infinity) || sideways.has(`${from} -> ${to}`);
      if (!ok) bad.push(`${relative(src, file)} -> ${relative(src, target)}`);
    }
  }
  assert.deepEqual(bad, []);
});

// The web console (console/, bundled for the browser) sits above the floors but may take only the
// pure ones: api/ and util/ hold no node: imports the browser lacks.
test('the console imports only api and util from src', () => {
  const consoleDir = join(repoRoot, 'console', 'src');
  const sourcesTsx = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourcesTsx(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : []));
  const bad: string[] = [];
  for (const file of sourcesTsx(consoleDir)) {
    for (const target of valueImports(file)) {
      const rel = relative(src, target);
      if (rel.startsWith('..')) continue;
      if (!['api', 'util'].includes(topFolder(target))) bad.push(`${relative(repoRoot, file)} -> src/${rel}`);
    }
  }
  assert.deepEqual(bad, []);
});

test('no value-import cycle between files', () => {
  // Tarjan's strongly connected components over the file graph.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(relative(src, w));
      if (w === v) break;
    }
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const f of graph.keys()) if (!index.has(f)) visit(f);
  assert.deepEqual(cycles, []);
});

test('the checker counts value imports and skips type-only ones', () => {
  const text = [
    "import type { A } from './a.js';",
    "import { type B } from './b.js';",
    "import { C, type D } from './c.js';",
    "export { E } from './e.js';",
    "export type { F } from './f.js';",
    "import './g.js';",
    "import * as h from './h.js';",
    "import YAML from 'yaml';",
  ].join('\n');
  assert.deepEqual(valueImports('/x/y.ts', text), ['/x/c.ts', '/x/e.ts', '/x/g.ts', '/x/h.ts']);
});
