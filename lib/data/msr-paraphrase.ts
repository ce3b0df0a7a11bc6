/**
 * The MSR Paraphrase Corpus files (`msr_paraphrase_{train,test}.txt`, and GLUE's dev.tsv /
 * train.tsv, which have the same columns): a header `Quality  #1 ID  #2 ID  #1 String  #2 String`
 * after a UTF-8 BOM, then one tab-separated pair per line, Quality 1 = paraphrase.
 *
 * GLUE's download script builds MRPC train/dev from msr_paraphrase_train.txt: a pair whose
 * (#1 ID, #2 ID) is listed in dev_ids.tsv goes to dev (408), every other pair to train (3668),
 * in file order. glueMrpcPairs does the same, so the full GLUE train split is available even
 * where a train.tsv copy is incomplete.
 */
import { InputError } from '../util/errors.js';
import type { ScoredPair } from './sts.js';
import { parseBinaryLabel, pyFileLines, pyStrip, readText } from './text.js';
import { readTsvColumns } from './tsv.js';

export interface MsrRow {
  id1: string;
  id2: string;
  pair: ScoredPair;
}

const COLUMNS = ['Quality', '#1 ID', '#2 ID', '#1 String', '#2 String'] as const;
const WHAT = 'MSR paraphrase rows: Quality, #1 ID, #2 ID, #1 String, #2 String';

/** Reads an MSR paraphrase / GLUE MRPC file, columns found by header name. */
export function readMsrParaphrase(file: string): MsrRow[] {
  return readTsvColumns(file, COLUMNS, WHAT).map(({ values: [q, i1, i2, a, b], where }) => ({
    id1: pyStrip(i1),
    id2: pyStrip(i2),
    pair: { a, b, score: parseBinaryLabel(q, where), source: where },
  }));
}

/** GLUE's dev_ids.tsv: one `#1 ID<TAB>#2 ID` per line. */
export function readDevIds(file: string): Set<string> {
  const ids = new Set<string>();
  pyFileLines(readText(file, 'one "#1 ID<TAB>#2 ID" pair per line')).forEach((l, i) => {
    if (pyStrip(l) === '') return;
    const f = pyStrip(l).split('\t');
    if (f.length !== 2 || !/^\d+$/.test(f[0]) || !/^\d+$/.test(f[1])) {
      throw new InputError(`expected two tab-separated numeric sentence ids, found '${l}'`, { file, line: i + 1 });
    }
    ids.add(`${f[0]}\t${f[1]}`);
  });
  return ids;
}

/** GLUE MRPC train or dev pairs from msr_paraphrase_train.txt and dev_ids.tsv. */
export function glueMrpcPairs(trainFile: string, devIdsFile: string, split: 'train' | 'dev'): ScoredPair[] {
  const dev = readDevIds(devIdsFile);
  const rows = readMsrParaphrase(trainFile);
  const inDev = (r: MsrRow) => dev.has(`${r.id1}\t${r.id2}`);
  const found = rows.filter(inDev).length;
  if (found !== dev.size) {
    throw new InputError(`${dev.size} dev pairs listed but ${found} of them are in ${trainFile}: the two files do not belong together`, {
      file: devIdsFile,
    });
  }
  return rows.filter((r) => (split === 'dev' ? inDev(r) : !inDev(r))).map((r) => r.pair);
}
