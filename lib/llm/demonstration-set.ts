/**
 * A set of in-context demonstrations (PromptEOL §3.2): sentence and one-word pairs, each a
 * candidate for the one demonstration a model gets (lib/experiments/icl-demonstration-search.ts
 * chooses it on STS-B dev). Two file layouts are read:
 *
 * - JSON lines, one `{"sentence": "...", "word": "..."}` object a line (other keys are ignored,
 *   blank lines skipped): what ./one-word-labels.ts writes, so a labelled set is recorded as run;
 * - the authors' `icl_examples.txt` (kongds/scaling_sentemb, the demonstration set of the paper's
 *   Appendix A, 300 lines): each line the whole in-context template with `_` for every space,
 *   `This_sentence_:_"<sentence>"_means_in_one_word:"<word>".This_sentence_:_"*sent_0*"_means_in_one_word:"`,
 *   read as evaluation.py reads it (every `_` becomes a space).
 *
 * A bad line is an InputError naming the file and line and what was expected; a pair that
 * appears twice is refused (both lines named), since it would only be evaluated twice.
 */
import { basename } from 'node:path';
import { readText } from '../data/text.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';
import type { Demonstration } from './prompt-template.js';

/** One candidate demonstration and where it comes from (a table of the paper, `<file>:<line>`). */
export interface DemonstrationCandidate {
  demonstration: Demonstration;
  /** Where it comes from, without any path of this machine: "PromptEOL Table 4 (OPT 125M)", "labels.jsonl:12". */
  source: string;
}

const JSONL_EXPECTED = 'one JSON object a line: {"sentence": "<demonstration sentence>", "word": "<its one word>"}';

function checkedText(v: unknown, key: string, where: { file: string; line: number }): string {
  if (typeof v !== 'string') throw new InputError(`"${key}" is ${v === undefined ? 'missing' : `${JSON.stringify(v)} (${v === null ? 'null' : typeof v})`}: expected ${JSONL_EXPECTED}`, where);
  const t = v.trim();
  if (t === '') throw new InputError(`"${key}" is empty: expected ${JSONL_EXPECTED}`, where);
  if (/[\r\n]/.test(t)) throw new InputError(`"${key}" holds a line break; a demonstration goes on one line of the prompt`, where);
  return t;
}

/** Refuses a pair given twice, naming both places. */
function refuseDuplicates(candidates: readonly DemonstrationCandidate[], file: string, lines: readonly number[]): void {
  const seen = new Map<string, number>();
  candidates.forEach((c, i) => {
    const k = JSON.stringify([c.demonstration.text, c.demonstration.word]);
    const first = seen.get(k);
    if (first !== undefined) throw new InputError(`the demonstration ${JSON.stringify(c.demonstration.text)} → ${JSON.stringify(c.demonstration.word)} is also on line ${first}: each pair once`, { file, line: lines[i] });
    seen.set(k, lines[i]);
  });
}

/** The demonstrations of a JSON-lines file (see the file comment). */
export function readDemonstrationsJsonl(file: string): DemonstrationCandidate[] {
  const lines = readText(file, `a JSON-lines demonstration set (${JSONL_EXPECTED})`, 'utf8', { allowCutLastLine: true }).split('\n');
  const out: DemonstrationCandidate[] = [];
  const at: number[] = [];
  const name = basename(file);
  lines.forEach((raw, i) => {
    const line = i + 1;
    const where = { file, line };
    if (raw.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch (e) {
      throw new InputError(`not JSON (${(e as Error).message}): expected ${JSONL_EXPECTED}`, where);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InputError(`a ${Array.isArray(v) ? 'list' : v === null ? 'null' : typeof v}, not an object: expected ${JSONL_EXPECTED}`, where);
    const o = v as Record<string, unknown>;
    out.push({ demonstration: { text: checkedText(o.sentence, 'sentence', where), word: checkedText(o.word, 'word', where) }, source: `${name}:${line}` });
    at.push(line);
  });
  if (out.length === 0) throw new InputError(`no demonstrations (only blank lines): expected ${JSONL_EXPECTED}`, { file, line: 1 });
  refuseDuplicates(out, file, at);
  return out;
}

/** Demonstrations as JSON lines `{"sentence", "word"}` (what `readDemonstrationsJsonl` reads). */
export function demonstrationsJsonl(demonstrations: readonly Demonstration[]): string {
  return demonstrations.map((d) => `${JSON.stringify({ sentence: d.text, word: d.word })}\n`).join('');
}

/** Writes `demonstrationsJsonl(demonstrations)` atomically (a temporary file, then renamed). */
export async function writeDemonstrationsJsonl(file: string, demonstrations: readonly Demonstration[]): Promise<void> {
  if (demonstrations.length === 0) throw new InputError('no demonstrations to write: a demonstration set needs at least one pair', { file });
  await writeFileAtomic(file, demonstrationsJsonl(demonstrations));
}

/** One line of the authors' file, spaces restored: the demonstration, then the template for the input. */
const AUTHORS_LINE = /^This sentence : "(.+)" means in one word:"(.+)"\.This sentence : "\*sent 0\*" means in one word:"$/;
const AUTHORS_EXPECTED = 'This_sentence_:_"<sentence>"_means_in_one_word:"<word>".This_sentence_:_"*sent_0*"_means_in_one_word:" (spaces written as _)';

/** The demonstrations of the authors' `icl_examples.txt` (see the file comment). */
export function readAuthorsIclExamples(file: string): DemonstrationCandidate[] {
  const lines = readText(file, `the authors' in-context examples, one a line: ${AUTHORS_EXPECTED}`, 'utf8', { allowCutLastLine: true }).split('\n');
  const out: DemonstrationCandidate[] = [];
  const at: number[] = [];
  const name = basename(file);
  lines.forEach((raw, i) => {
    // evaluation.py strips the line break only, then turns every '_' into a space.
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const m = AUTHORS_LINE.exec(line.replaceAll('_', ' '));
    if (!m) throw new InputError(`not an in-context template: expected ${AUTHORS_EXPECTED}, found ${JSON.stringify(line.length > 120 ? `${line.slice(0, 117)}…` : line)}`, { file, line: i + 1 });
    out.push({ demonstration: { text: m[1]!, word: m[2]! }, source: `${name}:${i + 1}` });
    at.push(i + 1);
  });
  if (out.length === 0) throw new InputError(`no in-context examples (only blank lines): expected ${AUTHORS_EXPECTED}`, { file, line: 1 });
  refuseDuplicates(out, file, at);
  return out;
}

/**
 * The demonstrations of a file in either layout: `.jsonl` files are JSON lines; any other file
 * whose first non-blank line starts with `This_sentence_` is the authors' layout.
 */
export function readDemonstrationFile(file: string): DemonstrationCandidate[] {
  if (file.endsWith('.jsonl')) return readDemonstrationsJsonl(file);
  const first = readText(file, `a demonstration set: ${JSONL_EXPECTED} (a .jsonl file), or the authors' ${AUTHORS_EXPECTED}`, 'utf8', { allowCutLastLine: true })
    .split('\n')
    .find((l) => l.trim() !== '');
  if (first?.startsWith('This_sentence_')) return readAuthorsIclExamples(file);
  throw new InputError(`not a demonstration set: expected a .jsonl file (${JSONL_EXPECTED}) or the authors' icl_examples.txt layout (${AUTHORS_EXPECTED})`, { file, line: 1 });
}
