/**
 * What AnglE Table 6's notebook needs besides the task files: the word vectors of the GloVe
 * bag-of-words row, and SentEval's own timings to compare ours with.
 *
 * - Word vectors: a file the parameter cell names; else, on this project's machines, the shared
 *   folder's 4k-word subset of GloVe 6B 50d (models/glove-6B-50d-subset/glove50_4k.txt: enough to
 *   run SentEval's bow.py protocol and to match SentEval's golden numbers, not the paper's row,
 *   which averages the 2.2M-word GloVe 840B 300d vectors); else nothing, with what to download.
 * - What the vectors cover: per task, the share of tokens (and of sentences with no known token,
 *   which bow.py embeds as the zero vector) found in the file: why a 4k-word subset cannot give
 *   the paper's GloVe row.
 * - SentEval's timings: the transfer golden set (`golden.json`, format senteval-transfer-golden/1)
 *   records the seconds SentEval itself took per task on these machines (`meta.plain_runtime_s`,
 *   scikit-learn path, bow.py GloVe 50d); found under the golden folder (lib/config.ts
 *   locateGoldenDir) or the shared folder's golden/, absent on a user's machine.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { locateGoldenDir, locateSharedDir } from '../config.js';
import type { WordVectors } from '../eval/transfer/bow.js';
import { prepareTransferTask } from '../eval/transfer/tasks.js';
import { InputError } from '../util/errors.js';

export interface WordVectorsLocation {
  /** The file to read, when one was found. */
  file?: string;
  /** Where it came from, or (no file) what to download and where to point the notebook. */
  note: string;
  /** The shared 4k-word subset (it reproduces SentEval's golden, not the paper's row). */
  subset: boolean;
}

const GLOVE_SUBSET = join('models', 'glove-6B-50d-subset', 'glove50_4k.txt');
const GLOVE_HOWTO =
  "the paper's row averages GloVe 840B 300d vectors (SentEval's bow.py with glove.840B.300d.txt): download glove.840B.300d.zip from https://nlp.stanford.edu/projects/glove/, unzip it and set the parameter cell's GLOVE_FILE to the .txt";

/** The word-vector file of the GloVe row; see the file comment. */
export function locateWordVectors(given?: string): WordVectorsLocation {
  if (given !== undefined && given.trim() !== '') {
    const file = resolve(given);
    if (existsSync(file) && statSync(file).isFile()) return { file, note: 'the parameter cell (GLOVE_FILE)', subset: false };
    return { note: `not found: GLOVE_FILE = ${given} (looked at ${file}); ${GLOVE_HOWTO}`, subset: false };
  }
  const shared = locateSharedDir();
  if (shared && existsSync(join(shared.path, GLOVE_SUBSET))) {
    return { file: join(shared.path, GLOVE_SUBSET), note: `the shared folder (${shared.from}): a 4,196-word subset of GloVe 6B 50d`, subset: true };
  }
  return { note: `no word vectors here; ${GLOVE_HOWTO}`, subset: false };
}

export interface SentevalTimings {
  /** Seconds SentEval took per task (its plain run, scikit-learn path). */
  seconds: Record<string, number>;
  /** The golden.json the numbers come from. */
  file: string;
  /** What SentEval ran (version, vectors), for the table's caption. */
  what: string;
}

const FORMAT = 'senteval-transfer-golden/1';

function readGolden(file: string): SentevalTimings | undefined {
  let g: { format?: string; meta?: { plain_runtime_s?: Record<string, number>; senteval?: { commit?: string }; vectors?: { file?: string } } };
  try {
    g = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`not readable JSON: ${(e as Error).message}`, { file });
  }
  if (g.format !== FORMAT) return undefined;
  const s = g.meta?.plain_runtime_s;
  if (!s || typeof s !== 'object') throw new InputError(`a ${FORMAT} file without meta.plain_runtime_s (SentEval's seconds per task)`, { file });
  return { seconds: s, file, what: `SentEval ${g.meta?.senteval?.commit?.slice(0, 7) ?? ''}, scikit-learn path, bow.py over ${g.meta?.vectors?.file ?? 'GloVe'}` };
}

/** SentEval's own per-task seconds from the transfer golden set, when one is here. */
export function sentevalTimings(goldenDir?: string): SentevalTimings | undefined {
  // ANGLE_GOLDEN_DIR may name one set (the smoke preset points it at the encoder set), so the
  // shared folder's golden/ is searched too.
  const shared = locateSharedDir();
  const roots = [goldenDir, locateGoldenDir()?.path, shared ? join(shared.path, 'golden') : undefined].filter((r): r is string => !!r && existsSync(r));
  for (const root of roots) {
    const direct = join(root, 'golden.json');
    if (existsSync(direct)) {
      const t = readGolden(direct);
      if (t) return t;
    }
    if (!statSync(root).isDirectory()) continue;
    for (const name of readdirSync(root).sort()) {
      const f = join(root, name, 'golden.json');
      if (existsSync(f)) {
        const t = readGolden(f);
        if (t) return t;
      }
    }
  }
  return undefined;
}

export interface VocabularyCoverage {
  task: string;
  sentences: number;
  /** Tokens of all sentences (with repeats). */
  tokens: number;
  /** Tokens that have a vector (exact, case-sensitive match, as bow.py). */
  tokensInVocab: number;
  /** Sentences with no token at all (bow.py embeds them as '.'). */
  emptySentences: number;
  /** Sentences with tokens none of which has a vector (bow.py gives them the zero vector). */
  sentencesWithoutKnownToken: number;
  tokenShare: number;
}

/** Per task, how much of its text the word vectors cover (every split, both MRPC sentences). */
export function vocabularyCoverage(wv: WordVectors, tasks: readonly string[], opts: { dataDir?: string } = {}): VocabularyCoverage[] {
  return tasks.map((task) => {
    const p = prepareTransferTask(task, { dataDir: opts.dataDir });
    const c = { task, sentences: 0, tokens: 0, tokensInVocab: 0, emptySentences: 0, sentencesWithoutKnownToken: 0, tokenShare: 0 };
    for (const split of Object.values(p.splits)) {
      for (const toks of [split.tokens, ...(split.tokensB ? [split.tokensB] : [])]) {
        for (const t of toks) {
          c.sentences++;
          c.tokens += t.length;
          let k = 0;
          for (const w of t) if (wv.vectors.has(w)) k++;
          c.tokensInVocab += k;
          if (t.length === 0) c.emptySentences++;
          else if (k === 0) c.sentencesWithoutKnownToken++;
        }
      }
    }
    c.tokenShare = c.tokens > 0 ? c.tokensInVocab / c.tokens : 0;
    return c;
  });
}
