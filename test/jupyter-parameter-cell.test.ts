/**
 * The parameter cell in a live Jupyter kernel (not only headless): `npm run jupyter` serves the
 * repository's notebooks, a client opens 04-pooling in a tslab kernel and runs its cells in order
 * (short runs: `OVERRIDES = { maxSteps: 2, evalEvery: 2 }`), then edits the parameter cell — MODEL to
 * another model folder and `lr: 1e-3` — runs it and every cell below again, and sees the new values
 * take effect: every row trains anew (new run keys) from the new model at the new learning rate, and
 * the recipe table says where each value came from. Jupyter's own state goes to a temporary
 * folder; skipped, with the reason printed, where Jupyter or IPython is missing.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { readSafetensors, writeSafetensors } from '../lib/models/safetensors.js';
import { packageRoot } from '../lib/util/package-root.js';
import { GOLDEN_DIR, SHARED_DIR } from './helpers/env.js';
import { isolatedJupyterEnv, jupyterUnavailable, startJupyterCommand } from './helpers/jupyter-command.js';
import { closeSession, executeCell, openSession, type JupyterServer } from './helpers/jupyter-kernel-client.js';

const ROOT = packageRoot();
const NOTEBOOK = 'notebooks/04-pooling.ipynb';

function unavailable(env: NodeJS.ProcessEnv): string | undefined {
  if (!SHARED_DIR || !GOLDEN_DIR) return 'needs the shared folder (the smoke preset)';
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) return 'needs a build (dist/; npm test builds it first)';
  return jupyterUnavailable(env);
}

/** A copy of the golden tiny BERT whose word embeddings are scaled by 1.01: another model (other weights, other runs). */
function otherModel(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const src = join(GOLDEN_DIR!, 'model');
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt']) if (existsSync(join(src, f))) copyFileSync(join(src, f), join(dir, f));
  const st = readSafetensors(join(src, 'model.safetensors'));
  const out: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const [name, t] of st.tensors) {
    const data = Float32Array.from(t.data as Float32Array);
    if (name.includes('word_embeddings')) for (let i = 0; i < data.length; i++) data[i] *= 1.01;
    out[name] = { shape: t.shape, data };
  }
  writeSafetensors(join(dir, 'model.safetensors'), out);
  return dir;
}

let dir: string;
let env: NodeJS.ProcessEnv;
let skip: string | undefined;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'angle-jupyter-params-'));
  const cache = process.env.ANGLE_ONNX_CACHE;
  env = { ...isolatedJupyterEnv(dir), ...(cache ? { ANGLE_ONNX_CACHE: cache } : {}), ANGLE_RESULTS_DIR: join(dir, 'results'), HF_HUB_OFFLINE: '1' };
  skip = unavailable(env);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('editing MODEL and a hyperparameter in the parameter cell of a live kernel takes effect on re-run', { timeout: 900_000 }, async (t) => {
  if (skip) return t.skip(skip);
  const jupyter = startJupyterCommand(['--preset', 'smoke', '--shared', SHARED_DIR!, '--no-git-filter'], env);
  const { child, exited } = jupyter;
  try {
    const url = await jupyter.ready;
    const server: JupyterServer = { base: url.origin, token: url.searchParams.get('token')! };
    const session = await openSession(server, NOTEBOOK, 'tslab');
    const run = async (code: string) => {
      const r = await executeCell(server, session.kernel.id, session.id, code, 600_000);
      assert.equal(r.error, undefined, `${r.error}\n${r.stderr}\n--- in cell:\n${code}`);
      return r.stdout;
    };
    const nb = JSON.parse(readFileSync(join(ROOT, NOTEBOOK), 'utf8')) as { cells: Array<{ cell_type: string; source: string[] }> };
    const code = nb.cells.filter((c) => c.cell_type === 'code').map((c) => c.source.join(''));
    const params = code.findIndex((c) => /^const OVERRIDES = /m.test(c));
    const training = code.findIndex((c) => c.includes('plan.run('));
    assert.ok(params > 0 && training > params, 'notebook 04 has a parameter cell before its training cell');
    const withParams = (s: string, o: { model?: string; overrides: string }) =>
      s.replace(/^const OVERRIDES = .*$/m, `const OVERRIDES = ${o.overrides};`).replace(/^const MODEL = .*$/m, (line) => (o.model ? `const MODEL = ${JSON.stringify(o.model)};` : line));
    // What the runs and the recipe table say, as JSON on stdout.
    const probe = 'console.log(JSON.stringify({ runs: plan.runs.map((r) => ({ row: r.row.row, key: r.run?.key, status: r.run?.status, model: r.run?.run.record.model.id, lr: r.run?.run.record.config.lr })), table: plan.recipeTable().rows }));';
    const read = (out: string) => JSON.parse(out.trim().split('\n').at(-1)!) as { runs: Array<{ row: string; key: string; status: string; model: string; lr: number }>; table: string[][] };

    for (let i = 0; i <= training; i++) await run(i === params ? withParams(code[i], { overrides: '{ maxSteps: 2, evalEvery: 2 }' }) : code[i]);
    const first = read(await run(probe));
    assert.equal(first.runs.length, 5);
    assert.ok(first.runs.every((r) => r.status === 'trained' && r.lr === 1e-5), JSON.stringify(first.runs));

    // The parameter cell edited in place, then it and every cell below it run again.
    const model = otherModel(join(dir, 'other-model'));
    for (let i = params; i <= training; i++) await run(i === params ? withParams(code[i], { model, overrides: '{ maxSteps: 2, evalEvery: 2, lr: 1e-3 }' }) : code[i]);
    const second = read(await run(probe));
    assert.equal(second.runs.length, 5);
    for (const r of second.runs) {
      assert.equal(r.status, 'trained', `${r.row}: a new model and lr are a new run`);
      assert.equal(r.lr, 1e-3);
      // the record keeps no machine path: the folder's last two parts
      assert.equal(r.model, `local:${dir.split('/').at(-1)}/other-model`);
      assert.ok(!first.runs.some((f) => f.key === r.key), `${r.row}: a new run key`);
    }
    const row = (k: string) => second.table.find((x) => x[0] === k);
    assert.deepEqual(row('lr'), ['lr', '0.001', 'override (parameter cell)']);
    assert.deepEqual(row('model'), ['model', model, 'MODEL (parameter cell)']);
    assert.match(String(row('epochs')?.[2]), /train_angle\.py/);
    await closeSession(server, session.id);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, jupyter.output().stderr);
});
