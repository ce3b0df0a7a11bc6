/**
 * An override from a notebook's own parameter cell reaches exactly the values it names: notebook
 * 03-objectives (smoke preset, through the headless runner, its cells up to the training cell) with
 * `OVERRIDES = { objective: { loss: { weights: { angle: 2 } } }, pooling: "avg", maxSteps: 2, evalEvery: 2 }`.
 * Every run's recorded configuration differs from its recipe (at the preset's scale) in those four
 * values and nowhere else — the other weights, the taus, the graded labels' int cast and ISP
 * detection stay the recipe's — and the recipe table shows each overridden value as
 * "override (parameter cell)" while the untouched ones keep their sources.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { flattenSettings } from '../lib/experiments/overrides.js';
import { presetByName } from '../lib/experiments/presets.js';
import { scaleRecipe } from '../lib/experiments/recipes/recipe.js';
import { angleStsbWithIsp, angleStsbWithWeights, TABLE4_OBJECTIVES } from '../lib/experiments/recipes/angle.js';
import { packageRoot } from '../lib/util/package-root.js';
import { SHARED_DIR } from './helpers/env.js';

const ROOT = packageRoot();
const skip = SHARED_DIR && existsSync(join(ROOT, 'dist', 'index.js')) ? false : 'needs the shared folder and a build (dist/; npm test builds it first)';
const tmp = mkdtempSync(join(tmpdir(), 'angle-nb-overrides-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const OVERRIDES = '{ objective: { loss: { weights: { angle: 2 } } }, pooling: "avg", maxSteps: 2, evalEvery: 2 }';

type Cell = { cell_type: string; source: string[]; outputs?: Array<{ output_type: string; text?: string[]; data?: Record<string, string[]> }> };

/** Notebook 03 up to its training cell, its parameter cell's OVERRIDES replaced, importing this checkout's dist/. */
function editedNotebook(dir: string): void {
  const nb = JSON.parse(readFileSync(join(ROOT, 'notebooks', '03-objectives.ipynb'), 'utf8')) as { cells: Cell[] };
  const src = (c: Cell) => c.source.join('');
  const training = nb.cells.findIndex((c) => c.cell_type === 'code' && src(c).includes('plan.run('));
  const params = nb.cells.findIndex((c) => c.cell_type === 'code' && /^const OVERRIDES = /m.test(src(c)));
  assert.ok(training > params && params > 0, 'notebook 03 has a parameter cell before its training cell');
  const cells = nb.cells.slice(0, training + 1).map((c, i) => {
    let s = src(c).replace('"../dist/index.js"', JSON.stringify(join(ROOT, 'dist', 'index.js')));
    if (i === params) s = s.replace(/^const OVERRIDES = .*$/m, `const OVERRIDES = ${OVERRIDES};`);
    return { ...c, source: s.split(/(?<=\n)/) };
  });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '03-objectives.ipynb'), JSON.stringify({ ...nb, cells }, null, 1));
}

function run(dir: string, out: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE'));
  // Only the numbers are checked here: no static figure images (each kernel would start Chromium for them).
  env.ANGLE_STATIC_FIGURES = 'off';
  Object.assign(env, { ANGLE_SHARED_DIR: SHARED_DIR!, ANGLE_RESULTS_DIR: join(tmp, 'results'), HF_HUB_OFFLINE: '1' });
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/notebooks/cli.ts', '03-objectives', '--dir', dir, '--preset', 'smoke', '--out', out], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** The rows of every HTML table the executed notebook shows, as arrays of cell texts. */
function tableRows(file: string): string[][] {
  const nb = JSON.parse(readFileSync(file, 'utf8')) as { cells: Cell[] };
  const html = nb.cells.flatMap((c) => c.outputs ?? []).map((o) => (o.data?.['text/html'] ?? []).join('')).join('\n');
  const text = (s: string) => s.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').trim();
  return [...html.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => [...m[1].matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((c) => text(c[1])));
}

test("an override in notebook 03's parameter cell changes that value and nothing else, in every recorded run and in the recipe table", { skip, timeout: 900_000 }, async () => {
  const dir = join(tmp, 'notebooks');
  editedNotebook(dir);
  const r = await run(dir, join(tmp, 'out'));
  assert.equal(r.code, 0, r.stderr + r.stdout);

  // The recipe table (of the first row, AnglE-BERT-all).
  const rows = tableRows(join(tmp, 'out', '03-objectives.ipynb'));
  const setting = (k: string) => rows.find((x) => x[0] === k);
  assert.deepEqual(setting('objective.loss.weights.angle'), ['objective.loss.weights.angle', '2', 'override (parameter cell)']);
  assert.deepEqual(setting('pooling'), ['pooling', 'avg', 'override (parameter cell)']);
  assert.deepEqual(setting('maxSteps'), ['maxSteps', '2', 'override (parameter cell)']);
  assert.equal(setting('objective.loss.weights.cosine')?.[1], '1');
  assert.match(setting('objective.loss.weights.cosine')![2], /Table 4 row 'AnglE-BERT-all'/);
  assert.match(setting('objective.loss.duplicates')![2], /train_angle\.py/);

  // Every run: the recorded configuration is the recipe's at the smoke scale but for the four overridden values.
  const recipes = new Map([...TABLE4_OBJECTIVES.map(({ row, weights }) => [row, angleStsbWithWeights(row, weights)] as const), ['ibn without ISP detection', angleStsbWithIsp(false)] as const]);
  const folder = join(tmp, 'results', '03-objectives');
  const records = readdirSync(folder).filter((f) => /^\d{4}-.*\.json$/.test(f) && !f.includes('.predictions.')).map((f) => JSON.parse(readFileSync(join(folder, f), 'utf8')));
  // Rows the override makes identical (weights that differed only in the angle term) train once: the plan dedupes identical runs.
  const overridden = (r: (typeof recipes extends Map<string, infer R> ? R : never)) => {
    const m = new Map(flattenSettings(scaleRecipe(r, presetByName('smoke').scale).config as unknown as Record<string, unknown>));
    m.set('objective.loss.weights.angle', 2).set('pooling', 'avg').set('maxSteps', 2).set('evalEvery', 2);
    return JSON.stringify([...m].sort(([a], [b]) => a.localeCompare(b)));
  };
  const distinct = new Set([...recipes.values()].map(overridden)).size;
  assert.ok(distinct < recipes.size, 'the override makes some rows identical');
  assert.equal(records.length, distinct);
  for (const rec of records) {
    const recipe = scaleRecipe(recipes.get(rec.details.tableRow)!, presetByName('smoke').scale);
    const want = new Map(flattenSettings(recipe.config as unknown as Record<string, unknown>));
    const got = new Map(flattenSettings(rec.config));
    const changed = [...want.keys()].filter((k) => JSON.stringify(got.get(k)) !== JSON.stringify(want.get(k))).sort();
    assert.deepEqual(changed, ['evalEvery', 'maxSteps', 'objective.loss.weights.angle', 'pooling'], `${rec.details.tableRow}: ${changed.join(', ')}`);
    assert.equal(got.get('objective.loss.weights.angle'), 2);
    assert.equal(got.get('pooling'), 'avg');
  }
});
