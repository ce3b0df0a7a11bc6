#!/usr/bin/env node
/**
 * A git "clean" filter for Jupyter notebooks, in the spirit of nbstripout: what git stores for a
 * notebook is the notebook without what running it added, so executed outputs (plotly.js alone is
 * about 5 MB) never reach a commit by accident, while the file on disk keeps them.
 *
 * Reads a notebook (nbformat 4 JSON) on stdin and writes it on stdout with, in every code cell,
 * `outputs` emptied and `execution_count` null, and these metadata keys removed: per cell
 * `collapsed`, `scrolled`, `execution`, `ExecuteTime` (set by the UI and by timing extensions);
 * per notebook `signature` (the trust signature of one machine) and `widgets` (widget state).
 * A TypeScript notebook saved from another kernel (Deno's: `npm run jupyter -- --kernel deno`) is
 * stored with the tslab kernelspec and language_info the notebooks are committed with, so that
 * trying the notebook in Deno's kernel does not switch it for everyone. Every other key stays.
 *
 * The output is always written as Jupyter writes a notebook (./notebooks/jupyter-json.mjs: keys
 * sorted, one-space indent, lines split, a final newline), and the committed notebooks are in that
 * form: a notebook run and saved by Jupyter, with no edit, stages as no change; and stripping twice
 * changes nothing (git requires that of a clean filter). Input that is not a notebook is passed
 * through unchanged, with a warning on stderr, so git never loses content because of this filter.
 *
 * Set up (once per clone; `npm run jupyter` does it when it is missing and says so):
 *
 *   git config filter.strip-notebook-outputs.clean "node scripts/strip-notebook-outputs.mjs"
 *
 * `.gitattributes` applies it to every notebook under notebooks/. git runs filters from the top of
 * the work tree, hence the relative path. Plain JavaScript (no tsx): git starts it once per file.
 */
import { readFileSync } from 'node:fs';
import { jupyterNotebookText } from './notebooks/jupyter-json.mjs';

const CELL_METADATA = ['collapsed', 'scrolled', 'execution', 'ExecuteTime'];
const NOTEBOOK_METADATA = ['signature', 'widgets'];
/** The kernel the committed notebooks name (scripts/notebooks/kernels.ts, tslab) and the language_info they carry. */
const TSLAB_KERNELSPEC = { display_name: 'TypeScript', language: 'typescript', name: 'tslab' };
const TSLAB_LANGUAGE_INFO = { file_extension: '.ts', mimetype: 'text/typescript', name: 'typescript' };

/** Removes what running the notebook added; returns whether anything was removed. */
function stripNotebook(nb) {
  let changed = false;
  const drop = (obj, keys) => {
    if (obj === null || typeof obj !== 'object') return;
    for (const k of keys) {
      if (k in obj) {
        delete obj[k];
        changed = true;
      }
    }
  };
  drop(nb.metadata, NOTEBOOK_METADATA);
  const spec = nb.metadata?.kernelspec;
  if (spec && typeof spec === 'object' && spec.language === 'typescript' && spec.name !== TSLAB_KERNELSPEC.name) {
    nb.metadata.kernelspec = { ...TSLAB_KERNELSPEC };
    nb.metadata.language_info = { ...TSLAB_LANGUAGE_INFO };
    changed = true;
  }
  for (const cell of nb.cells) {
    drop(cell.metadata, CELL_METADATA);
    if (cell.cell_type !== 'code') continue;
    if (!Array.isArray(cell.outputs) || cell.outputs.length > 0) {
      cell.outputs = [];
      changed = true;
    }
    if (cell.execution_count !== null) {
      cell.execution_count = null;
      changed = true;
    }
  }
  return changed;
}

/** The stripped notebook as Jupyter writes it, or `text` itself when it is not a notebook. */
function stripNotebookText(text, warn = () => {}) {
  let nb;
  try {
    nb = JSON.parse(text);
  } catch (e) {
    warn(`not JSON (${e.message}); stored unchanged`);
    return text;
  }
  if (nb === null || typeof nb !== 'object' || !Array.isArray(nb.cells)) {
    warn('not a notebook (no "cells" array); stored unchanged');
    return text;
  }
  stripNotebook(nb);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const out = jupyterNotebookText(nb);
  return eol === '\n' ? out : out.replace(/\n/g, '\r\n');
}

function main(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(
      'usage: node scripts/strip-notebook-outputs.mjs < notebook.ipynb > stripped.ipynb\n' +
        'A git clean filter: writes the notebook without outputs, execution counts and run-time metadata.\n' +
        'Setup: git config filter.strip-notebook-outputs.clean "node scripts/strip-notebook-outputs.mjs"\n',
    );
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`strip-notebook-outputs: unexpected argument '${argv[0]}': the notebook comes on stdin (see --help)\n`);
    return 2;
  }
  const text = readFileSync(0, 'utf8');
  process.stdout.write(stripNotebookText(text, (m) => process.stderr.write(`strip-notebook-outputs: ${m}\n`)));
  return 0;
}

process.exitCode = main(process.argv.slice(2));
