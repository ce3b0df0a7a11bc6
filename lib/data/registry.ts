/**
 * The one registry of the papers' data sets: for each id its splits (with the number of rows the
 * loader must return), where it lives under the local data root (`dataDir`, default
 * ANGLE_DATA_DIR) and where it comes from on the Hugging Face Hub.
 *
 * Local layout (relative to the data root; the SimCSE/SentEval layout plus GLUE's tsv files):
 *
 * | id              | local files                                                                  |
 * |-----------------|------------------------------------------------------------------------------|
 * | STS12..STS16    | `sts/STS1x-en-test/STS.input.<subset>.txt` + `STS.gs.<subset>.txt`           |
 * | STSBenchmark    | `stsb/sts-{train,dev,test}.csv` (SentEval's tokenised, 7 tab columns)         |
 * | SICKRelatedness | `sick/SICK_{train,trial,test_annotated}.txt`                                  |
 * | STSBSentence1   | `stsb/sts-train.csv` (its sentence1 column)                                  |
 * | MRPC            | `mrpc/msr_paraphrase_{train,test}.txt`, `dev_ids.tsv`, `dev.tsv` (`train.tsv`) |
 * | QNLI, QQP       | `qnli/{train,dev}.tsv`, `qqp/{train,dev}.tsv` (GLUE)                          |
 * | GitHubIssues    | `github-issues/{train,valid,test}.jsonl` (text1, text2, label)               |
 * | Flickr30k       | `flickr30k/{test,dev}_caps.txt` (Karpathy split, 5 captions per image)        |
 * | NLI             | `nli/nli_for_simcse.csv` (sent0, sent1, hard_neg)                             |
 * | Wiki1M          | `wiki1m/wiki1m_for_simcse.txt` (a partial copy: `wiki1m-sample/`)             |
 * | MR ... TREC     | `senteval-transfer/<MR,CR,SUBJ,MPQA,SST/binary,TREC,MRPC>/` (SentEval files)  |
 *
 * The Hub copy of a data set is prepared into a folder with the files its loader reads: the
 * SentEval ones are extracted from `senteval.tar` (same file names as locally); parquet splits
 * become `<split>.jsonl` lines `{"text1","text2","label"}` (label 1 = paraphrase / duplicate /
 * entailment); the Flickr30k csv becomes `{test,dev}_caps.txt`.
 *
 * Provenance: `verified: true` means the repository id and every file name were seen on the Hub
 * (a listing or a page of that repository) or in code that downloads them; `note` says where and
 * what remains inferred. Row counts name their source in `rowsSource`.
 */
import { UnknownNameError } from '../util/errors.js';

export type StsYear = 'STS12' | 'STS13' | 'STS14' | 'STS15' | 'STS16';
export type StsTaskName = StsYear | 'STSBenchmark' | 'SICKRelatedness';
export type BinaryTaskName = 'MRPC' | 'QNLI' | 'QQP' | 'GitHubIssues';
export type TransferTaskName = 'MR' | 'CR' | 'SUBJ' | 'MPQA' | 'SST2' | 'TREC' | 'SentEvalMRPC';
export type CorpusName = 'NLI' | 'Wiki1M' | 'STSBSentence1';
export type DatasetId = StsTaskName | BinaryTaskName | 'Flickr30k' | CorpusName | TransferTaskName;

/** How a Hub file becomes the folder a loader reads. */
export type HubKind =
  /** senteval.tar: extracted; the data set's files sit under `archivePath`. */
  | 'archive'
  /** A single file used as it is from the snapshot. */
  | 'file'
  /** One parquet file per split, converted to `<split>.jsonl` {text1, text2, label}. */
  | 'parquet'
  /** Flickr30k's annotation csv, converted to `<split>_caps.txt`. */
  | 'captions-csv';

/** Parquet columns and which label value means "1" (paraphrase / duplicate / entailment). */
export interface ParquetColumns {
  text1: string;
  text2: string;
  label: string;
  /** The label value that becomes our 1; the other valid value becomes 0. */
  positive: 0 | 1;
}

export interface HubSource {
  repo: string;
  repoType: 'dataset';
  kind: HubKind;
  /** Split -> file in the Hub repository (archive and file kinds: the same file for every split). */
  files: Record<string, string>;
  /** archive kind: the folder inside the extracted archive root that holds this data set. */
  archivePath?: string;
  /** parquet kind: the columns read. */
  columns?: ParquetColumns;
  /** Whether the repo id and file names were checked against the Hub (see `note`). */
  verified: boolean;
  /** How that was checked and what remains inferred. */
  note: string;
}

