/**
 * A model of a given architecture built from its config alone — no checkpoint file — with zeros
 * or HF's random initialisation, or, on the shape-only backend (lib/backend/shape-only), with no
 * data at all: then a LLaMA-2-13B in fp32 (52 GB) is instantiated in seconds on a machine with
 * 24 GiB, and its training step runs shape by shape (PyTorch's `meta` device, accelerate's
 * `init_empty_weights`).
 *
 *   const model = modelFromConfig(KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf']);
 *   const bert = modelFromConfig(KNOWN_CONFIGS['google-bert/bert-base-uncased'], { init: 'normal', seed: 1 });
 *   const tiny = modelFromConfig({ ...KNOWN_CONFIGS['NousResearch/Llama-2-7b-hf'], num_hidden_layers: 2 });
 *   const opt = modelFromConfig(KNOWN_CONFIGS['facebook/opt-350m']);   // post-LN, project_in/out
 *
 * The weights reach the model constructor one tensor at a time (a lazily filled map), so the host
 * never holds more than one parameter's values; on the shape-only backend every parameter is a
 * view of one shared zero buffer (that backend keeps no values).
 */
import { UnknownNameError, InputError } from '../util/errors.js';
import { architectureOfConfig, frozenBaseArchitectures } from './architectures.js';
import { checkFrozenBaseSpec, type FrozenBaseSpec } from './frozen-base.js';
import { parameterCount } from './initial-weights.js';
import type { TextModel } from './types.js';

/**
 * config.json of `facebook/opt-<size>` (PromptEOL's OPT rows), as the Hub's repositories serve it
 * today (fields that change the computation; checked against the configs of opt-125m, -350m,
 * -1.3b, -2.7b, -6.7b, -13b, -30b and -66b): every size pre-LN with its final LayerNorm but 350m,
 * which is post-LN with word_embed_proj_dim 512 (project_in / project_out); ReLU, biases,
 * vocabulary 50272, 2048 positions, BOS/EOS `</s>` (2), pad 1.
 */
function optConfig(hidden: number, layers: number, heads: number, ffn: number, extra: { word_embed_proj_dim?: number; do_layer_norm_before?: boolean } = {}) {
  return {
    _remove_final_layer_norm: false, activation_dropout: 0.0, activation_function: 'relu', architectures: ['OPTForCausalLM'], attention_dropout: 0.0,
    bos_token_id: 2, do_layer_norm_before: extra.do_layer_norm_before ?? true, dropout: 0.1, enable_bias: true, eos_token_id: 2, ffn_dim: ffn,
    hidden_size: hidden, init_std: 0.02, layer_norm_elementwise_affine: true, layerdrop: 0.0, max_position_embeddings: 2048, model_type: 'opt',
    num_attention_heads: heads, num_hidden_layers: layers, pad_token_id: 1, vocab_size: 50272, word_embed_proj_dim: extra.word_embed_proj_dim ?? hidden,
  } as const;
}

/**
 * config.json of the models the papers train, as the Hub serves them (checked against the
 * repositories' files): BERT-base (AnglE-BERT, SimCSE), LLaMA-2 7B/13B (AnglE-LLaMA, PromptEOL)
 * and OPT 125M–66B (PromptEOL).
 */
