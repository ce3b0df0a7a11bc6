/**
 * The parts of a Hugging Face `LlamaConfig` (config.json, `model_type: llama`) that define the
 * decoder's computation, parsed with errors that name the key and the file. Keys that fix the
 * architecture are required, so a config without `hidden_size` fails instead of silently
 * becoming LLaMA-7B; the others get HF's defaults (rms_norm_eps 1e-6, rope_theta 10000,
 * num_key_value_heads = num_attention_heads, tie_word_embeddings false, attention_dropout 0).
 *
 * Supported: the LLaMA family as `LlamaForCausalLM` defines it with SiLU feed-forward, no biases,
 * and rope_scaling absent, `default` or `linear`. Anything else is refused by name.
 */
import { InputError, UnknownNameError } from '../../util/errors.js';
import { decoderConfigFields } from '../decoder/config-fields.js';

/** config.json model_types this decoder implements. */
export const LLAMA_MODEL_TYPES: readonly string[] = ['llama'];
/** config.json `architectures` entries whose weights this decoder reads. */
export const LLAMA_ARCHITECTURES: readonly string[] = ['LlamaForCausalLM', 'LlamaModel'];
const ROPE_TYPES: readonly string[] = ['default', 'linear'];

export interface LlamaConfig {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  /** Longest sequence (max_position_embeddings; llama2.c's seq_len). */
  maxPositions: number;
  rmsNormEps: number;
  ropeTheta: number;
  /** rope_scaling {type: linear, factor}: positions divided by this (1 = none). */
  ropeLinearScale: number;
  /** The LM head shares the token embedding matrix. */
  tieWordEmbeddings: boolean;
  attentionDropout: number;
  bosTokenId: number | null;
  eosTokenId: number[];
  padTokenId: number | null;
}

const REQUIRED = ['vocab_size', 'hidden_size', 'intermediate_size', 'num_hidden_layers', 'num_attention_heads', 'max_position_embeddings'] as const;

/** Checks a parsed config.json against what this decoder implements and reads its numbers. */
export function parseLlamaConfig(raw: unknown, file = 'config.json'): LlamaConfig {
  const fields = decoderConfigFields(raw, file, { name: 'LLaMA', modelTypes: LLAMA_MODEL_TYPES, architectures: LLAMA_ARCHITECTURES });
  const { raw: c, where, positiveInt, number: num, tokenId } = fields;
  for (const k of REQUIRED) positiveInt(k);
  const act = c.hidden_act ?? 'silu';
  if (act !== 'silu' && act !== 'swish') throw new UnknownNameError('hidden_act', String(act), ['silu'], where);
  for (const k of ['attention_bias', 'mlp_bias']) {
    if (c[k] !== undefined && c[k] !== false) throw new InputError(`'${k}': ${JSON.stringify(c[k])} is not supported (LLaMA's linear layers have no biases; expected false)`, where);
  }
  if (c.pretraining_tp !== undefined && c.pretraining_tp !== 1) {
    throw new InputError(`'pretraining_tp' ${JSON.stringify(c.pretraining_tp)} is not supported (expected 1: the weights are stored unsplit)`, where);
  }
  let ropeLinearScale = 1;
  const rs = c.rope_scaling;
  if (rs !== undefined && rs !== null) {
    if (typeof rs !== 'object' || Array.isArray(rs)) throw new InputError(`'rope_scaling' must be an object or null, found ${JSON.stringify(rs)}`, where);
    const r = rs as Record<string, unknown>;
    const type = String(r.rope_type ?? r.type ?? 'default');
    if (!ROPE_TYPES.includes(type)) throw new UnknownNameError('rope_scaling type', type, ROPE_TYPES, where);
    if (type === 'linear') {
      const f = r.factor;
      if (typeof f !== 'number' || !(f >= 1)) throw new InputError(`'rope_scaling.factor' must be a number >= 1, found ${JSON.stringify(f)}`, where);
      ropeLinearScale = f;
    }
  }
  const hiddenSize = c.hidden_size as number;
  const numHeads = c.num_attention_heads as number;
  const numKvHeads = c.num_key_value_heads === undefined || c.num_key_value_heads === null ? numHeads : positiveInt('num_key_value_heads');
  if (numHeads % numKvHeads !== 0) throw new InputError(`num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`, where);
  let headDim: number;
  if (c.head_dim === undefined || c.head_dim === null) {
    if (hiddenSize % numHeads !== 0) throw new InputError(`hidden_size ${hiddenSize} is not a multiple of num_attention_heads ${numHeads} (and no head_dim is given)`, where);
    headDim = hiddenSize / numHeads;
  } else {
    headDim = positiveInt('head_dim');
  }
  if (headDim % 2 !== 0) throw new InputError(`the head dimension ${headDim} must be even (rotary embeddings rotate pairs)`, where);
  const eosTokenId = fields.tokenIds('eos_token_id', []);
  const tie = c.tie_word_embeddings ?? false;
  if (typeof tie !== 'boolean') throw new InputError(`'tie_word_embeddings' must be true or false, found ${JSON.stringify(tie)}`, where);
  return {
    vocabSize: c.vocab_size as number,
    hiddenSize,
    intermediateSize: c.intermediate_size as number,
    numLayers: c.num_hidden_layers as number,
    numHeads,
    numKvHeads,
    headDim,
    maxPositions: c.max_position_embeddings as number,
    rmsNormEps: num('rms_norm_eps', 1e-6, (v) => v > 0, 'a number > 0'),
    ropeTheta: num('rope_theta', 10000, (v) => v > 0, 'a number > 0'),
    ropeLinearScale,
    tieWordEmbeddings: tie,
    attentionDropout: num('attention_dropout', 0, (v) => v >= 0 && v < 1, 'a number in [0, 1)'),
    bosTokenId: tokenId('bos_token_id', null),
    eosTokenId,
    padTokenId: tokenId('pad_token_id', null),
  };
}

/** The config.json that `parseLlamaConfig` reads back to `cfg` (for writing HF directories). */
export function llamaConfigJson(cfg: LlamaConfig): Record<string, unknown> {
  return {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: cfg.vocabSize,
    hidden_size: cfg.hiddenSize,
    intermediate_size: cfg.intermediateSize,
    num_hidden_layers: cfg.numLayers,
    num_attention_heads: cfg.numHeads,
    num_key_value_heads: cfg.numKvHeads,
    head_dim: cfg.headDim,
    max_position_embeddings: cfg.maxPositions,
    rms_norm_eps: cfg.rmsNormEps,
    rope_theta: cfg.ropeTheta,
    rope_scaling: cfg.ropeLinearScale === 1 ? null : { rope_type: 'linear', factor: cfg.ropeLinearScale },
    tie_word_embeddings: cfg.tieWordEmbeddings,
    attention_dropout: cfg.attentionDropout,
    attention_bias: false,
    mlp_bias: false,
    hidden_act: 'silu',
    bos_token_id: cfg.bosTokenId,
    eos_token_id: cfg.eosTokenId.length === 1 ? cfg.eosTokenId[0] : cfg.eosTokenId,
    pad_token_id: cfg.padTokenId,
    torch_dtype: 'float32',
  };
}