export interface SplitEntry {
  /** Files of the split inside `<dataDir>/<localDir>/`; all must exist. */
  local: readonly string[];
  /** A second local layout, used when `local` is incomplete. */
  localFallback?: readonly string[];
  /** Files of the split inside the folder the Hub copy is prepared into (default: `local`). */
  prepared?: readonly string[];
  /** The number of rows the loader returns for this split. */
  rows: number;
  /** What one row is. */
  unit: string;
  /** Where `rows` comes from. */
  rowsSource: string;
  note?: string;
}

export interface DatasetEntry {
  id: DatasetId;
  title: string;
  description: string;
  /** Folder under the data root. */
  localDir: string;
  splits: Record<string, SplitEntry>;
  hub: HubSource;
  /** Wiki1M: a folder under the data root that may hold a partial copy (loaded only when asked, marked as a sample). */
  sampleDir?: string;
}

/** SentEval's subsets per STS year (STS13 without SMT, which SentEval does not ship). */
export const STS_SUBSETS: Record<StsYear, readonly string[]> = {
  STS12: ['MSRpar', 'MSRvid', 'SMTeuroparl', 'surprise.OnWN', 'surprise.SMTnews'],
  STS13: ['FNWN', 'headlines', 'OnWN'],
  STS14: ['deft-forum', 'deft-news', 'headlines', 'images', 'OnWN', 'tweet-news'],
  STS15: ['answers-forums', 'answers-students', 'belief', 'headlines', 'images'],
  STS16: ['answer-answer', 'headlines', 'plagiarism', 'postediting', 'question-question'],
};

/**
 * Scored pairs per subset (non-blank gold lines), counted with awk and python3 over the SentEval
 * files; they sum to the papers' totals (STS12 3108, STS13 1500, STS14 3750, STS15 3000, STS16 1186).
 */
export const STS_SUBSET_PAIRS: Record<StsYear, Record<string, number>> = {
  STS12: { MSRpar: 750, MSRvid: 750, SMTeuroparl: 459, 'surprise.OnWN': 750, 'surprise.SMTnews': 399 },
  STS13: { FNWN: 189, headlines: 750, OnWN: 561 },
  STS14: { 'deft-forum': 450, 'deft-news': 300, headlines: 750, images: 750, OnWN: 750, 'tweet-news': 750 },
  STS15: { 'answers-forums': 375, 'answers-students': 750, belief: 375, headlines: 750, images: 750 },
  STS16: { 'answer-answer': 254, headlines: 249, plagiarism: 230, postediting: 244, 'question-question': 209 },
};

export const STS_YEARS: readonly StsYear[] = ['STS12', 'STS13', 'STS14', 'STS15', 'STS16'];
/** The 7 STS tasks the papers report and average (STS12-16 "all", STS-B test, SICK-R test). */
export const STS_TASKS: readonly StsTaskName[] = [...STS_YEARS, 'STSBenchmark', 'SICKRelatedness'];
export const BINARY_TASKS: readonly BinaryTaskName[] = ['MRPC', 'QNLI', 'QQP', 'GitHubIssues'];
export const TRANSFER_TASKS: readonly TransferTaskName[] = ['MR', 'CR', 'SUBJ', 'MPQA', 'SST2', 'TREC', 'SentEvalMRPC'];

const SENTEVAL_REPO = 'princeton-nlp/datasets-for-simcse';
const SIMCSE_NOTE =
  'repo and file seen in the Hub listing of princeton-nlp/datasets-for-simcse (main e145e8b: .gitattributes, ' +
  'nli_for_simcse.csv 49 MB, senteval.tar 89.8 MB, wiki1m_for_simcse.txt 120 MB) and in SimCSE\'s download scripts';

function sentevalHub(archivePath: string): HubSource {
  return {
    repo: SENTEVAL_REPO,
    repoType: 'dataset',
    kind: 'archive',
    files: { '*': 'senteval.tar' },
    archivePath,
    verified: true,
    note:
      `${SIMCSE_NOTE}. Paths inside the archive are inferred, not listed: SimCSE runs \`tar xvf senteval.tar\` inside ` +
      'SentEval/data/downstream/ and SentEval then reads STS/STS1x-en-test, STS/STSBenchmark, SICK, MR, CR, SUBJ, MPQA, ' +
      'SST/binary, TREC and MRPC there; the extractor finds the folder holding STS/ wherever the archive puts it',
  };
}

