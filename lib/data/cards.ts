/**
 * Dataset cards: for each data set of the papers its source, licence, citation, Hub copy and split
 * sizes, in one typed place the notebooks show (`showDatasetCards(['STS12', ...])` in lib/notebook). Split sizes
 * come from the registry (the same numbers the loaders check); licences are as the distributions
 * state them, with "not stated" where they state none.
 */
import type { SimpleTable } from '../util/table.js';
import { DATASET_IDS, datasetEntry, type DatasetId } from './registry.js';

export interface DatasetCardText {
  /** Where the data comes from (creators, original release). */
  source: string;
  licence: string;
  /** Short reference of the work to cite. */
  citation: string;
  /** Which tables / figures of the papers use it. */
  usedIn: string;
}

export interface DatasetCard extends DatasetCardText {
  id: DatasetId;
  title: string;
  description: string;
  hub: string;
  hubVerified: boolean;
  splits: { split: string; rows: number; unit: string; rowsSource: string }[];
}

const SEMEVAL_LICENCE =
  "per subset, as each year's 00-readme.txt / LICENSE files state: e.g. MSRpar under Microsoft Research's MSR Paraphrase licence, " +
  'Stack Exchange subsets (answers-forums, answer-answer, question-question) CC BY-SA 3.0, headlines under the European Media Monitor disclaimer';
const SENTEVAL_CITE = 'Conneau & Kiela (2018), SentEval: An Evaluation Toolkit for Universal Sentence Representations, LREC';
const TRANSFER_LICENCE = 'not stated in the SentEval distribution (research data of the cited authors)';

