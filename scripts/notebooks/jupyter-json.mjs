/**
 * A notebook as Jupyter writes it to disk, byte for byte, so that a notebook saved by Jupyter
 * (Notebook 6/7, JupyterLab: all save through nbformat) and the committed file differ only in what
 * running it added — which the git clean filter (../strip-notebook-outputs.mjs) removes.
 *
 * nbformat 5 (`nbformat.write`, v4/nbjson.py): multi-line strings split into lists of lines
 * (Python's `str.splitlines(True)`: cell sources, stream text, text/* and a few other MIME
 * values, attachments), transient keys dropped (metadata `orig_nbformat`, `orig_nbformat_minor`,
 * `signature`; cell metadata `trusted`), then `json.dumps(nb, sort_keys=True, indent=1,
 * separators=(',', ': '), ensure_ascii=False)` and a final newline.
 *
 * Where this can differ from Python: floats (Python writes 1e-05 where JavaScript writes 0.00001;
 * notebooks here hold none outside outputs) and lone UTF-16 surrogates (which Python cannot
 * write as UTF-8 at all). Keys sort by UTF-16 code unit, Python by code point: the same for every
 * key below U+10000.
 *
 * Plain JavaScript (no tsx), because git runs the clean filter with plain `node`.
 */

/** Python's line boundaries for str.splitlines. */
const LINE_END = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/g;

/** Python's `s.splitlines(True)`: the lines of `s`, each with its line ending. */
export function splitLinesAsPython(s) {
  const out = [];
  let from = 0;
  for (const m of s.matchAll(LINE_END)) {
    const end = m.index + m[0].length;
    out.push(s.slice(from, end));
    from = end;
  }
  if (from < s.length) out.push(s.slice(from));
  return out;
}

/** MIME types nbformat splits besides text/*. */
const SPLIT_MIMES = new Set(['application/javascript', 'image/svg+xml']);

function splitMimeBundle(data) {
  if (data === null || typeof data !== 'object') return;
  for (const [k, v] of Object.entries(data)) if (typeof v === 'string' && (k.startsWith('text/') || SPLIT_MIMES.has(k))) data[k] = splitLinesAsPython(v);
}

/** nbformat's split_lines and strip_transient, in place. */
function normalise(nb) {
  if (nb.metadata && typeof nb.metadata === 'object') for (const k of ['orig_nbformat', 'orig_nbformat_minor', 'signature']) delete nb.metadata[k];
  for (const cell of nb.cells) {
    if (cell === null || typeof cell !== 'object') continue;
    if (typeof cell.source === 'string') cell.source = splitLinesAsPython(cell.source);
    if (cell.attachments && typeof cell.attachments === 'object') for (const a of Object.values(cell.attachments)) splitMimeBundle(a);
    if (cell.metadata && typeof cell.metadata === 'object') delete cell.metadata.trusted;
    if (cell.cell_type !== 'code' || !Array.isArray(cell.outputs)) continue;
    for (const o of cell.outputs) {
      if (o === null || typeof o !== 'object') continue;
      if (o.output_type === 'execute_result' || o.output_type === 'display_data') splitMimeBundle(o.data);
      else if (o.output_type === 'stream' && typeof o.text === 'string') o.text = splitLinesAsPython(o.text);
    }
  }
  return nb;
}

/**
 * Python's json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False) (see the file comment).
 * Written out rather than JSON.stringify with sorted keys: JavaScript objects put integer-like
 * keys ("0", "10") first whatever the insertion order, Python sorts them as strings.
 */
function dumps(value, depth) {
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const pad = ' '.repeat(depth + 1);
    return `[\n${value.map((v) => pad + dumps(v, depth + 1)).join(',\n')}\n${' '.repeat(depth)}]`;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    if (keys.length === 0) return '{}';
    const pad = ' '.repeat(depth + 1);
    return `{\n${keys.map((k) => `${pad}${JSON.stringify(k)}: ${dumps(value[k], depth + 1)}`).join(',\n')}\n${' '.repeat(depth)}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The text Jupyter writes for notebook `nb` (a parsed nbformat 4 notebook; not modified). */
export function jupyterNotebookText(nb) {
  return `${dumps(normalise(structuredClone(nb)), 0)}\n`;
}
