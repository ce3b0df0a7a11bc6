/**
 * Issue 38: after a run and a save with no edit, `git status` showed every notebook modified —
 * Jupyter writes cell keys sorted, the committed files had them in another order. The committed
 * notebooks are now in the form Jupyter writes (nbformat: keys sorted, one-space indent, lines
 * split, a final newline; scripts/notebooks/jupyter-json.mjs), every cell has an id (Jupyter would
 * add a random one), and the clean filter (scripts/strip-notebook-outputs.mjs) writes that form,
 * so a notebook run and saved by Jupyter stages as no change. Where a Python with nbformat is on
 * the machine (Debian's python3-nbformat), nbformat itself does the serialising; else its
 * serialisation as reproduced here does, and the test says so.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';
import { jupyterNotebookText, splitLinesAsPython } from '../scripts/notebooks/jupyter-json.mjs';

const ROOT = packageRoot();
const NOTEBOOKS = readdirSync(join(ROOT, 'notebooks')).filter((f) => f.endsWith('.ipynb')).sort();

/** nbformat.write's text for a notebook JSON text, with a Python that has nbformat; undefined without one. */
const NBFORMAT_WRITE = 'import sys, nbformat\nnb = nbformat.reads(sys.stdin.read(), as_version=nbformat.NO_CONVERT)\ns = nbformat.writes(nb, version=nbformat.NO_CONVERT)\nsys.stdout.write(s if s.endswith("\\n") else s + "\\n")';
const python = ['python3', '/usr/bin/python3'].find((p) => spawnSync(p, ['-c', 'import nbformat'], { encoding: 'utf8' }).status === 0);
function nbformatWrite(text: string): string | undefined {
  if (!python) return undefined;
  const r = spawnSync(python, ['-c', NBFORMAT_WRITE], { input: text, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}
/** How Jupyter serialises: nbformat where it is here, else the reproduction. */
const jupyterWrite = (nb: unknown) => nbformatWrite(JSON.stringify(nb)) ?? jupyterNotebookText(nb);

test('every committed notebook is in the form Jupyter writes, and every cell has an id', (t) => {
  t.diagnostic(python ? `serialised by nbformat (${python})` : 'no Python with nbformat here: checked against its serialisation as reproduced in scripts/notebooks/jupyter-json.mjs');
  for (const f of NOTEBOOKS) {
    const text = readFileSync(join(ROOT, 'notebooks', f), 'utf8');
    const nb = JSON.parse(text) as { cells: Array<{ id?: string }> };
    assert.ok(nb.cells.every((c) => typeof c.id === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(c.id)), `${f}: a cell without an id (Jupyter would add a random one)`);
    assert.equal(new Set(nb.cells.map((c) => c.id)).size, nb.cells.length, `${f}: cell ids repeat`);
    assert.equal(jupyterNotebookText(nb), text, `${f}: not in Jupyter's form`);
    const theirs = nbformatWrite(text);
    if (theirs !== undefined) assert.equal(theirs, text, `${f}: nbformat writes it differently`);
  }
});

test('run and saved by Jupyter with no edit, each notebook stages through the clean filter as no change', () => {
  for (const f of NOTEBOOKS) {
    const committed = readFileSync(join(ROOT, 'notebooks', f), 'utf8');
    // What a run adds, as the front end hands it to the server (strings, not line lists) and the server keeps it.
    const nb = JSON.parse(committed) as { metadata: Record<string, unknown>; cells: Array<Record<string, unknown>> };
    nb.metadata.signature = 'sha256:0123';
    nb.metadata.widgets = { 'application/vnd.jupyter.widget-state+json': { state: {} } };
    nb.cells.forEach((c, i) => {
      c.metadata = { ...(c.metadata as object), trusted: true, scrolled: false };
      c.source = (c.source as string[]).join('');
      if (c.cell_type !== 'code') return;
      c.execution_count = i + 1;
      (c.metadata as Record<string, unknown>).execution = { 'iopub.execute_input': '2026-11-28T01:00:00.000Z' };
      c.outputs = [
        { name: 'stderr', output_type: 'stream', text: 'inference: ONNX Runtime\nwarming up\n' },
        { data: { 'text/html': '<div>\n<script>Plotly.newPlot()</script>\n</div>', 'text/plain': 'figure' }, metadata: {}, output_type: 'display_data' },
        { data: { 'text/plain': '42' }, execution_count: i + 1, metadata: {}, output_type: 'execute_result' },
      ];
    });
    const saved = jupyterWrite(nb);
    assert.notEqual(saved, committed);
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'strip-notebook-outputs.mjs')], { input: saved, encoding: 'utf8', cwd: ROOT });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, committed, `${f}: a run and a save show as a change`);
  }
});

test("Python's line splitting (str.splitlines(True)), which nbformat applies to sources and outputs", () => {
  assert.deepEqual(splitLinesAsPython(''), []);
  assert.deepEqual(splitLinesAsPython('a\nb'), ['a\n', 'b']);
  assert.deepEqual(splitLinesAsPython('a\r\nb\rc\u2028d\x0ce\n'), ['a\r\n', 'b\r', 'c\u2028', 'd\x0c', 'e\n']);
});

test("Jupyter's checkpoints (.ipynb_checkpoints/) are ignored by git", (t) => {
  if (spawnSync('git', ['--version']).status !== 0) return t.skip('git is not installed');
  const r = spawnSync('git', ['check-ignore', '-q', 'notebooks/.ipynb_checkpoints/02-non-transfer-sts-checkpoint.ipynb'], { cwd: ROOT });
  assert.equal(r.status, 0, 'notebooks/.ipynb_checkpoints/ is not ignored');
});