export const DATASET_CARD_TEXT: Record<DatasetId, DatasetCardText> = {
  STS12: {
    source: 'SemEval-2012 Task 6 test data (MSRpar, MSRvid, SMTeuroparl, OnWN, SMTnews), SentEval copy',
    licence: SEMEVAL_LICENCE,
    citation: 'Agirre et al. (2012), SemEval-2012 Task 6: A Pilot on Semantic Textual Similarity, *SEM',
    usedIn: 'AnglE Table 2 (transfer STS); PromptEOL and SimACE STS tables',
  },
  STS13: {
    source: '*SEM 2013 shared task test data (FNWN, headlines, OnWN; SMT withheld), SentEval copy',
    licence: `${SEMEVAL_LICENCE}; SMT is distributed by the LDC only`,
    citation: 'Agirre et al. (2013), *SEM 2013 shared task: Semantic Textual Similarity, *SEM',
    usedIn: 'AnglE Table 2; PromptEOL and SimACE STS tables',
  },
  STS14: {
    source: 'SemEval-2014 Task 10 English test data (deft-forum, deft-news, headlines, images, OnWN, tweet-news), SentEval copy',
    licence: SEMEVAL_LICENCE,
    citation: 'Agirre et al. (2014), SemEval-2014 Task 10: Multilingual Semantic Textual Similarity, SemEval',
    usedIn: 'AnglE Table 2; PromptEOL and SimACE STS tables',
  },
  STS15: {
    source: 'SemEval-2015 Task 2 English test data (answers-forums, answers-students, belief, headlines, images), SentEval copy',
    licence: SEMEVAL_LICENCE,
    citation: 'Agirre et al. (2015), SemEval-2015 Task 2: Semantic Textual Similarity, English, Spanish and Pilot on Interpretability, SemEval',
    usedIn: 'AnglE Table 2; PromptEOL and SimACE STS tables',
  },
  STS16: {
    source: 'SemEval-2016 Task 1 English test data (answer-answer, headlines, plagiarism, postediting, question-question), SentEval copy',
    licence: SEMEVAL_LICENCE,
    citation: 'Agirre et al. (2016), SemEval-2016 Task 1: Semantic Textual Similarity, Monolingual and Cross-Lingual Evaluation, SemEval',
    usedIn: 'AnglE Table 2; PromptEOL and SimACE STS tables',
  },
  STSBenchmark: {
    source: 'STS Benchmark (2012-2017 STS data: captions, news, forums), SentEval copy',
    licence: 'scores CC BY-SA 4.0; the texts under their sources\' licences (LICENSE.txt of the release)',
    citation: 'Cer et al. (2017), SemEval-2017 Task 1: Semantic Textual Similarity Multilingual and Crosslingual Focused Evaluation, SemEval',
    usedIn: 'AnglE Tables 2-5 and Figures 4-5 (train, dev for checkpoint selection, test); SimACE Figures 3 and 6',
  },
  SICKRelatedness: {
    source: 'SICK (Sentences Involving Compositional Knowledge), SemEval-2014 Task 1, SentEval copy',
    licence: 'CC BY-NC-SA 3.0',
    citation: 'Marelli et al. (2014), A SICK cure for the evaluation of compositional distributional semantic models, LREC',
    usedIn: 'AnglE Table 2 (SICK-R test)',
  },
  STSBSentence1: {
    source: 'STS Benchmark train, column sentence1 (SentEval copy)',
    licence: 'as STS Benchmark',
    citation: 'Cer et al. (2017), SemEval-2017 Task 1, SemEval',
    usedIn: 'AnglE Table 5 and Figure 4 (LLM-supervised learning: the texts the LLM rewrites)',
  },
  MRPC: {
    source: 'Microsoft Research Paraphrase Corpus, GLUE split',
    licence: 'Microsoft Research Paraphrase Corpus licence (research use); the GLUE Hub card says "other"',
    citation: 'Dolan & Brockett (2005), Automatically Constructing a Corpus of Sentential Paraphrases, IWP; Wang et al. (2019), GLUE, ICLR',
    usedIn: 'AnglE Table 3 (non-transfer: train on train, report test)',
  },
  QNLI: {
    source: 'GLUE QNLI v2, question/sentence pairs derived from SQuAD',
    licence: 'SQuAD text CC BY-SA 4.0; the GLUE Hub card says "other"',
    citation: 'Rajpurkar et al. (2016), SQuAD, EMNLP; Wang et al. (2019), GLUE, ICLR',
    usedIn: 'AnglE Table 3 (train on train, report validation)',
  },
  QQP: {
    source: 'Quora Question Pairs, GLUE split',
    licence: "Quora's terms for the original release (non-commercial); the GLUE Hub card says \"other\"",
    citation: 'Iyer, Dandekar & Csernai (2017), First Quora Dataset Release: Question Pairs; Wang et al. (2019), GLUE, ICLR',
    usedIn: 'AnglE Table 3 (train on train, report validation)',
  },
  GitHubIssues: {
    source: 'Duplicate / non-duplicate issues of 55 GitHub projects, collected by the AnglE authors',
    licence: 'MIT (Hub repository)',
    citation: 'Li & Li (2023), AnglE-optimized Text Embeddings, arXiv:2309.12871',
    usedIn: 'AnglE Tables 1 and 3 (long-text STS: train, report test)',
  },
  Flickr30k: {
    source: 'Flickr30k image captions, Karpathy split (test: 1000 images x 5 captions)',
    licence: 'not stated on nlphuji/flickr30k; images under Flickr terms, captions released for research use',
    citation: 'Young et al. (2014), From image descriptions to visual denotations, TACL; Karpathy & Fei-Fei (2015), CVPR (split)',
    usedIn: 'AnglE §4.5 (retrieval: first caption as query, strict top-5 accuracy)',
  },
  NLI: {
    source: 'SNLI + MultiNLI entailment/contradiction triplets prepared by the SimCSE authors',
    licence: 'SNLI CC BY-SA 4.0; MultiNLI as its data description states (mostly OANC, free); none stated on the Hub repository',
    citation: 'Gao, Yao & Chen (2021), SimCSE, EMNLP; Bowman et al. (2015), SNLI, EMNLP; Williams et al. (2018), MultiNLI, NAACL',
    usedIn: 'AnglE Table 2 (transfer setting training); SimCSE-sup baseline; PromptEOL contrastive fine-tuning',
  },
  Wiki1M: {
    source: '10^6 sentences sampled from English Wikipedia by the SimCSE authors',
    licence: 'Wikipedia text: CC BY-SA',
    citation: 'Gao, Yao & Chen (2021), SimCSE, EMNLP',
    usedIn: 'SimACE Table 1 and unsupervised SimCSE baselines',
  },
  MR: { source: 'Movie review snippets (rt-polarity), SentEval copy', licence: TRANSFER_LICENCE, citation: `Pang & Lee (2005), ACL; ${SENTEVAL_CITE}`, usedIn: 'AnglE Table 6 (transfer tasks)' },
  CR: { source: 'Customer product reviews, SentEval copy', licence: TRANSFER_LICENCE, citation: `Hu & Liu (2004), KDD; ${SENTEVAL_CITE}`, usedIn: 'AnglE Table 6' },
  SUBJ: { source: 'Subjectivity data (movie reviews / plot summaries), SentEval copy', licence: TRANSFER_LICENCE, citation: `Pang & Lee (2004), ACL; ${SENTEVAL_CITE}`, usedIn: 'AnglE Table 6' },
  MPQA: { source: 'MPQA opinion polarity phrases, SentEval copy', licence: TRANSFER_LICENCE, citation: `Wiebe, Wilson & Cardie (2005), Language Resources and Evaluation; ${SENTEVAL_CITE}`, usedIn: 'AnglE Table 6' },
  SST2: { source: 'Stanford Sentiment Treebank, binary sentence level, SentEval copy', licence: TRANSFER_LICENCE, citation: `Socher et al. (2013), EMNLP; ${SENTEVAL_CITE}`, usedIn: 'AnglE Table 6' },
  TREC: { source: 'TREC question classification (UIUC), SentEval copy', licence: TRANSFER_LICENCE, citation: `Li & Roth (2002), COLING; ${SENTEVAL_CITE}`, usedIn: 'AnglE Table 6' },
  SentEvalMRPC: { source: 'MSR Paraphrase Corpus as SentEval uses it (train 4076, test 1725)', licence: 'Microsoft Research Paraphrase Corpus licence (research use)', citation: `Dolan & Brockett (2005), IWP; ${SENTEVAL_CITE}`, usedIn: 'AnglE Table 6' },
};

