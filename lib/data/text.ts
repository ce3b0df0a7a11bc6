/**
 * Text helpers that reproduce the Python string semantics SentEval relies on, so that the
 * sentences we embed are byte-for-byte the ones the reference embedded.
 *
 * - `str.splitlines()` breaks on more than `\n` (also `\r`, `\v`, `\f`, `\x1c`-`\x1e`, `\x85`,
 *   `\u2028`, `\u2029`); reading a file line by line in text mode (`for line in f`) breaks only
 *   on `\n`, `\r\n` and `\r`.
 * - `str.split()` / `str.strip()` use Python's whitespace, which differs from JS `\s`: Python
 *   counts `\x1c`-`\x1f` and `\x85` as whitespace, JS does not; JS counts `\ufeff` (BOM) as
 *   whitespace, Python does not.
 */
import { readFileSync, statSync } from 'node:fs';
import { InputError } from '../util/errors.js';

/** Characters for which Python's `str.isspace()` is true. */
const PY_WS = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_WS_RUN = new RegExp(`[${PY_WS}]+`, 'u');
const PY_STRIP = new RegExp(`^[${PY_WS}]+|[${PY_WS}]+$`, 'gu');

/** Python `s.split()`: tokens separated by runs of (Python) whitespace, no empty tokens. */
export function pySplitWhitespace(s: string): string[] {
  return s.split(PY_WS_RUN).filter((t) => t.length > 0);
}

/** SentEval's sentence: the file's tokens (`s.split()`) joined by single spaces (SimCSE's batcher). */
export function senteval(s: string): string {
  return pySplitWhitespace(s).join(' ');
}

/** Python `s.strip()`. */
export function pyStrip(s: string): string {
  return s.replace(PY_STRIP, '');
}

/** Python `str.splitlines()` (no trailing empty line after a final line break). */
export function pySplitLines(text: string): string[] {
  const out = text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/u);
  if (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out;
}

/** Lines as Python's text-mode file iteration yields them (universal newlines), terminators removed. */
export function pyFileLines(text: string): string[] {
  const out = text.split(/\r\n|\n|\r/);
  if (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out;
}

export type TextEncoding = 'utf8' | 'latin1';

/**
 * Byte offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or -1 when the whole buffer is valid.
 */
export function firstInvalidUtf8(buf: Uint8Array): number {
  const n = buf.length;
  let i = 0;
  while (i < n) {
    const b = buf[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let len: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) len = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      len = 3;
      if (b === 0xe0) lo = 0xa0; // overlong
      if (b === 0xed) hi = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      len = 4;
      if (b === 0xf0) lo = 0x90; // overlong
      if (b === 0xf4) hi = 0x8f; // above U+10FFFF
    } else return i;
    if (i + len > n) return i;
    const b1 = buf[i + 1];
    if (b1 < lo || b1 > hi) return i;
    for (let k = 2; k < len; k++) {
      const c = buf[i + k];
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += len;
  }
  return -1;
}

/** 1-based line number of byte `offset` (lines end at LF, CRLF or a lone CR, as Python's universal newlines). */
export function lineOfOffset(buf: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < buf.length; i++) {
    if (buf[i] === 0x0a) line++;
    else if (buf[i] === 0x0d && buf[i + 1] !== 0x0a) line++;
  }
  return line;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads a text file, naming the file in the error when it is missing, empty or not in the
 * expected encoding. UTF-8 is decoded strictly (Python's `open(..., encoding='utf-8')` raises on
 * the same bytes); Latin-1 maps every byte, as SentEval's `io.open(..., encoding='latin-1')`.
 */
export function readText(file: string, what: string, encoding: TextEncoding = 'utf8', opts: { allowCutLastLine?: boolean } = {}): string {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new InputError(`expected a file (${what}), found a directory or special file`, { file });
    size = st.size;
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`missing file: expected ${what}`, { file });
  }
  if (size === 0) throw new InputError(`empty file: expected ${what}`, { file, line: 1 });
  const buf = readFileSync(file);
  let text: string;
  if (encoding === 'latin1') {
    text = buf.toString('latin1');
  } else {
    const bad = firstInvalidUtf8(buf);
    if (bad >= 0) {
      const bytes = Array.from(buf.subarray(bad, bad + 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
      throw new InputError(
        `wrong encoding: byte ${bad} (${bytes}) is not valid UTF-8; expected ${what} in UTF-8 ` +
          '(re-encode the file, e.g. iconv -f ISO-8859-1 -t UTF-8, if it is Latin-1)',
        { file, line: lineOfOffset(buf, bad) },
      );
    }
    text = UTF8.decode(buf);
  }
  // Python's utf-8 codec keeps a BOM as U+FEFF (part of the first field); we drop it, because
  // no file in these layouts means it as content (MRPC's files start with one before a header).
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') throw new InputError(`empty file (only whitespace): expected ${what}`, { file, line: 1 });
  // Every file of these data sets ends with a line break; one that does not was cut off mid-line
  // (an interrupted download or copy), and its last row would load silently, shortened.
  if (!opts.allowCutLastLine && !text.endsWith('\n')) {
    const line = text.split('\n').length;
    throw new InputError(`the last line has no line break: the file looks cut off (an interrupted download or copy?); expected ${what}, each line complete`, { file, line });
  }
  return text;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Parses a decimal score the way Python's `float()` would for well-formed files (surrounding
 * whitespace allowed), but refuses what would silently become NaN or infinity, and values
 * outside [min, max].
 */
export function parseScore(
  raw: string,
  where: { file: string; line: number },
  range: { min: number; max: number; what: string },
): number {
  const s = pyStrip(raw);
  if (!DECIMAL.test(s)) {
    throw new InputError(`expected a number for ${range.what} in [${range.min}, ${range.max}], found '${raw}'`, where);
  }
  const v = Number(s);
  if (!Number.isFinite(v) || v < range.min || v > range.max) {
    throw new InputError(`${range.what} ${raw} is out of range: expected a value in [${range.min}, ${range.max}]`, where);
  }
  return v;
}

/** Parses a 0/1 label (also accepts `0.0`/`1.0`, and a map of names such as entailment/not_entailment). */
export function parseBinaryLabel(
  raw: string,
  where: { file: string; line: number },
  names: Record<string, 0 | 1> = {},
): 0 | 1 {
  const s = pyStrip(raw);
  if (s in names) return names[s];
  if (DECIMAL.test(s)) {
    const v = Number(s);
    if (v === 0 || v === 1) return v;
  }
  const expected = ['0', '1', ...Object.keys(names)].join(', ');
  throw new InputError(`expected a binary label (${expected}), found '${raw}'`, where);
}
