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
import { isShapeOnlyBackend } from '../backend/shape-only/index.js';
import { mulberry32 } from '../util/mulberry32.js';
import { InputError, UnknownNameError } from '../util/errors.js';
import { parseBertConfig } from './bert/config.js';
import { checkFrozenBaseSpec, type FrozenBaseSpec } from './frozen-base.js';
import { BertModel } from './bert/model.js';
import { bertParameterShapes } from './bert/weights.js';
import { parseLlamaConfig } from './llama/config.js';
import { LlamaModel } from './llama/model.js';
import { llamaParameterShapes } from './llama/weights.js';
import { parseOptConfig } from './opt/config.js';
import { OptModel } from './opt/model.js';
import { optParameterShapes } from './opt/weights.js';

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

interface Weight {
  shape: number[];
  data: Float32Array;
}

function sizeOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/**
 * A Map whose values are made when iterated (each one after the previous was consumed), so a
 * model constructor that copies them one by one into tf.Variables never sees them all at once.
 */
class LazyWeights extends Map<string, Weight> {
  constructor(
    private readonly shapes: ReadonlyMap<string, number[]>,
    private readonly make: (name: string, shape: number[]) => Float32Array,
  ) {
    super();
  }

  override get size(): number {
    return this.shapes.size;
  }

  override has(name: string): boolean {
    return this.shapes.has(name);
  }

  override get(name: string): Weight | undefined {
    const shape = this.shapes.get(name);
    return shape ? { shape: shape.slice(), data: this.make(name, shape) } : undefined;
  }

  override *entries(): IterableIterator<[string, Weight]> {
    for (const [name, shape] of this.shapes) yield [name, { shape: shape.slice(), data: this.make(name, shape) }];
  }

  override [Symbol.iterator](): IterableIterator<[string, Weight]> {
    return this.entries();
  }

  override *keys(): IterableIterator<string> {
    yield* this.shapes.keys();
  }

  override *values(): IterableIterator<Weight> {
    for (const [, w] of this.entries()) yield w;
  }

  override forEach(cb: (value: Weight, key: string, map: Map<string, Weight>) => void): void {
    for (const [k, v] of this.entries()) cb(v, k, this);
  }
}

function isNormWeight(name: string): boolean {
  // BERT's LayerNorm, LLaMA's input_layernorm / norm, OPT's self_attn_layer_norm / final_layer_norm.
  return /LayerNorm\.weight$|layernorm\.weight$|layer_norm\.weight$|(^|\.)norm\.weight$/.test(name);
}

function isBias(name: string): boolean {
  return name.endsWith('.bias');
}

/** The values a parameter starts from. */
function valueMaker(opts: ModelFromConfigOptions, std: number): (name: string, shape: number[]) => Float32Array {
  if (isShapeOnlyBackend()) {
    // The shape-only backend ignores values: one zero buffer, viewed at each parameter's size.
    let shared = new Float32Array(0);
    return (_name, shape) => {
      const n = sizeOf(shape);
      if (shared.length < n) shared = new Float32Array(n);
      return shared.subarray(0, n);
    };
  }
  const next = mulberry32(opts.seed ?? 0);
  const uniform = () => (next() + 0.5) / 4294967296;
  return (name, shape) => {
    const data = new Float32Array(sizeOf(shape));
    if (isNormWeight(name)) data.fill(1);
    else if ((opts.init ?? 'normal') === 'normal' && !isBias(name)) {
      // Box-Muller pairs: N(0, std).
      for (let i = 0; i < data.length; i += 2) {
        const r = Math.sqrt(-2 * Math.log(uniform())) * std;
        const a = 2 * Math.PI * uniform();
        data[i] = r * Math.cos(a);
        if (i + 1 < data.length) data[i + 1] = r * Math.sin(a);
      }
    }
    return data;
  };
}

/**
 * The parameter shapes of a config.json object (by `model_type`), as its architecture's weight
 * map expects them; throws InputError for a config the architecture's parser refuses.
 */
export function parameterShapesOfConfig(config: Readonly<Record<string, unknown>>): Map<string, number[]> {
  const raw = { ...config };
  switch (raw.model_type) {
    case 'bert':
      return bertParameterShapes(parseBertConfig(raw, 'config'));
    case 'llama':
      return llamaParameterShapes(parseLlamaConfig(raw, 'config'));
    case 'opt':
      return optParameterShapes(parseOptConfig(raw, 'config'));
    default:
      throw new InputError(`config model_type ${JSON.stringify(raw.model_type)}: modelFromConfig builds 'bert', 'llama' and 'opt'`);
  }
}

/** The number of parameters a config.json object describes (the tied LM head counted once). */
export function parameterCountOfConfig(config: Readonly<Record<string, unknown>>): number {
  let n = 0;
  for (const shape of parameterShapesOfConfig(config).values()) n += sizeOf(shape);
  return n;
}

/**
 * A BERT, LLaMA or OPT model (by `model_type`) built from a config.json object, with no
 * checkpoint. Throws InputError for a config the architecture's parser refuses.
 */
export function modelFromConfig(config: Readonly<Record<string, unknown>>, opts: ModelFromConfigOptions = {}): BertModel | LlamaModel | OptModel {
  if (opts.init !== undefined && opts.init !== 'zeros' && opts.init !== 'normal') throw new UnknownNameError('initialisation', String(opts.init), ['zeros', 'normal']);
  const raw = { ...config };
  const type = raw.model_type;
  // HF's standard deviation of the initial weights: initializer_range (BERT, LLaMA), init_std (OPT).
  const std = typeof raw.initializer_range === 'number' ? raw.initializer_range : typeof raw.init_std === 'number' ? raw.init_std : 0.02;
  const frozenBase = opts.frozenBase ? checkFrozenBaseSpec(opts.frozenBase) : undefined;
  if (type === 'bert') {
    if (frozenBase) throw new InputError(`a ${frozenBase.format} frozen base is for a decoder's linear layers (LLaMA, OPT), not BERT`);
    const cfg = parseBertConfig(raw, 'config');
    return new BertModel(cfg, new LazyWeights(bertParameterShapes(cfg), valueMaker(opts, std)), opts.dropoutSeed ?? 0);
  }
  if (type === 'llama') {
    const cfg = parseLlamaConfig(raw, 'config');
    return new LlamaModel(cfg, new LazyWeights(llamaParameterShapes(cfg), valueMaker(opts, std)), opts.dropoutSeed ?? 0, frozenBase);
  }
  if (type === 'opt') {
    const cfg = parseOptConfig(raw, 'config');
    return new OptModel(cfg, new LazyWeights(optParameterShapes(cfg), valueMaker(opts, std)), opts.dropoutSeed ?? 0, frozenBase);
  }
  throw new InputError(`config model_type ${JSON.stringify(type)}: modelFromConfig builds 'bert', 'llama' and 'opt'`);
}
