/**
 * Reading the sentences out of an LLM's answer to Figure 4's prompt ("generate {size} synonymous
 * sentences … Output:"), and saying for every line that is not taken why not.
 *
 * The answer is split into lines; blank lines are skipped. A line numbered inline ("1. A. 2. B.")
 * is split at its markers when they count up from 1. Each line is cleaned: a leading "Output:"
 * label, a list marker ("1.", "2)", "(3)", "-", "*", "•", "Sentence 2:", "Synonym 1 -"), quotes
 * around the whole sentence, and a double quote without its partner at either end are taken off. Then the first rule that applies decides:
 *
 * | reason          | the line                                                                       |
 * |-----------------|--------------------------------------------------------------------------------|
 * | empty           | (the whole answer) has no text at all                                          |
 * | numbering-only  | is nothing but a list marker or label ("3.", "-", "Output:")                    |
 * | preamble        | introduces the list: ends with ':' or opens with "Sure,", "Certainly!", "Here are … sentences" |
 * | echo            | is the input sentence again (letters and digits, case-insensitive), or repeats the prompt's "Input sentence:" |
 * | too-long        | has more words than `maxWords` (default 2 × the input's words + 10): a rambling continuation, not a sentence |
 * | duplicate       | was already taken from this answer (same comparison as echo)                   |
 * | beyond-size     | comes after `size` sentences were taken (the prompt asked for `size`)          |
 * | truncated       | is the last line of an answer cut off by max_tokens (finish reason 'length'): it may end mid-sentence |
 *
 * Everything else is a generated sentence, in the order of the answer.
 */

export type RejectReason = 'empty' | 'numbering-only' | 'preamble' | 'echo' | 'too-long' | 'duplicate' | 'beyond-size' | 'truncated';

export const REJECT_REASONS: readonly RejectReason[] = ['empty', 'numbering-only', 'preamble', 'echo', 'too-long', 'duplicate', 'beyond-size', 'truncated'];

export interface RejectedLine {
  /** The line as the model wrote it. */
  line: string;
  /** The line after the list marker and quotes were taken off. */
  text: string;
  reason: RejectReason;
}

export interface ParsedAnswer {
  sentences: string[];
  rejects: RejectedLine[];
}

export interface ParseAnswerOptions {
  /** Sentences asked for ({size}). */
  size: number;
  /** The answer's finish reason ('length' marks its last line as possibly cut off). */
  finishReason?: string;
  /** Longest sentence taken, in whitespace-separated words (default 2 × the input's words + 10). */
  maxWords?: number;
}

/** Letters and digits only, lower case, single spaces: what echo and duplicate compare. */
export function comparable(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const wordCount = (s: string) => s.split(/\s+/).filter(Boolean).length;

const OUTPUT_LABEL = /^\s*(?:output|answer)\s*:\s*/i;
/** A list marker followed by white space (so "2.5 km" and "-5 degrees" keep their numbers). */
const LIST_MARKER = /^\s*(?:\(\d{1,3}\)|\d{1,3}[.):\]]|[-*•·–—]|#\d{1,3}[.):]?|(?:sentence|synonym(?:ous sentence)?|antonym(?:ous sentence)?|paraphrase|option)\s*#?\d{0,3}\s*[:.)–-])(?=\s|$)\s*/i;
/** Quotes around the whole sentence, possibly followed by its final punctuation. */
const ENCLOSING_QUOTES = /^["“‘'`«](.*)["”’'`»]([.!?]?)$/s;

/** A line with its label, list marker and enclosing quotes taken off. */
export function cleanLine(line: string): string {
  let t = line.trim().replace(OUTPUT_LABEL, '');
  t = t.replace(LIST_MARKER, '').replace(OUTPUT_LABEL, '').trim();
  const q = ENCLOSING_QUOTES.exec(t);
  if (q) t = (q[1] + q[2]).trim();
  // A double quote left without its partner at either end (a quotation the model opened on another line).
  if ((t.match(/"/g) ?? []).length % 2 === 1) t = t.replace(/^"\s*/, '').replace(/([.!?]?)"$/, '$1').trim();
  return t;
}

/** A line numbered inline ("1. A. 2. B. 3. C.") split at markers that count up from 1; others as they are. */
export function splitInlineNumbering(line: string): string[] {
  const re = /(?:^|\s)(\d{1,2})[.)]\s+/g;
  const marks: number[] = [];
  let expected = 1;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (Number(m[1]) !== expected) continue;
    if (expected === 1 && line.slice(0, m.index).trim() !== '') break;
    marks.push(m.index);
    expected++;
  }
  if (marks.length < 2) return [line];
  return marks.map((start, i) => line.slice(start, marks[i + 1]).trim());
}

function isPreamble(t: string): boolean {
  return /:\s*$/.test(t) || /^(?:sure|certainly|of course|okay|ok)\b[,.!]/i.test(t) || /^here(?:'s| is| are)\b.*\bsentences?\b/i.test(t);
}

/** The generated sentences of one answer, and every other line with its reason. */
export function parseGeneratedSentences(answer: string, input: string, opts: ParseAnswerOptions): ParsedAnswer {
  const size = opts.size;
  const maxWords = opts.maxWords ?? 2 * wordCount(input) + 10;
  const lines = answer
    .split(/\r\n|\r|\n/)
    .flatMap(splitInlineNumbering)
    .filter((l) => l.trim() !== '');
  if (lines.length === 0) return { sentences: [], rejects: [{ line: answer, text: '', reason: 'empty' }] };
  const inputKey = comparable(input);
  const taken = new Set<string>();
  const sentences: string[] = [];
  const rejects: RejectedLine[] = [];
  lines.forEach((line, i) => {
    const text = cleanLine(line);
    const key = comparable(text);
    let reason: RejectReason | undefined;
    if (key === '') reason = 'numbering-only';
    else if (isPreamble(text)) reason = 'preamble';
    else if (key === inputKey || /^input sentence\s*:/i.test(text)) reason = 'echo';
    else if (wordCount(text) > maxWords) reason = 'too-long';
    else if (taken.has(key)) reason = 'duplicate';
    else if (sentences.length >= size) reason = 'beyond-size';
    else if (opts.finishReason === 'length' && i === lines.length - 1) reason = 'truncated';
    if (reason) {
      rejects.push({ line, text, reason });
      return;
    }
    taken.add(key);
    sentences.push(text);
  });
  return { sentences, rejects };
}
