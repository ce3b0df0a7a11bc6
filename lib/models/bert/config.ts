/**
 * The parts of a Hugging Face `BertConfig` (config.json) that define the encoder's computation.
 * Keys that fix the architecture are required: a config without `hidden_size` should fail
 * loudly rather than silently become bert-base.
 */
import { readFileSync } from 'node:fs';
import { InputError, UnknownNameError } from '../../util/errors.js';

export type HiddenAct = 'gelu' | 'gelu_new' | 'gelu_pytorch_tanh' | 'relu';
const HIDDEN_ACTS: readonly string[] = ['gelu', 'gelu_new', 'gelu_pytorch_tanh', 'relu'];

export interface BertConfig {
  modelType: string;
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  intermediateSize: number;
  maxPositions: number;
  typeVocabSize: number;
  layerNormEps: number;
  hiddenAct: HiddenAct;
  hiddenDropout: number;
  attentionDropout: number;
  padTokenId: number;
}

const REQUIRED = ['vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads', 'intermediate_size', 'max_position_embeddings'] as const;

export function parseBertConfig(raw: unknown, file = 'config.json'): BertConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new InputError('expected a JSON object', { file });
  const c = raw as Record<string, unknown>;
  const modelType = typeof c.model_type === 'string' ? c.model_type : 'bert';
  // RoBERTa-style models number positions from padding_idx + 1 and have no token types in use:
  // not what this encoder computes, so they are refused rather than silently miscomputed.
  if (modelType !== 'bert') throw new UnknownNameError('BERT model_type', modelType, ['bert'], { file });
  for (const k of REQUIRED) {
    const v = c[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw new InputError(`'${k}' must be a positive integer, found ${JSON.stringify(v)}`, { file });
    }
  }
  const num = (k: string, dflt: number): number => {
    const v = c[k];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new InputError(`'${k}' must be a non-negative number, found ${JSON.stringify(v)}`, { file });
    return v;
  };
  const act = (c.hidden_act ?? 'gelu') as string;
  if (!HIDDEN_ACTS.includes(act)) throw new UnknownNameError('hidden_act', act, HIDDEN_ACTS, { file });
  const cfg: BertConfig = {
    modelType,
    vocabSize: c.vocab_size as number,
    hiddenSize: c.hidden_size as number,
    numLayers: c.num_hidden_layers as number,
    numHeads: c.num_attention_heads as number,
    intermediateSize: c.intermediate_size as number,
    maxPositions: c.max_position_embeddings as number,
    typeVocabSize: num('type_vocab_size', 2),
    layerNormEps: num('layer_norm_eps', 1e-12),
    hiddenAct: act as HiddenAct,
    hiddenDropout: num('hidden_dropout_prob', 0.1),
    attentionDropout: num('attention_probs_dropout_prob', 0.1),
    padTokenId: num('pad_token_id', 0),
  };
  if (cfg.hiddenSize % cfg.numHeads !== 0) {
    throw new InputError(`hidden_size ${cfg.hiddenSize} is not a multiple of num_attention_heads ${cfg.numHeads}`, { file });
  }
  return cfg;
}

export function readBertConfig(path: string): BertConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read model config (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file: path });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new InputError(`model config is not valid JSON: ${(e as Error).message}`, { file: path });
  }
  return parseBertConfig(raw, path);
}
