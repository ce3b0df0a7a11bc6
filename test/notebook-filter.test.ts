/**
 * The notebook clean filter (scripts/strip-notebook-outputs.mjs) on its own, as git runs it (stdin
 * to stdout), and inside git: in a scratch repository laid out like this one (.gitattributes, the
 * script under scripts/), `ensureNotebookFilter` sets the config line `npm run jupyter` sets, and a
 * notebook with outputs is staged without them while the file on disk keeps them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { packageRoot } from '../lib/util/package-root.js';
import { ensureNotebookFilter, NOTEBOOK_FILTER, NOTEBOOK_FILTER_COMMAND } from '../scripts/notebooks/git-filter.js';

const ROOT = packageRoot();
const SCRIPT = join(ROOT, 'scripts', 'strip-notebook-outputs.mjs');

/** A notebook as Jupyter saves it after running: outputs (a figure's HTML among them), counts, UI metadata. */
function executedNotebook(): Record<string, unknown> {
  return {
    cells: [
      { cell_type: 'markdown', metadata: {}, source: ['# Title ü\n'] },
      {
        cell_type: 'code',
        execution_count: 7,
        id: 'a1',
        metadata: { scrolled: false, collapsed: false, execution: { 'iopub.execute_input': '2026-01-01T00:00:00Z' }, tags: ['keep'] },
        outputs: [
          { name: 'stdout', output_type: 'stream', text: ['training…\n'] },
          { data: { 'text/html': ['<div class="angle-figure">', '<script>Plotly.newPlot()</script>'] }, metadata: {}, output_type: 'display_data' },
        ],
        source: ['const curves = angle.notebook.liveTrainingCurves("x");'],
      },
    ],
    metadata: { kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' }, language_info: { name: 'typescript' }, signature: 'sha256:abc', widgets: {} },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

function strip(input: string): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, [SCRIPT], { input, encoding: 'utf8' });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

describe('strip-notebook-outputs (git clean filter)', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test('removes outputs, execution counts and run-time metadata, keeps everything else; stripping twice changes nothing', () => {
    const input = JSON.stringify(executedNotebook(), null, 1) + '\n';
    const r = strip(input);
    assert.equal(r.status, 0, r.stderr);
    const nb = JSON.parse(r.stdout);
    const cell = nb.cells[1];
    assert.deepEqual(cell.outputs, []);
    assert.equal(cell.execution_count, null);
    assert.deepEqual(cell.metadata, { tags: ['keep'] });
    assert.equal(cell.id, 'a1');
    const original = executedNotebook().cells as Array<{ source: string[] }>;
    assert.deepEqual(cell.source, original[1].source);
    assert.deepEqual(nb.cells[0], original[0]);
    assert.deepEqual(nb.metadata, { kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' }, language_info: { name: 'typescript' } });
    // Jupyter's layout (one-space indent, key order as read) and a final newline.
    assert.ok(r.stdout.startsWith('{\n "cells": [\n  {\n   "cell_type": "markdown"'));
    assert.ok(r.stdout.endsWith('}\n'));
    assert.equal(strip(r.stdout).stdout, r.stdout);
  });

  test("a notebook saved from Deno's kernel is stored with the tslab kernelspec the notebooks are committed with", () => {
    const committed = readFileSync(join(ROOT, 'notebooks', '00-encode-and-compare.ipynb'), 'utf8');
    const nb = JSON.parse(committed);
    nb.metadata = {
      kernelspec: { display_name: 'Deno', language: 'typescript', name: 'deno' },
      language_info: { codemirror_mode: 'typescript', file_extension: '.ts', mimetype: 'text/x.typescript', name: 'typescript', nbconvert_exporter: 'script', pygments_lexer: 'typescript', version: '5.9.2' },
    };
    // Saved from Deno: its metadata; stored: the committed notebook, byte for byte.
    assert.equal(strip(JSON.stringify(nb, null, 1) + '\n').stdout, committed);
    // Another language's kernel is left alone (not a notebook of this project's kind).
    const other = executedNotebook();
    (other.metadata as Record<string, unknown>).kernelspec = { display_name: 'Python 3', language: 'python', name: 'python3' };
    assert.equal(JSON.parse(strip(JSON.stringify(other)).stdout).metadata.kernelspec.name, 'python3');
  });

  test("a notebook without outputs comes back byte for byte (the repository's own notebooks)", () => {
    const text = readFileSync(join(ROOT, 'notebooks', '00-encode-and-compare.ipynb'), 'utf8');
    assert.equal(strip(text).stdout, text);
  });

  test('input that is not a notebook passes through unchanged, with a warning', () => {
    const r = strip('{"not": "a notebook"}');
    assert.equal(r.status, 0);
    assert.equal(r.stdout, '{"not": "a notebook"}');
    assert.match(r.stderr, /strip-notebook-outputs: not a notebook \(no "cells" array\); stored unchanged/);
    assert.equal(strip('<<<<<<< conflict').stdout, '<<<<<<< conflict');
  });

  test('in a clone: the config line is set once, and git stages notebooks without outputs while the file keeps them', (t) => {
    if (spawnSync('git', ['--version']).status !== 0) return t.skip('git is not installed');
    const repo = mkdtempSync(join(tmpdir(), 'angle-filter-'));
    dirs.push(repo);
    const git = (args: string[], cwd = repo) => {
      const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
      assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    git(['init', '-q']);
    mkdirSync(join(repo, 'scripts'));
    mkdirSync(join(repo, 'notebooks', 'sub'), { recursive: true });
    copyFileSync(SCRIPT, join(repo, 'scripts', 'strip-notebook-outputs.mjs'));
    mkdirSync(join(repo, 'scripts', 'notebooks'));
    copyFileSync(join(ROOT, 'scripts', 'notebooks', 'jupyter-json.mjs'), join(repo, 'scripts', 'notebooks', 'jupyter-json.mjs'));
    copyFileSync(join(ROOT, '.gitattributes'), join(repo, '.gitattributes'));

    assert.deepEqual(ensureNotebookFilter(repo), { state: 'configured', command: NOTEBOOK_FILTER_COMMAND });
    assert.equal(git(['config', '--get', `filter.${NOTEBOOK_FILTER}.clean`]).trim(), NOTEBOOK_FILTER_COMMAND);
    assert.deepEqual(ensureNotebookFilter(repo), { state: 'already', command: NOTEBOOK_FILTER_COMMAND });

    const withOutputs = JSON.stringify(executedNotebook(), null, 1) + '\n';
    writeFileSync(join(repo, 'notebooks', 'sub', 'a.ipynb'), withOutputs);
    writeFileSync(join(repo, 'outside.ipynb'), withOutputs);
    // From a subfolder: git runs the filter at the top of the work tree, where its relative path holds.
    git(['add', 'a.ipynb'], join(repo, 'notebooks', 'sub'));
    git(['add', 'outside.ipynb']);
    const staged = JSON.parse(git(['show', ':notebooks/sub/a.ipynb']));
    assert.deepEqual(staged.cells[1].outputs, []);
    assert.equal(staged.cells[1].execution_count, null);
    assert.equal(readFileSync(join(repo, 'notebooks', 'sub', 'a.ipynb'), 'utf8'), withOutputs, 'the file on disk keeps its outputs');
    // The work tree counts as clean: what differs is only what the filter removes.
    assert.equal(git(['status', '--porcelain', 'notebooks']).trim(), 'A  notebooks/sub/a.ipynb');
    // Only notebooks under notebooks/ are filtered (.gitattributes): fixtures elsewhere keep their outputs.
    assert.equal(git(['show', ':outside.ipynb']), withOutputs);
  });

  test('outside a git work tree nothing is configured, and it says why', () => {
    const dir = mkdtempSync(join(tmpdir(), 'angle-nogit-'));
    dirs.push(dir);
    const r = ensureNotebookFilter(dir);
    assert.equal(r.state, 'no-git');
  });
});
