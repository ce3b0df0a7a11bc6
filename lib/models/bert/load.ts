/**
 * Building a BERT encoder from an HF model directory whose config.json says `model_type: bert`:
 * the config, the HF tokenizer (tokenizer.json) and the weights under either naming (see
 * ./weights.ts). lib/models/auto.ts calls this after it has found the directory and its weights.
 */
import type { TextTokenizer } from '../types.js';
import { HfTokenizer } from '../tokenizers/hf.js';
import { readTensors } from '../weight-files.js';
import { parseBertConfig } from './config.js';
import { BertModel } from './model.js';
import { mapBertWeights } from './weights.js';

export interface BertLoadOptions {
  /** Seed of the dropout masks in training mode. */
  dropoutSeed?: number;
}

export function loadBert(
  dir: string,
  rawConfig: Record<string, unknown>,
  configFile: string,
  weightFiles: string[],
  opts: BertLoadOptions = {},
): { model: BertModel; tokenizer: TextTokenizer } {
  const config = parseBertConfig(rawConfig, configFile);
  const tokenizer = HfTokenizer.fromDir(dir);
  const weights = mapBertWeights(config, readTensors(weightFiles), weightFiles.join(', '));
  return { model: new BertModel(config, weights, opts.dropoutSeed ?? 0), tokenizer };
}