const GLUE_NOTE =
  'nyu-mll/glue: mrpc/{train,validation,test}-00000-of-00001.parquet seen in the repo tree (commit "Add mrpc data files"); ' +
  'qqp/{train,validation}- and qnli/{train,validation}-00000-of-00001.parquet seen in code that downloads them with ' +
  'hf_hub_download; splits and label names from the GLUE dataset card (mrpc: not_equivalent, equivalent; qqp: ' +
  'not_duplicate, duplicate; qnli: entailment, not_entailment). Compression: written by the datasets library ' +
  '(pyarrow default snappy, which hyparquet reads); another codec is reported by name';

function glueHub(config: string, splits: Record<string, string>, columns: ParquetColumns): HubSource {
  const files: Record<string, string> = {};
  for (const [ours, theirs] of Object.entries(splits)) files[ours] = `${config}/${theirs}-00000-of-00001.parquet`;
  return { repo: 'nyu-mll/glue', repoType: 'dataset', kind: 'parquet', files, columns, verified: true, note: GLUE_NOTE };
}

function sentevalSplit(files: readonly string[], rows: number, unit: string, rowsSource: string, note?: string): SplitEntry {
  return { local: files, rows, unit, rowsSource, ...(note ? { note } : {}) };
}

function stsYearEntry(year: StsYear): DatasetEntry {
  const files = STS_SUBSETS[year].flatMap((s) => [`STS.input.${s}.txt`, `STS.gs.${s}.txt`]);
  const rows = Object.values(STS_SUBSET_PAIRS[year]).reduce((a, b) => a + b, 0);
  return {
    id: year,
    title: `SemEval ${year.replace('STS', '20')} STS (English test)`,
    description: `SemEval ${year} English STS test subsets as shipped with SentEval (Moses-tokenised, lowercased); pairs with a blank gold line are skipped`,
    localDir: `sts/${year}-en-test`,
    splits: {
      test: sentevalSplit(files, rows, 'scored pairs', 'sum of the subsets counted in the SentEval files (papers: STS12 3108, STS13 1500, STS14 3750, STS15 3000, STS16 1186)',
        year === 'STS13' ? 'no SMT subset (not redistributable; SentEval leaves it out)' : undefined),
    },
    hub: sentevalHub(`STS/${year}-en-test`),
  };
}

function transferEntry(id: TransferTaskName, title: string, description: string, dir: string, archivePath: string, splits: Record<string, SplitEntry>): DatasetEntry {
  return { id, title, description, localDir: `senteval-transfer/${dir}`, splits, hub: sentevalHub(archivePath) };
}

const SENTEVAL_COUNT = 'lines of the SentEval files (SentEval paper Table 1 sizes)';

