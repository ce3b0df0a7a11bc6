/**
 * What a sentence-transformers model computes after its transformer, as data: the
 * `SentenceEmbeddingSpec` a loaded sentence-transformers folder carries
 * (`LoadedModel.sentenceEmbedding`) and lib/embed/sentence-transformer-encoder.ts applies.
 *
 * A sentence-transformers folder is a pipeline of modules listed in `modules.json`, run in order
 * on a features dict: `Transformer` (token states; always first), optionally
 * `WeightedLayerPooling` (token states = a weighted mean of layers), `Pooling` (token states ->
 * one vector per text), then any number of `Dense` (act(W x + b)) and `Normalize` (x / ‖x‖₂).
 * The spec keeps that order, each step with its parameters, plus what the Transformer module does
 * to the text before tokenising it (strip, optional lower-casing, optional default prompt) and its
 * truncation length.
 *
 * The vocabulary below (module type names, Pooling config keys and their concatenation order,
 * Dense activation names) is sentence-transformers' own, read from its source
 * (sentence_transformers/models/{Pooling,Dense,Normalize,WeightedLayerPooling,Transformer}.py and
 * SentenceTransformer.save / _load_sbert_model).
 */

/** `modules.json` `type` of each module we read; anything else is refused by name. */
export const ST_MODULE_TYPES = {
  Transformer: 'sentence_transformers.models.Transformer',
  WeightedLayerPooling: 'sentence_transformers.models.WeightedLayerPooling',
  Pooling: 'sentence_transformers.models.Pooling',
  Dense: 'sentence_transformers.models.Dense',
  Normalize: 'sentence_transformers.models.Normalize',
} as const;
export type StModuleName = keyof typeof ST_MODULE_TYPES;

/**
 * Pooling modes in the order Pooling.forward concatenates them (cls, max, mean, mean/√len,
 * weighted mean, last token), each with its `1_Pooling/config.json` key.
 */
export const ST_POOLING_MODES = [
  { mode: 'cls', key: 'pooling_mode_cls_token' },
  { mode: 'max', key: 'pooling_mode_max_tokens' },
  { mode: 'mean', key: 'pooling_mode_mean_tokens' },
  { mode: 'mean_sqrt_len_tokens', key: 'pooling_mode_mean_sqrt_len_tokens' },
  { mode: 'weightedmean', key: 'pooling_mode_weightedmean_tokens' },
  { mode: 'lasttoken', key: 'pooling_mode_lasttoken' },
] as const;
export type StPoolingMode = (typeof ST_POOLING_MODES)[number]['mode'];

/** The keys of a Pooling config as Pooling.get_config_dict writes them (its `config_keys`, in order). */
export const ST_POOLING_CONFIG_KEYS = [
  'word_embedding_dimension',
  'pooling_mode_cls_token',
  'pooling_mode_mean_tokens',
  'pooling_mode_max_tokens',
  'pooling_mode_mean_sqrt_len_tokens',
  'pooling_mode_weightedmean_tokens',
  'pooling_mode_lasttoken',
  'include_prompt',
] as const;

/** Dense `activation_function` as sentence-transformers writes it (`fullname(nn.Tanh())`, ...). */
export const ST_ACTIVATIONS = {
  'torch.nn.modules.activation.Tanh': 'tanh',
  'torch.nn.modules.linear.Identity': 'identity',
} as const;
export type DenseActivation = (typeof ST_ACTIVATIONS)[keyof typeof ST_ACTIVATIONS];

/** Token states = Σ_l w_l · hidden_states[layerStart + l] / Σ_l w_l (WeightedLayerPooling). */
export interface LayerMixStep {
  module: 'WeightedLayerPooling';
  /** First hidden state used (0 = the embeddings' output, HF's hidden_states[0]). */
  layerStart: number;
  /** One weight per hidden state from layerStart to the last layer. */
  weights: Float32Array;
}

/** Token states -> one vector: the enabled modes, concatenated in ST_POOLING_MODES order. */
export interface PoolingStep {
  module: 'Pooling';
  /** The enabled modes, in concatenation order (never empty). */
  modes: StPoolingMode[];
  /** Pooling input width (the transformer's hidden size); the output is modes.length times it. */
  dim: number;
  /** false: the default prompt's tokens are left out of the pooling (the attention still sees them). */
  includePrompt: boolean;
}

/** y = activation(W x + b). */
export interface DenseStep {
  module: 'Dense';
  inFeatures: number;
  outFeatures: number;
  /** Row-major [outFeatures, inFeatures] (PyTorch Linear layout). */
  weight: Float32Array;
  bias?: Float32Array;
  activation: DenseActivation;
}

/** y = x / max(‖x‖₂, 1e-12) (torch.nn.functional.normalize). */
export interface NormalizeStep {
  module: 'Normalize';
}

export type SentenceEmbeddingStep = LayerMixStep | PoolingStep | DenseStep | NormalizeStep;

/**
 * From a transformer's token states to the sentence embedding a sentence-transformers model
 * produces: what `loadModel` returns for a sentence-transformers folder and what
 * `saveSentenceTransformer` writes.
 */
export interface SentenceEmbeddingSpec {
  /** The folder (modules.json) it was read from; absent for a spec built in memory. */
  folder?: string;
  /** Truncation length in tokens, special tokens included (sentence_bert_config.json max_seq_length). */
  maxSeqLength: number;
  /** Lower-case every text before tokenising (sentence_bert_config.json do_lower_case). */
  lowerCase: boolean;
  /** Text put before every input (config_sentence_transformers.json prompts[default_prompt_name]). */
  prompt?: string;
  /** The similarity the model was made for (config_sentence_transformers.json similarity_fn_name). */
  similarity?: string;
  /** After the transformer, in order: [WeightedLayerPooling], Pooling, then Dense / Normalize steps. */
  steps: SentenceEmbeddingStep[];
}

/** Width of the embedding the steps produce from token states of width `hidden`. */
export function sentenceEmbeddingDim(spec: Pick<SentenceEmbeddingSpec, 'steps'>, hidden: number): number {
  let d = hidden;
  for (const s of spec.steps) {
    if (s.module === 'Pooling') d = s.modes.length * s.dim;
    else if (s.module === 'Dense') d = s.outFeatures;
  }
  return d;
}

/** Whether the steps need every layer's hidden states (a WeightedLayerPooling step). */
export function needsAllHiddenStates(spec: Pick<SentenceEmbeddingSpec, 'steps'>): boolean {
  return spec.steps.some((s) => s.module === 'WeightedLayerPooling');
}
