/**
 * The one registry of evaluation data sets: where each lives under the local data root
 * (`dataDir`, default ANGLE_DATA_DIR) and where it comes from on the Hugging Face Hub.
 *
 * Local layout (relative to the data root):
 *
 * | id              | local files                                                          |
 * |-----------------|----------------------------------------------------------------------|
 * | STS12..STS16    | `sts/STS1x-en-test/STS.input.<subset>.txt` + `STS.gs.<subset>.txt`   |
 * | STSBenchmark    | `stsb/sts-{train,dev,test}.csv` (SentEval's tokenised, 7 tab columns) |
 * | SICKRelatedness | `sick/SICK_{train,trial,test_annotated}.txt`                          |
 * | MRPC            | `mrpc/msr_paraphrase_test.txt` (labelled; GLUE's test.tsv has no labels) |
 * | QNLI            | `qnli/dev.tsv` (GLUE; test.tsv has no labels)                         |
 * | QQP             | `qqp/dev.tsv` (GLUE; test.tsv has no labels)                          |
 * | GitHubIssues    | `github-issues/{train,valid,test}.jsonl` (text1, text2, label)        |
 * | Flickr30k       | `flickr30k/{test,dev}_caps.txt` (Karpathy split, 5 captions per image) |
 *
 * Hub provenance. `verified: true` means the repository id and the file name were seen on the
 * Hub's file listing; paths inside an archive were inferred (see each note).
 */

export type StsYear = 'STS12' | 'STS13' | 'STS14' | 'STS15' | 'STS16';
export type StsTaskName = StsYear | 'STSBenchmark' | 'SICKRelatedness';
export type BinaryTaskName = 'MRPC' | 'QNLI' | 'QQP' | 'GitHubIssues';
export type DatasetId = StsTaskName | BinaryTaskName | 'Flickr30k';

export interface HubSource {
  repo: string;
  repoType: 'dataset';
  /** File in the Hub repository. */
  file: string;
  /** For archives: the path prefix inside the archive that corresponds to `localDir`. */
  archivePath?: string;
  /** Whether repo and file name were checked against the Hub's listing. */
  verified: boolean;
  note?: string;
}

export interface DatasetEntry {
  id: DatasetId;
  description: string;
  /** Folder under the data root. */
  localDir: string;
  /** Split (or subset) name -> file name(s) inside `localDir`. */
  files: Record<string, string>;
  hub: HubSource;
}

/** SentEval's subsets per STS year (STS13 without SMT, which SentEval does not ship). */
export const STS_SUBSETS: Record<StsYear, readonly string[]> = {
  STS12: ['MSRpar', 'MSRvid', 'SMTeuroparl', 'surprise.OnWN', 'surprise.SMTnews'],
  STS13: ['FNWN', 'headlines', 'OnWN'],
  STS14: ['deft-forum', 'deft-news', 'headlines', 'images', 'OnWN', 'tweet-news'],
  STS15: ['answers-forums', 'answers-students', 'belief', 'headlines', 'images'],
  STS16: ['answer-answer', 'headlines', 'plagiarism', 'postediting', 'question-question'],
};

export const STS_YEARS: readonly StsYear[] = ['STS12', 'STS13', 'STS14', 'STS15', 'STS16'];
/** The 7 STS tasks the papers report and average (STS12-16 "all", STS-B test, SICK-R test). */
export const STS_TASKS: readonly StsTaskName[] = [...STS_YEARS, 'STSBenchmark', 'SICKRelatedness'];
export const BINARY_TASKS: readonly BinaryTaskName[] = ['MRPC', 'QNLI', 'QQP', 'GitHubIssues'];

const SENTEVAL_HUB = (archivePath: string): HubSource => ({
  repo: 'princeton-nlp/datasets-for-simcse',
  repoType: 'dataset',
  file: 'senteval.tar',
  archivePath,
  verified: true,
  note:
    'archive path inferred (not listed): SimCSE runs `tar xvf senteval.tar` inside SentEval/data/downstream/ and ' +
    'SentEval reads downstream/STS/STS1x-en-test, downstream/STS/STSBenchmark, downstream/SICK',
});

