/**
 * The unlabelled in-domain texts of AnglE's LLM-supervised setting (Table 5, Figure 4): the
 * sentence1 column of STS-B train, in file order, duplicates kept (an LLM writes a synonym and an
 * antonym sentence for each). The SentEval copy's texts are tokenised and lowercased.
 */
import { locateSplit } from './locate.js';
import { checkSize } from './sizes.js';
import { loadStsBenchmarkFile, type LoadOptions } from './sts.js';

export interface DomainCorpus {
  texts: string[];
  file: string;
  where: 'local' | 'cache';
  sizeNote?: string;
}

/** STS-B train sentence1 texts (5749), from `<dataDir>/stsb/sts-train.csv` or the Hub copy. */
export function loadStsbSentence1(opts: LoadOptions = {}): DomainCorpus {
  const loc = locateSplit('STSBSentence1', 'train', opts);
  const texts = loadStsBenchmarkFile(loc.files[0], 'train').pairs.map((p) => p.a);
  const sizeNote = checkSize('STSBSentence1', 'train', texts.length, loc.files[0], opts);
  return { texts, file: loc.files[0], where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
}
