/**
 * The shape of lib/: which folder may import which. Builds the folder graph from every import
 * and export-from statement (type-only ones and dynamic import() included) of lib/**.ts and fails
 * on a cycle between folders, on an import of a folder above the importer in the layer order
 * below, and on lib importing scripts/ or test/.
 *
 * The order is the data flow of the library (data -> tokenizer -> model -> pooling -> loss /
 * evaluator -> results -> report), with the support folders below it and parity, which checks
 * everything against the golden references, on top. lib/index.ts (the public face) may import
 * every folder; lib/config.ts sits with util.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const LIB = fileURLToPath(new URL('../lib', import.meta.url));

/** Lowest first: a folder may import its own and lower layers only. */
const LAYERS: readonly string[][] = [
  ['util'],
  ['backend'],
  ['ops'],
  ['hub', 'paper'],
  ['data'],
  ['models'],
  ['llm'],
  ['embed'],
  ['losses', 'eval'],
  ['train'],
  ['report'],
  ['experiments'],
  ['notebook'],
  ['parity'],
];
const LEVEL = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The top folder of lib a file belongs to ('util' for lib/config.ts, 'index' for lib/index.ts). */
function folderOf(file: string): string {
  const rel = relative(LIB, file).split(sep);
  if (rel.length === 1) return rel[0] === 'index.ts' ? 'index' : 'util';
  return rel[0];
}

const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm;

/** Source without block comments and whole-line comments (doc examples show imports too). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

interface Edge {
  from: string;
  to: string;
  file: string;
  specifier: string;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of tsFiles(LIB)) {
    const text = withoutComments(readFileSync(file, 'utf8'));
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      const rel = relative(LIB, target);
      if (rel.startsWith('..')) {
        out.push({ from: folderOf(file), to: `outside lib: ${relative(resolve(LIB, '..'), target)}`, file, specifier: spec });
        continue;
      }
      out.push({ from: folderOf(file), to: folderOf(target.replace(/\.js$/, '.ts')), file, specifier: spec });
    }
  }
  return out;
}

const where = (e: Edge) => `${relative(resolve(LIB, '..'), e.file)} imports '${e.specifier}'`;

test('every lib/ folder has a place in the layer order', () => {
  const folders = readdirSync(LIB).filter((e) => statSync(join(LIB, e)).isDirectory());
  assert.deepEqual(folders.filter((f) => !LEVEL.has(f)), [], 'add new folders to LAYERS in this test');
});

test('lib/ imports nothing outside lib/ (no scripts/, test/ or bench/)', () => {
  assert.deepEqual(edges().filter((e) => e.to.startsWith('outside lib')).map(where), []);
});

test('no folder imports a folder above it, type imports included', () => {
  const bad = edges().filter((e) => e.from !== 'index' && !e.to.startsWith('outside') && e.to !== 'index' && LEVEL.get(e.to)! > LEVEL.get(e.from)!);
  assert.deepEqual(bad.map((e) => `${where(e)} (${e.from} is below ${e.to})`), []);
  const intoIndex = edges().filter((e) => e.to === 'index' && e.from !== 'index');
  assert.deepEqual(intoIndex.map(where), [], 'only notebooks and scripts import lib/index.ts');
});

test('no import cycle between folders', () => {
  const graph = new Map<string, Set<string>>();
  for (const e of edges()) {
    if (e.from === e.to || e.to.startsWith('outside')) continue;
    if (!graph.has(e.from)) graph.set(e.from, new Set());
    graph.get(e.from)!.add(e.to);
  }
  // Depth-first search for a back edge; report the first cycle found as a path.
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  let cycle: string[] | undefined;
  const visit = (n: string): void => {
    if (cycle) return;
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (state.get(m) === 'open') cycle = [...stack.slice(stack.indexOf(m)), m];
      else if (!state.has(m)) visit(m);
      if (cycle) return;
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  assert.equal(cycle, undefined, `folder cycle: ${cycle?.join(' -> ')}`);
});

test('the checker sees a violation when there is one', () => {
  // The parser must find every kind of import statement the library uses.
  const sample = [
    "import { a } from '../x/a.js';",
    "import type { B } from '../y/b.js';",
    "export { c } from '../z/c.js';",
    "export * as d from '../w/d.js';",
    "const e = await import('../v/e.js');",
    "import {\n  f,\n  g,\n} from '../u/f.js';",
    "/** import { h } from '../t/h.js'; */",
    "// import { i } from '../s/i.js';",
  ].join('\n');
  const found = [...withoutComments(sample).matchAll(SPECIFIER)].map((m) => m[1] ?? m[2] ?? m[3]);
  assert.deepEqual(found, ['../x/a.js', '../y/b.js', '../z/c.js', '../w/d.js', '../v/e.js', '../u/f.js']);
});