function stsYearEntry(year: StsYear): DatasetEntry {
  const files: Record<string, string> = {};
  for (const s of STS_SUBSETS[year]) files[s] = `STS.input.${s}.txt|STS.gs.${s}.txt`;
  return {
    id: year,
    description: `SemEval ${year} English STS test subsets as shipped with SentEval (Moses-tokenised)`,
    localDir: `sts/${year}-en-test`,
    files,
    hub: SENTEVAL_HUB(`STS/${year}-en-test`),
  };
}

export const DATASETS: Record<DatasetId, DatasetEntry> = {
  STS12: stsYearEntry('STS12'),
  STS13: stsYearEntry('STS13'),
  STS14: stsYearEntry('STS14'),
  STS15: stsYearEntry('STS15'),
  STS16: stsYearEntry('STS16'),
  STSBenchmark: {
    id: 'STSBenchmark',
    description: "STS Benchmark in SentEval's tokenised form (columns 4 = score, 5/6 = sentences)",
    localDir: 'stsb',
    files: { train: 'sts-train.csv', dev: 'sts-dev.csv', test: 'sts-test.csv' },
    hub: SENTEVAL_HUB('STS/STSBenchmark'),
  },
  SICKRelatedness: {
    id: 'SICKRelatedness',
    description: 'SICK relatedness (header line; columns 1/2 = sentences, 3 = score); dev is the trial file',
    localDir: 'sick',
    files: { train: 'SICK_train.txt', dev: 'SICK_trial.txt', test: 'SICK_test_annotated.txt' },
    hub: SENTEVAL_HUB('SICK'),
  },
  MRPC: {
    id: 'MRPC',
    description: 'Microsoft Research Paraphrase Corpus; labelled test = msr_paraphrase_test.txt (1725 pairs)',
    localDir: 'mrpc',
    files: { test: 'msr_paraphrase_test.txt', dev: 'dev.tsv', train: 'train.tsv' },
    hub: {
      repo: 'nyu-mll/glue',
      repoType: 'dataset',
      file: 'mrpc/test-00000-of-00001.parquet',
      verified: false,
      note: 'unverified file name (assumed to follow the verified qnli/ pattern); the GLUE parquet export keeps the labelled MRPC test split (1725 rows) under config mrpc',
    },
  },
  QNLI: {
    id: 'QNLI',
    description: 'GLUE QNLI v2 validation (5463 pairs; entailment = 1)',
    localDir: 'qnli',
    files: { dev: 'dev.tsv' },
    hub: {
      repo: 'nyu-mll/glue',
      repoType: 'dataset',
      file: 'qnli/validation-00000-of-00001.parquet',
      verified: true,
      note: 'GLUE parquet export (seen in the qnli/ listing); labels there are 0 = entailment, the opposite of our 1 = entailment',
    },
  },
  QQP: {
    id: 'QQP',
    description: 'GLUE QQP validation (is_duplicate as label)',
    localDir: 'qqp',
    files: { dev: 'dev.tsv' },
    hub: {
      repo: 'nyu-mll/glue',
      repoType: 'dataset',
      file: 'qqp/validation-00000-of-00001.parquet',
      verified: false,
      note: 'unverified file name: assumed to follow the verified qnli/ pattern of the same repository',
    },
  },
  GitHubIssues: {
    id: 'GitHubIssues',
    description: "AnglE's GitHub Issues Similarity (GIS) data: text1, text2, binary label",
    localDir: 'github-issues',
    files: { train: 'train.jsonl', valid: 'valid.jsonl', test: 'test.jsonl' },
    hub: {
      repo: 'WhereIsAI/github-issue-similarity',
      repoType: 'dataset',
      file: 'data/test-00000-of-00001.parquet',
      verified: true,
      note: 'Hub ships parquet (data/{train,valid,test}-00000-of-00001.parquet; positive/ holds positives only); the local loader reads a JSON-lines export with the same columns',
    },
  },
  Flickr30k: {
    id: 'Flickr30k',
    description: 'Flickr30k captions, Karpathy split, one caption per line, 5 consecutive captions per image',
    localDir: 'flickr30k',
    files: { test: 'test_caps.txt', dev: 'dev_caps.txt' },
    hub: {
      repo: 'nlphuji/flickr30k',
      repoType: 'dataset',
      file: 'flickr_annotations_30k.csv',
      verified: true,
      note: 'CSV columns raw (JSON list of 5 captions), sentids, split, filename, img_id (column names from its loading script); test_caps.txt = the split=="test" rows\' captions in file order (order not verified against the f30k_precomp file)',
    },
  },
};