export const KNOWN_CONFIGS = {
  'google-bert/bert-base-uncased': {
    architectures: ['BertForMaskedLM'], attention_probs_dropout_prob: 0.1, hidden_act: 'gelu', hidden_dropout_prob: 0.1, hidden_size: 768,
    initializer_range: 0.02, intermediate_size: 3072, layer_norm_eps: 1e-12, max_position_embeddings: 512, model_type: 'bert',
    num_attention_heads: 12, num_hidden_layers: 12, pad_token_id: 0, type_vocab_size: 2, vocab_size: 30522,
  },
  'NousResearch/Llama-2-7b-hf': {
    architectures: ['LlamaForCausalLM'], bos_token_id: 1, eos_token_id: 2, hidden_act: 'silu', hidden_size: 4096, initializer_range: 0.02,
    intermediate_size: 11008, max_position_embeddings: 4096, model_type: 'llama', num_attention_heads: 32, num_hidden_layers: 32,
    num_key_value_heads: 32, pretraining_tp: 1, rms_norm_eps: 1e-5, rope_scaling: null, tie_word_embeddings: false, vocab_size: 32000,
  },
  'NousResearch/Llama-2-13b-hf': {
    architectures: ['LlamaForCausalLM'], bos_token_id: 1, eos_token_id: 2, hidden_act: 'silu', hidden_size: 5120, initializer_range: 0.02,
    intermediate_size: 13824, max_position_embeddings: 4096, model_type: 'llama', num_attention_heads: 40, num_hidden_layers: 40,
    num_key_value_heads: 40, pretraining_tp: 1, rms_norm_eps: 1e-5, rope_scaling: null, tie_word_embeddings: false, vocab_size: 32000,
  },
  'facebook/opt-125m': optConfig(768, 12, 12, 3072),
  'facebook/opt-350m': optConfig(1024, 24, 16, 4096, { word_embed_proj_dim: 512, do_layer_norm_before: false }),
  'facebook/opt-1.3b': optConfig(2048, 24, 32, 8192),
  'facebook/opt-2.7b': optConfig(2560, 32, 32, 10240),
  'facebook/opt-6.7b': optConfig(4096, 32, 32, 16384),
  'facebook/opt-13b': optConfig(5120, 40, 40, 20480),
  'facebook/opt-30b': optConfig(7168, 48, 56, 28672),
  'facebook/opt-66b': optConfig(9216, 64, 72, 36864),
} as const;

export type KnownModel = keyof typeof KNOWN_CONFIGS;

export interface ModelFromConfigOptions {
  /**
   * Initial values: 'zeros', or 'normal' — HF's init: N(0, initializer_range) for linear and
   * embedding weights, zero biases, norm weights 1. Ignored on the shape-only backend. Default 'normal'.
   */
  init?: 'zeros' | 'normal';
  /** Seed of the 'normal' values (default 0). */
  seed?: number;
  /** The model's dropout seed (default 0). */
  dropoutSeed?: number;
  /**
   * A decoder's linear weights stored in 16 or 4 bits as they are made, never as float32
   * (./frozen-base.ts): on the shape-only backend, the frozen base's real sizes from the start.
   */
  frozenBase?: FrozenBaseSpec;
}

/**
 * The parameter shapes of a config.json object (its architecture's entry, ./architectures.ts), as
 * its weight map expects them; throws InputError for a config the architecture's parser refuses.
 */
export function parameterShapesOfConfig(config: Readonly<Record<string, unknown>>): Map<string, number[]> {
  return architectureOfConfig(config).parameterShapes(config);
}

/** The number of parameters a config.json object describes (the tied LM head counted once). */
export function parameterCountOfConfig(config: Readonly<Record<string, unknown>>): number {
  return parameterCount(parameterShapesOfConfig(config));
}

/**
 * A model of any registered architecture (by `model_type`: BERT, LLaMA, OPT, RanNet, ...) built
 * from a config.json object, with no checkpoint (./initial-weights.ts). Throws InputError for a
 * config the architecture's parser refuses.
 */
export function modelFromConfig(config: Readonly<Record<string, unknown>>, opts: ModelFromConfigOptions = {}): TextModel {
  if (opts.init !== undefined && opts.init !== 'zeros' && opts.init !== 'normal') throw new UnknownNameError('initialisation', String(opts.init), ['zeros', 'normal']);
  const arch = architectureOfConfig(config);
  const frozenBase = opts.frozenBase ? checkFrozenBaseSpec(opts.frozenBase) : undefined;
  if (frozenBase && !arch.frozenBase) throw new InputError(`a ${frozenBase.format} frozen base is for a decoder's linear layers (${frozenBaseArchitectures().join(', ')}), not ${arch.name}`);
  return arch.fromConfig(config, { init: opts.init, seed: opts.seed, dropoutSeed: opts.dropoutSeed, frozenBase });
}
