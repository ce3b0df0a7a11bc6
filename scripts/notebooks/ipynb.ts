/**
 * Jupyter notebook files (nbformat 4): the types the notebook runner reads and writes, reading
 * with a clear error for a file that is not a notebook, and an atomic write.
 * See https://nbformat.readthedocs.io/en/latest/format_description.html
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../lib/util/atomic-write.js';
import { InputError } from '../../lib/util/errors.js';
import { jupyterNotebookText } from './jupyter-json.mjs';

/** Multi-line text as nbformat stores it: one string, or a list of lines (each keeping its "\n"). */
export type MultilineString = string | string[];

/** A display bundle: MIME type -> value (text, base64 for binary types, JSON for +json types). */
export type MimeBundle = Record<string, unknown>;

export interface StreamOutput {
  output_type: 'stream';
  name: 'stdout' | 'stderr';
  text: MultilineString;
}

export interface DisplayDataOutput {
  output_type: 'display_data';
  data: MimeBundle;
  metadata: Record<string, unknown>;
}

export interface ExecuteResultOutput {
  output_type: 'execute_result';
  execution_count: number | null;
  data: MimeBundle;
  metadata: Record<string, unknown>;
}

export interface ErrorOutput {
  output_type: 'error';
  ename: string;
  evalue: string;
  traceback: string[];
}

export type NotebookOutput = StreamOutput | DisplayDataOutput | ExecuteResultOutput | ErrorOutput;

interface CellBase {
  id?: string;
  metadata: Record<string, unknown>;
  source: MultilineString;
}

export interface CodeCell extends CellBase {
  cell_type: 'code';
  execution_count: number | null;
  outputs: NotebookOutput[];
}

export interface MarkdownCell extends CellBase {
  cell_type: 'markdown';
  attachments?: Record<string, MimeBundle>;
}

export interface RawCell extends CellBase {
  cell_type: 'raw';
  attachments?: Record<string, MimeBundle>;
}

export type NotebookCell = CodeCell | MarkdownCell | RawCell;

export interface Notebook {
  nbformat: 4;
  nbformat_minor: number;
  metadata: Record<string, unknown>;
  cells: NotebookCell[];
}

/** Joins nbformat multi-line text into one string. */
export function joinText(text: MultilineString): string {
  return Array.isArray(text) ? text.join('') : text;
}

/** Splits text into lines that keep their "\n", the way Jupyter writes multi-line strings. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Reads an nbformat 4 notebook; anything else is an InputError naming the file. */
export async function readNotebook(file: string): Promise<Notebook> {
  let nb: unknown;
  try {
    nb = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError('no such notebook', { file });
    throw new InputError(`not a JSON notebook (${(e as Error).message})`, { file });
  }
  const o = nb as Partial<Notebook> | null;
  if (o === null || typeof o !== 'object' || o.nbformat !== 4 || !Array.isArray(o.cells)) {
    throw new InputError('expected an nbformat 4 notebook: an object with "nbformat": 4 and a "cells" list', { file });
  }
  o.cells.forEach((c, i) => {
    const kind = (c as { cell_type?: unknown } | null)?.cell_type;
    if (kind !== 'code' && kind !== 'markdown' && kind !== 'raw') {
      throw new InputError(`cell ${i + 1}: expected cell_type code, markdown or raw, got ${JSON.stringify(kind)}`, { file });
    }
    if (typeof c.source !== 'string' && !Array.isArray(c.source)) {
      throw new InputError(`cell ${i + 1}: "source" must be a string or a list of strings`, { file });
    }
  });
  return { ...o, metadata: o.metadata ?? {}, nbformat_minor: o.nbformat_minor ?? 0 } as Notebook;
}

/**
 * Writes `nb` the way Jupyter does (./jupyter-json.mjs: keys sorted, one-space indent, lines split,
 * trailing newline), atomically: a temporary file beside the target, then a rename, so a reader
 * never sees half a notebook.
 */
export async function writeNotebook(file: string, nb: Notebook): Promise<void> {
  await writeFileAtomic(file, jupyterNotebookText(nb));
}
