/**
 * The public surface (lib/index.ts, what `import * as angle from '../dist/index.js'` gives a
 * notebook) holds every `angle.<area>.<name>` the notebooks, the test notebooks and the docs
 * write, by the same path — directly, through an alias (`const ex = angle.experiments;` then
 * `ex.Plan`) or destructured from a namespace. The curated areas export those names and no other,
 * so a name dropped from a barrel while a notebook uses it fails here, not after a kernel run.
 * Read with TypeScript's parser from the sources (test/helpers/public-surface.ts): a few seconds.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';
import { countNames, libraryPaths, lookUp, notebookCode, surfaceOf, type Surface } from './helpers/public-surface.js';

const ROOT = packageRoot();
const NOTEBOOK_DIRS = ['notebooks', 'test/fixtures/plan-notebooks', 'test/fixtures/figures-notebook', 'test/fixtures/notebooks'];
/** The areas whose barrel exports only what notebooks and docs use (lib/index.ts says which). */
const CURATED = ['experiments', 'models', 'embed', 'llm', 'report', 'notebook'];

/** Every library path used, with where (file) it is written. */
function usedPaths(): Array<{ path: string[]; where: string }> {
  const out: Array<{ path: string[]; where: string }> = [];
  for (const dir of NOTEBOOK_DIRS) {
    for (const f of readdirSync(join(ROOT, dir)).filter((x) => x.endsWith('.ipynb'))) {
      for (const path of libraryPaths(notebookCode(join(ROOT, dir, f)))) out.push({ path, where: `${dir}/${f}` });
    }
  }
  for (const doc of ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((x) => x.endsWith('.md')).map((x) => `docs/${x}`)]) {
    for (const path of libraryPaths(readFileSync(join(ROOT, doc), 'utf8'))) out.push({ path, where: doc });
  }
  return out;
}

test('every angle.<area>.<name> the notebooks and docs use is exported by lib/index.ts under that path', () => {
  const surface = surfaceOf(join(ROOT, 'lib', 'index.ts')) as Surface;
  const used = usedPaths();
  assert.ok(used.length > 100, `only ${used.length} uses found: the patterns no longer match the notebooks`);
  const missing = [...new Set(used.flatMap(({ path, where }) => {
    const r = lookUp(surface, path);
    return r.found ? [] : [`${where}: angle.${path.join('.')} (no angle.${r.missing})`];
  }))];
  assert.deepEqual(missing, []);
  console.log(`public surface: ${countNames(surface)} names exported by lib/index.ts; ${new Set(used.map((u) => u.path.join('.'))).size} paths used`);
});

test('the curated areas export nothing the notebooks and docs do not use, and lib/index.ts no area they do not use', () => {
  const surface = surfaceOf(join(ROOT, 'lib', 'index.ts')) as Surface;
  const used = new Set(usedPaths().map(({ path }) => path.slice(0, 2).join('.')));
  const unused = CURATED.flatMap((area) => {
    const names = surface.get(area);
    assert.ok(names instanceof Map, `lib/index.ts exports no namespace '${area}'`);
    return [...names.keys()].filter((n) => !used.has(`${area}.${n}`)).map((n) => `angle.${area}.${n}`);
  });
  assert.deepEqual(unused, [], 'exported by a curated barrel but used by no notebook or doc: drop it from the barrel (lib, scripts and tests import the file itself)');
  const areas = new Set(usedPaths().map(({ path }) => path[0]));
  const unusedAreas = [...surface].filter(([name, v]) => v !== true && !areas.has(name)).map(([name]) => `angle.${name}`);
  assert.deepEqual(unusedAreas, [], 'a namespace of lib/index.ts that no notebook or doc uses: leave it out (its folder is internal)');
});

test('the usage patterns: direct, through an alias, destructured, and after a spread (a property named angle or ex is not a use)', () => {
  const code = [
    'const ex = angle.experiments;',
    'const { showTable } = angle.notebook;',
    'const rows = [...ex.simaceTable1Rows(), ...angle.report.readResults()];',
    'angle.models.loadModel(); other.angle.nothing; obj.ex.notThis;',
  ].join('\n');
  const got = libraryPaths(code).map((p) => p.join('.'));
  for (const want of ['experiments', 'notebook.showTable', 'experiments.simaceTable1Rows', 'report.readResults', 'models.loadModel']) assert.ok(got.includes(want), `${want} not found in ${got.join(', ')}`);
  for (const not of ['nothing', 'experiments.notThis']) assert.ok(!got.some((p) => p.endsWith(not)), `${not} taken for a use`);
});
