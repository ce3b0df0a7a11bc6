/**
 * The parts of a Hugging Face `OPTConfig` (config.json, `model_type: opt`) that define the
 * decoder's computation, parsed with errors that name the key and the file. Keys that fix the
 * architecture's size are required (a config without `hidden_size` fails instead of silently
 * becoming OPT-125m); the others get `configuration_opt.py`'s defaults: do_layer_norm_before true,
 * _remove_final_layer_norm false, word_embed_proj_dim = hidden_size, enable_bias true,
 * layer_norm_elementwise_affine true, dropout 0.1, attention_dropout 0, layerdrop 0,
 * bos/eos 2, pad 1. LayerNorm eps is PyTorch's nn.LayerNorm default, 1e-5 (OPT has no config key
 * for it).
 *
 * Supported: `OPTForCausalLM` / `OPTModel` with the ReLU feed-forward every released OPT uses;
 * another `activation_function` is refused by name.
 */
import { InputError, UnknownNameError } from '../../util/errors.js';
import { decoderConfigFields } from '../decoder/config-fields.js';

/** config.json model_types this decoder implements. */
export const OPT_MODEL_TYPES: readonly string[] = ['opt'];
/** config.json `architectures` entries whose weights this decoder reads. */
export const OPT_ARCHITECTURES: readonly string[] = ['OPTForCausalLM', 'OPTModel'];
/** Feed-forward activations implemented (HF's ACT2FN names). */
export const OPT_ACTIVATIONS: readonly string[] = ['relu'];

export interface OptConfig {
  vocabSize: number;
  /** The decoder layers' width (hidden_size). The LM's output width is `wordEmbedProjDim`. */
  hiddenSize: number;
  /** Width of the token embeddings and of the final output (word_embed_proj_dim); ≠ hiddenSize means project_in / project_out exist. */
  wordEmbedProjDim: number;
  numLayers: number;
  numHeads: number;
  headDim: number;
  /** Feed-forward inner width (ffn_dim). */
  ffnDim: number;
  /** Longest sequence (max_position_embeddings); the position table has 2 more rows (OPT's offset). */
  maxPositions: number;
  /** Pre-LN (true for every OPT but 350m) or post-LN layers. */
  doLayerNormBefore: boolean;
  /** Whether the decoder has its final LayerNorm: do_layer_norm_before and not _remove_final_layer_norm. */
  finalLayerNorm: boolean;
  /** Linear layers (q, k, v, out, fc1, fc2) have biases. */
  enableBias: boolean;
  /** LayerNorms have a weight and a bias (elementwise_affine). */
  layerNormAffine: boolean;
  layerNormEps: number;
  /** Dropout on the attention output and on the feed-forward output (training). */
  dropout: number;
  /** Dropout on the attention probabilities (training). */
  attentionDropout: number;
  /** Probability of skipping a whole layer in training (LayerDrop). */
  layerdrop: number;
  bosTokenId: number | null;
  eosTokenId: number[];
  padTokenId: number | null;
}

const REQUIRED = ['vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads', 'ffn_dim', 'max_position_embeddings'] as const;

/** Checks a parsed config.json against what this decoder implements and reads its numbers. */
export function parseOptConfig(raw: unknown, file = 'config.json'): OptConfig {
  const fields = decoderConfigFields(raw, file, { name: 'OPT', modelTypes: OPT_MODEL_TYPES, architectures: OPT_ARCHITECTURES });
  const { raw: c, where, positiveInt, bool, probability, tokenId } = fields;
  for (const k of REQUIRED) positiveInt(k);
  const act = c.activation_function ?? 'relu';
  if (typeof act !== 'string' || !OPT_ACTIVATIONS.includes(act)) throw new UnknownNameError('OPT activation_function', String(act), OPT_ACTIVATIONS, where);
  const hiddenSize = c.hidden_size as number;
  const numHeads = c.num_attention_heads as number;
  if (hiddenSize % numHeads !== 0) throw new InputError(`hidden_size ${hiddenSize} is not a multiple of num_attention_heads ${numHeads}`, where);
  const wordEmbedProjDim = c.word_embed_proj_dim === undefined || c.word_embed_proj_dim === null ? hiddenSize : positiveInt('word_embed_proj_dim');
  const doLayerNormBefore = bool('do_layer_norm_before', true);
  const eosTokenId = fields.tokenIds('eos_token_id', [2]);
  return {
    vocabSize: c.vocab_size as number,
    hiddenSize,
    wordEmbedProjDim,
    numLayers: c.num_hidden_layers as number,
    numHeads,
    headDim: hiddenSize / numHeads,
    ffnDim: c.ffn_dim as number,
    maxPositions: c.max_position_embeddings as number,
    doLayerNormBefore,
    finalLayerNorm: doLayerNormBefore && !bool('_remove_final_layer_norm', false),
    enableBias: bool('enable_bias', true),
    layerNormAffine: bool('layer_norm_elementwise_affine', true),
    layerNormEps: 1e-5,
    dropout: probability('dropout', 0.1),
    attentionDropout: probability('attention_dropout', 0),
    layerdrop: probability('layerdrop', 0),
    bosTokenId: tokenId('bos_token_id', 2),
    eosTokenId,
    padTokenId: tokenId('pad_token_id', 1),
  };
}