export const DATASETS: Record<DatasetId, DatasetEntry> = {
  STS12: stsYearEntry('STS12'),
  STS13: stsYearEntry('STS13'),
  STS14: stsYearEntry('STS14'),
  STS15: stsYearEntry('STS15'),
  STS16: stsYearEntry('STS16'),
  STSBenchmark: {
    id: 'STSBenchmark',
    title: 'STS Benchmark',
    description: "STS Benchmark in SentEval's tokenised, lowercased form (column 5 = score, 6/7 = sentences, no header)",
    localDir: 'stsb',
    splits: {
      train: sentevalSplit(['sts-train.csv'], 5749, 'scored pairs', 'STS-B release (5749 / 1500 / 1379)'),
      dev: sentevalSplit(['sts-dev.csv'], 1500, 'scored pairs', 'STS-B release (5749 / 1500 / 1379)'),
      test: sentevalSplit(['sts-test.csv'], 1379, 'scored pairs', 'STS-B release (5749 / 1500 / 1379)'),
    },
    hub: sentevalHub('STS/STSBenchmark'),
  },
  SICKRelatedness: {
    id: 'SICKRelatedness',
    title: 'SICK relatedness (SICK-R)',
    description: 'SICK 2014 relatedness in SentEval\'s tokenised form (header line; columns 2/3 = sentences, 4 = score); dev is the trial file',
    localDir: 'sick',
    splits: {
      train: sentevalSplit(['SICK_train.txt'], 4500, 'scored pairs', 'SICK release (4500 / 500 / 4927)'),
      dev: sentevalSplit(['SICK_trial.txt'], 500, 'scored pairs', 'SICK release (4500 / 500 / 4927)'),
      test: sentevalSplit(['SICK_test_annotated.txt'], 4927, 'scored pairs', 'SICK release (4500 / 500 / 4927)', 'this file has CRLF line ends'),
    },
    hub: sentevalHub('SICK'),
  },
  STSBSentence1: {
    id: 'STSBSentence1',
    title: 'STS-B train sentence1 (domain corpus)',
    description:
      "The sentence1 texts of STS-B train in file order: the unlabelled in-domain texts an LLM is asked to write synonym/antonym sentences for (AnglE Table 5). SentEval's copy is tokenised and lowercased",
    localDir: 'stsb',
    splits: { train: sentevalSplit(['sts-train.csv'], 5749, 'texts', 'one per STS-B train pair') },
    hub: sentevalHub('STS/STSBenchmark'),
  },
  MRPC: {
    id: 'MRPC',
    title: 'Microsoft Research Paraphrase Corpus (GLUE MRPC)',
    description:
      "GLUE MRPC: train/dev as GLUE's download script builds them (msr_paraphrase_train.txt split by dev_ids.tsv), test = the labelled msr_paraphrase_test.txt (GLUE's test.tsv has no labels)",
    localDir: 'mrpc',
    splits: {
      train: {
        local: ['msr_paraphrase_train.txt', 'dev_ids.tsv'],
        localFallback: ['train.tsv'],
        prepared: ['train.jsonl'],
        rows: 3668,
        unit: 'pairs',
        rowsSource: 'GLUE MRPC train (HF glue card: 3668)',
        note:
          "built from msr_paraphrase_train.txt minus the pairs in dev_ids.tsv, as GLUE's download script does (3668); a local train.tsv is read only when those files are absent (the copy in shared/data has 3667 rows: pair 2750203/2750153 is missing, so it fails the size check)",
      },
      dev: { local: ['dev.tsv'], prepared: ['dev.jsonl'], rows: 408, unit: 'pairs', rowsSource: 'GLUE MRPC validation (HF glue card: 408)' },
      test: { local: ['msr_paraphrase_test.txt'], prepared: ['test.jsonl'], rows: 1725, unit: 'pairs', rowsSource: 'GLUE MRPC test, labelled (HF glue card: 1725)' },
    },
    hub: glueHub('mrpc', { train: 'train', dev: 'validation', test: 'test' }, { text1: 'sentence1', text2: 'sentence2', label: 'label', positive: 1 }),
  },
  QNLI: {
    id: 'QNLI',
    title: 'GLUE QNLI',
    description: 'GLUE QNLI v2 (question, sentence); label 1 = entailment (GLUE tsv: "entailment"; Hub parquet: 0)',
    localDir: 'qnli',
    splits: {
      train: { local: ['train.tsv'], prepared: ['train.jsonl'], rows: 104743, unit: 'pairs', rowsSource: 'HF glue card (qnli train 104743)' },
      dev: { local: ['dev.tsv'], prepared: ['dev.jsonl'], rows: 5463, unit: 'pairs', rowsSource: 'HF glue card (qnli validation 5463)' },
    },
    hub: glueHub('qnli', { train: 'train', dev: 'validation' }, { text1: 'question', text2: 'sentence', label: 'label', positive: 0 }),
  },
  QQP: {
    id: 'QQP',
    title: 'GLUE QQP (Quora Question Pairs)',
    description: 'GLUE QQP (question1, question2, is_duplicate); label 1 = duplicate',
    localDir: 'qqp',
    splits: {
      train: { local: ['train.tsv'], prepared: ['train.jsonl'], rows: 363846, unit: 'pairs', rowsSource: 'HF glue card (qqp train 363846)' },
      dev: { local: ['dev.tsv'], prepared: ['dev.jsonl'], rows: 40430, unit: 'pairs', rowsSource: 'HF glue card (qqp validation 40430)' },
    },
    hub: glueHub('qqp', { train: 'train', dev: 'validation' }, { text1: 'question1', text2: 'question2', label: 'is_duplicate', positive: 1 }),
  },
  GitHubIssues: {
    id: 'GitHubIssues',
    title: 'GitHub Issues Similarity (GIS)',
    description: "AnglE's long-text STS set: duplicate GitHub issues (label 1) and non-duplicates (label 0); text1, text2, label. Texts may be empty or hold HTML",
    localDir: 'github-issues',
    splits: {
      train: { local: ['train.jsonl'], rows: 18565, unit: 'pairs', rowsSource: 'AnglE paper Table 1 (9457 positive + 9108 negative); the Hub README lists num_examples per split (test 1548 seen)' },
      valid: { local: ['valid.jsonl'], rows: 1547, unit: 'pairs', rowsSource: 'AnglE paper Table 1 (774 + 773)' },
      test: { local: ['test.jsonl'], rows: 1548, unit: 'pairs', rowsSource: 'AnglE paper Table 1 (807 + 741); Hub README num_examples 1548' },
    },
    hub: {
      repo: 'WhereIsAI/github-issue-similarity',
      repoType: 'dataset',
      kind: 'parquet',
      files: { train: 'data/train-00000-of-00001.parquet', valid: 'data/valid-00000-of-00001.parquet', test: 'data/test-00000-of-00001.parquet' },
      columns: { text1: 'text1', text2: 'text2', label: 'label', positive: 1 },
      verified: true,
      note:
        'Hub tree of data/ lists test/train/valid-00000-of-00001.parquet (config "default"; positive/ holds the positives-only config); ' +
        'columns text1, text2, label from the README features and code that loads it; licence mit on the Hub page',
    },
  },
  Flickr30k: {
    id: 'Flickr30k',
    title: 'Flickr30k captions (Karpathy split)',
    description: 'Flickr30k captions, one per line, 5 consecutive captions per image; test = 1000 images (AnglE §4.5 retrieval)',
    localDir: 'flickr30k',
    splits: {
      test: { local: ['test_caps.txt'], rows: 1000, unit: 'images (5 captions each)', rowsSource: 'Karpathy split: 1000 test images' },
      dev: { local: ['dev_caps.txt'], rows: 1014, unit: 'images (5 captions each)', rowsSource: 'Karpathy split as in f30k_precomp: 1014 val images' },
    },
    hub: {
      repo: 'nlphuji/flickr30k',
      repoType: 'dataset',
      kind: 'captions-csv',
      files: { test: 'flickr_annotations_30k.csv', dev: 'flickr_annotations_30k.csv' },
      verified: true,
      note:
        'flickr_annotations_30k.csv (12.9 MB) seen in the Hub listing; columns raw (JSON list of 5 captions), sentids, split ' +
        "(train/val/test), filename, img_id from the repo's flickr30k.py. Hub captions are untokenised (the local f30k_precomp " +
        'file is tokenised); the order of the test images is the csv order, not checked against f30k_precomp',
    },
  },
  NLI: {
    id: 'NLI',
    title: 'SNLI + MNLI triplets for SimCSE',
    description:
      "SimCSE's supervised NLI data: (sent0, entailment sent1, contradiction hard_neg) per row; AnglE's transfer setting uses it as pairs (sent0, sent1, 1) and (sent0, hard_neg, 0)",
    localDir: 'nli',
    splits: {
      train: {
        local: ['nli_for_simcse.csv'],
        rows: 275601,
        unit: 'triplets',
        rowsSource:
          'the count commonly reported for this file (SimCSE paper: "275k" pairs with hard negatives); not re-counted here because the file is absent: a mismatch names both numbers',
      },
    },
    hub: { repo: SENTEVAL_REPO, repoType: 'dataset', kind: 'file', files: { train: 'nli_for_simcse.csv' }, verified: true, note: `${SIMCSE_NOTE}; columns sent0, sent1, hard_neg from code that reads it` },
  },
  Wiki1M: {
    id: 'Wiki1M',
    title: 'Wiki1M (SimCSE unsupervised corpus)',
    description: "1,000,000 sentences sampled from English Wikipedia, one per line (SimCSE's and SimACE's unsupervised training data)",
    localDir: 'wiki1m',
    sampleDir: 'wiki1m-sample',
    splits: {
      train: { local: ['wiki1m_for_simcse.txt'], rows: 1000000, unit: 'sentences', rowsSource: 'SimCSE paper (10^6 sentences from English Wikipedia)' },
    },
    hub: { repo: SENTEVAL_REPO, repoType: 'dataset', kind: 'file', files: { train: 'wiki1m_for_simcse.txt' }, verified: true, note: SIMCSE_NOTE },
  },
  MR: transferEntry('MR', 'MR (movie review polarity)', 'Movie review snippets, positive (1) / negative (0); SentEval reads them as Latin-1', 'MR', 'MR', {
    all: sentevalSplit(['rt-polarity.pos', 'rt-polarity.neg'], 10662, 'sentences', SENTEVAL_COUNT, '10-fold cross-validation over all sentences'),
  }),
  CR: transferEntry('CR', 'CR (customer review polarity)', 'Product review sentences, positive (1) / negative (0); Latin-1; 4 empty lines are kept as SentEval keeps them', 'CR', 'CR', {
    all: sentevalSplit(['custrev.pos', 'custrev.neg'], 3775, 'sentences', SENTEVAL_COUNT, '10-fold cross-validation over all sentences'),
  }),
  SUBJ: transferEntry('SUBJ', 'SUBJ (subjectivity)', 'Objective (1) / subjective (0) sentences, as SentEval labels them; Latin-1', 'SUBJ', 'SUBJ', {
    all: sentevalSplit(['subj.objective', 'subj.subjective'], 10000, 'sentences', SENTEVAL_COUNT, '10-fold cross-validation over all sentences'),
  }),
  MPQA: transferEntry('MPQA', 'MPQA (opinion polarity)', 'Opinion phrases, positive (1) / negative (0); Latin-1; 3 empty lines are kept as SentEval keeps them', 'MPQA', 'MPQA', {
    all: sentevalSplit(['mpqa.pos', 'mpqa.neg'], 10606, 'phrases', SENTEVAL_COUNT, '10-fold cross-validation over all phrases'),
  }),
  SST2: transferEntry('SST2', 'SST-2 (binary sentiment)', 'Stanford Sentiment Treebank, binary: sentence<TAB>label (0/1), UTF-8', 'SST/binary', 'SST/binary', {
    train: sentevalSplit(['sentiment-train'], 67349, 'sentences', SENTEVAL_COUNT),
    dev: sentevalSplit(['sentiment-dev'], 872, 'sentences', SENTEVAL_COUNT),
    test: sentevalSplit(['sentiment-test'], 1821, 'sentences', SENTEVAL_COUNT),
  }),
  TREC: transferEntry('TREC', 'TREC (question type)', 'Questions labelled ABBR/DESC/ENTY/HUM/LOC/NUM (0-5); Latin-1 (train_5500.label is ISO-8859-1, not UTF-8)', 'TREC', 'TREC', {
    train: sentevalSplit(['train_5500.label'], 5452, 'questions', SENTEVAL_COUNT),
    test: sentevalSplit(['TREC_10.label'], 500, 'questions', SENTEVAL_COUNT),
  }),
  SentEvalMRPC: transferEntry('SentEvalMRPC', 'MRPC (SentEval transfer)', "SentEval's MRPC: the MSR paraphrase train (4076) and test (1725) files, pairs with 0/1 quality; the files start with a BOM", 'MRPC', 'MRPC', {
    train: sentevalSplit(['msr_paraphrase_train.txt'], 4076, 'pairs', SENTEVAL_COUNT),
    test: sentevalSplit(['msr_paraphrase_test.txt'], 1725, 'pairs', SENTEVAL_COUNT),
  }),
};

export const DATASET_IDS = Object.keys(DATASETS) as DatasetId[];

/** The registry entry of `id`, or an error listing the known ids. */
export function datasetEntry(id: string): DatasetEntry {
  const e = (DATASETS as Record<string, DatasetEntry | undefined>)[id];
  if (!e) throw new UnknownNameError('data set', id, DATASET_IDS);
  return e;
}

/** The split entry, or an error listing the data set's splits. */
export function splitEntry(id: DatasetId, split: string): SplitEntry {
  const e = datasetEntry(id);
  const s = e.splits[split];
  if (!s) throw new UnknownNameError(`split of ${id}`, split, Object.keys(e.splits));
  return s;
}

/** The Hub file a split needs. */
export function hubFileOf(id: DatasetId, split: string): string {
  const h = datasetEntry(id).hub;
  return h.files[split] ?? h.files['*'];
}
