/**
 * Issue 38: the README's library quick start in a notebook — its code block in one cell of a
 * notebook run by the real tslab kernel under nbconvert (as test/notebook-runner.test.ts runs its
 * fixture), with the first line the README gives for notebooks (`import * as angle from
 * "../dist/index.js"`, the path made relative to the temporary notebook's folder) instead of the
 * REPL's `await import('angle-notebooks')`, which tslab's type checker cannot resolve. Every other
 * line is the README's, as written. ANGLE_MODEL and ANGLE_DATA_DIR name the shared folder's tiny
 * BERT and data; the tslab kernelspec goes to a temporary JUPYTER_DATA_DIR (this checkout's tslab),
 * so a kernelspec left by another checkout does not matter.
 *
 * Skipped, saying why, without nbconvert, the build (dist/) or the shared folder.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';
import { DATA_DIR, GOLDEN_DIR } from './helpers/env.js';

const ROOT = packageRoot();

/** The README's quick-start section: its code block and the import line it gives for notebooks. */
function quickStart(): { code: string; notebookImport: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Library quick start'));
  assert.ok(section, 'the README has a "Library quick start" section');
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(code, 'the section has a js code block');
  const notebookImport = /in a notebook with its first line\s+`(import \* as angle from "[^"]+")`/.exec(section)?.[1];
  assert.ok(notebookImport, 'the section names the first line to use in a notebook');
  return { code, notebookImport };
}

function nbconvertMissing(): string | undefined {
  const r = spawnSync('jupyter', ['nbconvert', '--version'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : 'jupyter nbconvert is not installed (see docs/jupyter.md)';
}

const skip = !existsSync(join(ROOT, 'dist', 'index.js'))
  ? 'needs the build (dist/; npm test builds it first)'
  : !GOLDEN_DIR || !DATA_DIR
    ? 'needs the golden tiny BERT and the data folder'
    : (nbconvertMissing() ?? false);

interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  ename?: string;
  evalue?: string;
}

test("the README's quick start runs as written in a notebook, in the tslab kernel under nbconvert", { skip, timeout: 300_000 }, () => {
  const { code, notebookImport } = quickStart();
  const lines = code.split('\n').filter((l) => l.trim());
  assert.match(lines[0]!, /^const angle = await import\('angle-notebooks'\);$/);
  // Inside the project (the notebooks' folders are), so the kernel finds this checkout's packages.
  mkdirSync(join(ROOT, 'build'), { recursive: true });
  const work = mkdtempSync(join(ROOT, 'build', 'readme-notebook-'));
  const jupyterDir = mkdtempSync(join(tmpdir(), 'angle-readme-notebook-'));
  try {
    const dist = relative(work, join(ROOT, 'dist', 'index.js'));
    const first = notebookImport.replace('"../dist/index.js"', JSON.stringify(dist));
    const source = [`${first};`, ...lines.slice(1)].join('\n');
    const nb = {
      cells: [{ cell_type: 'code', id: 'quick-start', execution_count: null, metadata: {}, outputs: [], source }],
      metadata: { kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    writeFileSync(join(work, 'quick-start.ipynb'), JSON.stringify(nb));
    // This checkout's tslab, written by hand as docs/jupyter.md says (tslab install would need IPython).
    mkdirSync(join(jupyterDir, 'kernels', 'tslab'), { recursive: true });
    const kernel = { argv: [join(ROOT, 'node_modules', '.bin', 'tslab'), 'kernel', '--config-path', '{connection_file}'], display_name: 'TypeScript', language: 'typescript' };
    writeFileSync(join(jupyterDir, 'kernels', 'tslab', 'kernel.json'), JSON.stringify(kernel));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANGLE_') || k === 'ANGLE_ONNX_CACHE'));
    // The kernelspec starts tslab through `#!/usr/bin/env node`: this Node first on PATH.
    const PATH = [join(process.execPath, '..'), process.env.PATH ?? ''].join(':');
    const r = spawnSync(
      'jupyter',
      ['nbconvert', '--to', 'notebook', '--execute', '--allow-errors', '--ExecutePreprocessor.kernel_name=tslab', '--ExecutePreprocessor.timeout=240', '--output-dir', join(work, 'out'), join(work, 'quick-start.ipynb')],
      { cwd: ROOT, env: { ...env, PATH, JUPYTER_DATA_DIR: jupyterDir, ANGLE_MODEL: join(GOLDEN_DIR!, 'model'), ANGLE_DATA_DIR: DATA_DIR! }, encoding: 'utf8', timeout: 280_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    const executed = JSON.parse(readFileSync(join(work, 'out', 'quick-start.ipynb'), 'utf8')) as { cells: { outputs: Output[] }[] };
    const outputs = executed.cells[0]!.outputs;
    const text = (o: Output) => (Array.isArray(o.text) ? o.text.join('') : (o.text ?? ''));
    // tslab reports errors (type errors included) on stderr; a clean run has none.
    assert.deepEqual(outputs.filter((o) => o.output_type === 'error' || o.name === 'stderr').map((o) => o.evalue ?? text(o)), []);
    const out = outputs.map(text).join('');
    // similarity[0]: three cosines, the first 1; then a Spearman's ρ in [-1, 1].
    assert.match(out, /\[\s*(1|0\.9999\d*|1\.0000\d*),\s*-?[\d.e-]+,\s*-?[\d.e-]+\s*\]/, out);
    const rho = [...out.matchAll(/^(-?0\.\d+|-?1|0)$/gm)].map((m) => Number(m[1]));
    assert.equal(rho.length, 1, `one Spearman's ρ printed:\n${out}`);
    assert.ok(Math.abs(rho[0]!) <= 1 && rho[0] !== 0, `ρ = ${rho[0]}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(jupyterDir, { recursive: true, force: true });
  }
});
