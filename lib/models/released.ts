/**
 * The released checkpoints AnglE Table 2 is checked against (evaluated, not trained), as data: the
 * Hub id, the files the repository holds, where loadable (safetensors) weights and a tokenizer.json
 * are, how the authors embed with it, which rows of which paper versions it is compared with, what
 * the authors report for it elsewhere, and how each fact was verified. ./load-released.ts turns an
 * entry into a loaded model.
 *
 * The Hub itself cannot be reached from the machine this was written on; every file list below was
 * read from stored copies of the Hub's pages ("tree" listings and file views at the commits named),
 * the AnglE repository's git history (SeanLee97/AnglE) and SimCSE's README/evaluation.py. The
 * registry test (test/released-checkpoints.test.ts) checks the entries' consistency, not the Hub.
 */
import { UnknownNameError } from '../util/errors.js';

export type ReleasedKind = 'bert' | 'sentence-transformers' | 'lora-adapter';

/** A row of AnglE Table 2 in one paper version (lib/paper: file, group, label without its markers). */
export interface Table2RowRef {
  file: string;
  group: 'Unsupervised Models' | 'Supervised Models';
  row: string;
}

export interface ReleasedCheckpoint {
  id: string;
  title: string;
  kind: ReleasedKind;
  /** The files of the repository (main unless said otherwise), as listed at `filesSeenAt`. */
  files: readonly string[];
  filesSeenAt: string;
  /**
   * The revision whose files load here when main holds only a PyTorch pickle: a Hub pull request
   * branch (refs/pr/N) that adds model.safetensors (the Hub's safetensors conversion bot).
   */
  weightsRevision?: string;
  /** A repository whose tokenizer.json serves this checkpoint (it ships only vocab.txt). */
  tokenizerFrom?: string;
  /** The decoder an adapter belongs on (adapter_config.json base_model_name_or_path). */
  baseModel?: string;
  /** Our pooling (a name of lib/embed/pooling.ts) for the authors' evaluation; absent: a sentence-transformers folder's own pipeline. */
  pooling?: string;
  /** The authors' prompt (decoders): template and text clean-up at evaluation. */
  prompt?: { template: string; prepareText: 'prompteol' | 'none' };
  /** Max tokens at evaluation (default: the model's maximum). */
  maxLength?: number;
  /** Where the pooling and evaluation settings come from. */
  evaluationSource: string;
  paperRows: readonly Table2RowRef[];
  /** Numbers the authors report for this checkpoint outside the paper (× 100: STS12..SICK-R, Avg.). */
  reported?: { source: string; values: readonly number[] };
  /** What a user has to do before it loads here (beyond reaching the Hub). */
  preparation?: string;
  /** How the facts above were checked. */
  verified: string;
}

const F000 = '000_c0fdd0968b088fcd.txt';
const F001 = '001_06941bfad7bf7482.txt';
const F003 = '003_ae373fbfc2de219d.txt';

