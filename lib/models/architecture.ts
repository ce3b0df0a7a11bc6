/**
 * What the library knows about one architecture, in one entry: everything that dispatches on a
 * config's `model_type` reads it, and nothing else does. The entries are registered in
 * ./architectures.ts (one line each); an entry lives in its architecture's folder
 * (`lib/models/<arch>/architecture.ts`).
 *
 * | field                 | who reads it                                                              |
 * |-----------------------|---------------------------------------------------------------------------|
 * | `modelTypes`, `claimsConfig` | ./auto.ts `loadModel` (which entry builds a config.json)           |
 * | `parseConfig`         | checks a config.json object, refusing an unsupported field by name        |
 * | `load`, `weightFiles`, `ownFolder` | ./auto.ts: a model and tokenizer from a folder                |
 * | `parameterShapes`, `fromConfig` | ./model-from-config.ts (a model from its config, no checkpoint; the rehearsal's models and counts) |
 * | `frozenBase`          | ./auto.ts and ./model-from-config.ts: whether it stores a LoRA run's base in 16/4 bits |
 * | `onnx`                | lib/embed/engines (ONNX Runtime inference), sentence-transformers export  |
 * | `defaultPooling`      | lib/embed encoders and the trainer, where no pooling is given            |
 * | `embeddingWidth`      | prompt routes (an endpoint's vectors are checked against it)              |
 * | `rehearsalTokenizer`  | lib/experiments/rehearsal: counts tokens for a config whose tokenizer is not here |
 * | `rehearsalTokenizerFolds` | scripts/gpu-check: whether a dry run may shrink the config's vocabulary |
 *
 * Upper layers read these fields through ./architectures.ts; lib/models imports nothing above it,
 * so an entry holds data and functions over lib/models' own types only.
 */
import type { FrozenBaseSpec } from './frozen-base.js';
import type { InitialValueOptions } from './initial-weights.js';
import type { OnnxExporter } from './onnx/exporter.js';
import type { Pooling } from './pooling.js';
import type { LoadedModel, TextModel, TextTokenizer } from './types.js';

export interface ArchitectureLoadOptions {
  /** Seed of dropout masks in training mode. */
  dropoutSeed?: number;
  /** Store the linear weights in 16 or 4 bits as they load (only where `frozenBase` is true). */
  frozenBase?: FrozenBaseSpec;
}

export interface ArchitectureFromConfigOptions extends InitialValueOptions, ArchitectureLoadOptions {}

/** A tokenizer that counts a config's tokens in a rehearsal, and what it is (for the rehearsal table). */
export interface RehearsalTokenizer {
  tokenizer: TextTokenizer;
  note: string;
}

export interface Architecture {
  /** Its name: the `architecture` of its models (TextModel), e.g. 'bert'. */
  readonly name: string;
  /** The config.json `model_type`s it answers to. */
  readonly modelTypes: readonly string[];
  /** Whether a config.json without `model_type` is this architecture's (old BERT checkpoints). */
  claimsConfig?(config: Readonly<Record<string, unknown>>): boolean;
  /** The config.json object checked and read; throws InputError naming the field and the file. */
  parseConfig(raw: Readonly<Record<string, unknown>>, file: string): unknown;
  /** A model and its tokenizer from a folder whose config.json the caller read. */
  load(dir: string, config: Record<string, unknown>, configFile: string, weightFiles: string[], opts: ArchitectureLoadOptions): { model: TextModel; tokenizer: TextTokenizer };
  /** Its weight files in a folder, where it reads other formats than ./weight-files.ts (RanNet's TF checkpoint). */
  weightFiles?(dir: string): string[];
  /** A folder layout of its own without config.json (llama2.c's checkpoint .bin + tokenizer.bin). */
  ownFolder?: {
    /** What the layout is, for the error when a folder has neither config.json nor this. */
    readonly description: string;
    matches(dir: string): boolean;
    load(dir: string, opts: ArchitectureLoadOptions): Promise<Omit<LoadedModel, 'id' | 'source' | 'commit'>>;
  };
  /** Its parameters' shapes under the model's names, for a config.json object. */
  parameterShapes(config: Readonly<Record<string, unknown>>): Map<string, number[]>;
  /** A model of a config.json object with initial weights (./initial-weights.ts) and no checkpoint. */
  fromConfig(config: Readonly<Record<string, unknown>>, opts: ArchitectureFromConfigOptions): TextModel;
  /** Whether it can store a frozen base while loading (a decoder's linear layers in 16 or 4 bits). */
  readonly frozenBase?: boolean;
  /** Its ONNX exporter, when ONNX Runtime can run it (./onnx/exporter.ts says what one is). */
  readonly onnx?: OnnxExporter;
  /** The pooling its sentence vectors take when nothing else names one. */
  readonly defaultPooling: Pooling;
  /** The width of its sentence vectors (hidden_size; OPT-350m's word_embed_proj_dim). */
  embeddingWidth(config: Readonly<Record<string, unknown>>): number;
  /** A tokenizer that counts its tokens when the config's own is not on the machine; `sharedModel` finds a folder of the shared models/. */
  rehearsalTokenizer(config: Readonly<Record<string, unknown>>, sharedModel: (name: string) => string | undefined): RehearsalTokenizer;
  /**
   * Whether `rehearsalTokenizer` folds its ids into the config's vocab_size (../tokenizers/folded.ts),
   * so a config shrunk for a dry run may take a small vocabulary; otherwise its ids need the config's own.
   */
  readonly rehearsalTokenizerFolds?: boolean;
}