/** The card of one data set. */
export function datasetCard(id: DatasetId): DatasetCard {
  const e = datasetEntry(id);
  const files = [...new Set(Object.values(e.hub.files))];
  return {
    id,
    title: e.title,
    description: e.description,
    hub: `${e.hub.repo}: ${files.join(', ')}${e.hub.archivePath ? ` -> ${e.hub.archivePath}/` : ''}`,
    hubVerified: e.hub.verified,
    splits: Object.entries(e.splits).map(([split, s]) => ({ split, rows: s.rows, unit: s.unit, rowsSource: s.rowsSource })),
    ...DATASET_CARD_TEXT[id],
  };
}

/** The cards as one table (one row per data set), for a notebook or a terminal. */
export function datasetCardsTable(ids: readonly DatasetId[] = DATASET_IDS): SimpleTable {
  return {
    caption: 'Data sets (split sizes are the ones the loaders check)',
    columns: ['data set', 'splits', 'source', 'Hub', 'licence', 'citation', 'used in'],
    rows: ids.map((id) => {
      const c = datasetCard(id);
      const splits = c.splits.map((s) => `${s.split} ${s.rows.toLocaleString('en-US')} ${s.unit}`).join('; ');
      return [`${c.id}: ${c.title}`, splits, c.source, c.hub, c.licence, c.citation, c.usedIn];
    }),
  };
}