export const RELEASED_CHECKPOINTS: readonly ReleasedCheckpoint[] = [
  {
    id: 'SeanLee97/angle-bert-base-uncased-nli-en-v1',
    title: 'AnglE-BERT, released (bert-base-uncased trained on MNLI + SNLI)',
    kind: 'bert',
    files: ['.gitattributes', 'README.md', 'added_tokens.json', 'config.json', 'pytorch_model.bin', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json', 'vocab.txt'],
    filesSeenAt: 'main 93b5216 (Hub tree listing); config.json: BertModel, hidden 768, 12 layers',
    weightsRevision: 'refs/pr/1',
    pooling: 'cls_avg',
    evaluationSource:
      "AnglE README at fcb6223: AnglE.from_pretrained(id, pooling_strategy='cls_avg'), i.e. (h[:, 0] + torch.mean(h, dim=1)) / 2; eval.py at ef3379e: SentEval, batch 16 in test mode, max length 512. With angle_emb 0.1.x that mean covers padding: lib/embed/pooling.ts cls_avg_legacy",
    paperRows: [
      { file: F000, group: 'Supervised Models', row: 'AnglE-BERT' },
      { file: F001, group: 'Supervised Models', row: 'Angle-BERT' },
      { file: F003, group: 'Supervised Models', row: 'Angle-BERT' },
    ],
    reported: { source: 'AnglE issue #68 (the author, angle_emb 0.1.1)', values: [75.26, 85.61, 80.64, 86.36, 82.51, 85.64, 80.99, 82.43] },
    preparation: "main has only pytorch_model.bin (a pickle, not read here): the weights come from the Hub's safetensors conversion pull request refs/pr/1 ('Adding `safetensors` variant of this model' by SFconvertbot); or convert once with transformers: AutoModel.from_pretrained(id).save_pretrained(dir, safe_serialization=True)",
    verified:
      "file list: Hub tree of main (93b5216) in a stored page; refs/pr/1: the repo's discussion list names PR #1 'Adding safetensors variant' (its branch's files not seen); pooling: the repo's README code at fcb6223 and eval.py at ef3379e in SeanLee97/AnglE's history; numbers: issue #68",
  },
  {
    id: 'princeton-nlp/sup-simcse-bert-base-uncased',
    title: 'SimCSE-BERT supervised, released (Gao et al. 2021)',
    kind: 'bert',
    files: ['.gitattributes', 'config.json', 'flax_model.msgpack', 'pytorch_model.bin', 'special_tokens_map.json', 'tokenizer_config.json', 'vocab.txt'],
    filesSeenAt: 'refs/pr/3 lists the same plus model.safetensors (SFconvertbot, d9aa2ff); main 707f050 has no safetensors and no tokenizer.json',
    weightsRevision: 'refs/pr/3',
    tokenizerFrom: 'google-bert/bert-base-uncased',
    pooling: 'cls_pooler',
    evaluationSource: "SimCSE evaluation.py `--pooler cls` returns outputs.pooler_output; its README: 'If you use supervised SimCSE, you should use this option'",
    paperRows: [
      { file: F000, group: 'Supervised Models', row: 'SimCSE-BERT' },
      { file: F001, group: 'Supervised Models', row: 'SimCSE-BERT' },
      { file: F003, group: 'Supervised Models', row: 'SimCSE-BERT' },
    ],
    preparation: "no tokenizer.json in the repo: bert-base-uncased's (the same uncased WordPiece vocabulary, vocab.txt 232 kB in both) is used; weights from refs/pr/3 (safetensors)",
    verified: 'Hub tree listings of main (707f050) and refs/pr/3 and refs/pr/5 in stored pages; pooler choice: SimCSE evaluation.py and README (princeton-nlp/SimCSE)',
  },
  {
    id: 'princeton-nlp/unsup-simcse-bert-base-uncased',
    title: 'SimCSE-BERT unsupervised, released (Gao et al. 2021)',
    kind: 'bert',
    files: ['.gitattributes', 'README.md', 'config.json', 'flax_model.msgpack', 'model.safetensors', 'pytorch_model.bin', 'special_tokens_map.json', 'tokenizer_config.json', 'vocab.txt'],
    filesSeenAt: 'refs/pr/5 (SFconvertbot, 99b4eb6: adds model.safetensors); main has the rest',
    weightsRevision: 'refs/pr/5',
    tokenizerFrom: 'google-bert/bert-base-uncased',
    pooling: 'cls',
    evaluationSource: "SimCSE evaluation.py `--pooler cls_before_pooler` = last_hidden[:, 0]; its README: 'If you use unsupervised SimCSE, you should take this option'",
    paperRows: [
      { file: F000, group: 'Unsupervised Models', row: 'SimCSE-BERT' },
      { file: F001, group: 'Unsupervised Models', row: 'SimCSE-BERT' },
      { file: F003, group: 'Unsupervised Models', row: 'SimCSE-BERT' },
    ],
    preparation: "no tokenizer.json in the repo: bert-base-uncased's is used; weights from refs/pr/5 (safetensors)",
    verified: 'Hub tree listing of refs/pr/5 in a stored page; pooler choice: SimCSE evaluation.py and README',
  },
  {
    id: 'sentence-transformers/bert-base-nli-mean-tokens',
    title: 'SBERT-NLI-base, released (Reimers & Gurevych 2019; sentence-transformers folder)',
    kind: 'sentence-transformers',
    files: [
      '.gitattributes',
      '1_Pooling/config.json',
      'README.md',
      'added_tokens.json',
      'config.json',
      'config_sentence_transformers.json',
      'flax_model.msgpack',
      'model.safetensors',
      'modules.json',
      'pytorch_model.bin',
      'sentence_bert_config.json',
      'special_tokens_map.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'vocab.txt',
    ],
    filesSeenAt: 'main c988f08 (Hub tree listing; model.safetensors added by SFconvertbot); 1_Pooling/config.json: mean pooling; sentence_bert_config.json: max_seq_length 128',
    evaluationSource: "the folder's own modules (Transformer, Pooling mean, max length 128): AnglE Table 2's SBERT † row is copied from Reimers & Gurevych (2019), SBERT-NLI-base, this checkpoint",
    paperRows: [
      { file: F000, group: 'Supervised Models', row: 'SBERT' },
      { file: F001, group: 'Supervised Models', row: 'SBERT' },
      { file: F003, group: 'Supervised Models', row: 'SBERT' },
    ],
    verified: "Hub tree listings of main at c988f08 and 2739dcf and the file view of sentence_bert_config.json in stored pages; the 1_Pooling config in the commit that added the sentence-transformers files (2739dcf)",
  },
  {
    id: 'SeanLee97/angle-llama-7b-nli-v2',
    title: 'AnglE-LLaMA-2-7B, released LoRA adapter (v2)',
    kind: 'lora-adapter',
    files: ['.gitattributes', 'README.md', 'adapter_config.json', 'adapter_model.bin'],
    filesSeenAt: 'main af1b73c (Hub tree listing); adapter_config.json at 25c26f4: base NousResearch/Llama-2-7b-hf, r 32, lora_alpha 32, lora_dropout 0.1, target_modules q/k/v/o/gate/up/down_proj, modules_to_save model.leaky_norm.{weight,bias}; adapter_model.bin 320 MB (pickle)',
    baseModel: 'NousResearch/Llama-2-7b-hf',
    pooling: 'last',
    prompt: { template: 'Summarize sentence "{text}" in one word:"', prepareText: 'prompteol' },
    maxLength: 512,
    evaluationSource: "AnglE README at fcb6223 and eval.py: Prompts.A 'Summarize sentence \"{text}\" in one word:\"', last token, PromptEOL's clean-up of each sentence in the SentEval batcher, max length 512, fp16 base weights",
    paperRows: [{ file: F000, group: 'Supervised Models', row: 'AnglE-LLaMA2-7B' }],
    reported: { source: "AnglE examples/NLI/README.md (STS results table): this adapter's row equals 000_'s AnglE-LLaMA2-7B row", values: [79.0, 90.56, 85.79, 89.43, 87.0, 88.97, 80.94, 85.96] },
    preparation:
      "adapter_model.bin is a PyTorch pickle: convert once with PEFT (PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained('NousResearch/Llama-2-7b-hf'), id).save_pretrained(dir, safe_serialization=True)) and drop modules_to_save from the saved adapter_config.json (it names model.leaky_norm, a module LLaMA does not have, so PEFT saves nothing for it; our reader refuses a non-empty list); then point ANGLE_LLAMA_ADAPTER_V2 at dir",
    verified: "Hub tree listing and the adapter_config.json file view (commit 25c26f4) in stored pages; 320 MB = r 32 on all seven projections of 32 layers in fp32 (79.95 M parameters); the README table of SeanLee97/AnglE",
  },
  {
    id: 'SeanLee97/angle-llama-7b-nli-20231027',
    title: 'AnglE-LLaMA-2-7B, released LoRA adapter (2023-10-27)',
    kind: 'lora-adapter',
    files: ['.gitattributes', 'README.md', 'adapter_config.json', 'adapter_model.bin'],
    filesSeenAt: 'main d8e8cab (Hub tree listing): adapter_config.json 525 bytes (contents not seen), adapter_model.bin 320 MB (pickle)',
    baseModel: 'NousResearch/Llama-2-7b-hf',
    pooling: 'last',
    prompt: { template: 'Summarize sentence "{text}" in one word:"', prepareText: 'prompteol' },
    maxLength: 512,
    evaluationSource: 'AnglE README at fcb6223: trained with the script shown there (the recipe angle-llama-nli), evaluated with eval.py --load_kbit 16',
    paperRows: [{ file: F003, group: 'Supervised Models', row: 'Angle-LLaMA2-7B' }],
    reported: { source: "AnglE README at fcb6223 (STS results table): this adapter's row equals 003_'s Angle-LLaMA2-7B row", values: [78.68, 90.58, 85.49, 89.56, 86.91, 88.92, 81.18, 85.9] },
    preparation: 'adapter_model.bin is a PyTorch pickle: convert once with PEFT as for the v2 adapter; then point ANGLE_LLAMA_ADAPTER_20231027 at the folder',
    verified: 'Hub tree listing in a stored page; README of SeanLee97/AnglE at fcb6223 (training command and results table)',
  },
];

/** The released checkpoint with this Hub id. */
export function releasedCheckpoint(id: string): ReleasedCheckpoint {
  const r = RELEASED_CHECKPOINTS.find((c) => c.id === id);
  if (!r) throw new UnknownNameError('released checkpoint', id, RELEASED_CHECKPOINTS.map((c) => c.id));
  return r;
}

/**
 * Table 2 rows no released checkpoint reproduces, and why: 001_'s Angle-LLaMA-2 7B (78.02) comes
 * from a later experimental setup of that version (its table also reports LLaMA-2 avg/max/last and
 * SLLaMA rows), and none of the authors' released adapters report that row's numbers.
 */
export const TABLE2_UNRELEASED_ROWS: ReadonlyArray<Table2RowRef & { why: string }> = [
  { file: F001, group: 'Supervised Models', row: 'Angle-LLaMA-2_7B', why: "no released adapter reports 001_'s numbers (78.02); the released ones match 000_ (v2, 85.96) and 003_ (20231027, 85.90)" },
];
