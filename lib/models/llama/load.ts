/**
 * Loading a LLaMA decoder and its tokenizer from a local directory, in either layout:
 *
 * - Hugging Face: `config.json` (model_type llama) + `model.safetensors`, or shards
 *   `model-0000x-of-0000y.safetensors` listed in `model.safetensors.index.json` (F32, F16 or BF16,
 *   read as float32 by ../safetensors.ts, one tensor at a time as the model takes it), or a
 *   PyTorch checkpoint (../weight-files.ts), and `tokenizer.json` (+ `tokenizer_config.json`)
 *   through ../tokenizers/hf.ts;
 * - llama2.c: a folder with one checkpoint `.bin` and its `tokenizer.bin` (./llama2c-checkpoint.ts,
 *   ../tokenizers/llama2c.ts); no config.json.
 *
 * With `frozenBase` the linear layers' weights are stored in 16 or 4 bits as they are read
 * (../frozen-base.ts), so the float32 model never exists.
 *
 * `loadLlama` is the HF branch in the shape lib/models/auto.ts calls architectures with;
 * `loadLlamaModel` takes either layout and returns a LoadedModel with the weights' identity.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../../util/errors.js';
import { HfTokenizer } from '../tokenizers/hf.js';
import { Llama2cTokenizer } from '../tokenizers/llama2c.js';
import type { LoadedModel, TextTokenizer } from '../types.js';
import type { FrozenBaseSpec } from '../frozen-base.js';
import { localDecoder, readConfigJson, withLazyWeights } from '../decoder/load.js';
import { weightFiles as findWeightFiles } from '../weight-files.js';
import { parseLlamaConfig } from './config.js';
import { findLlama2cFiles, readLlama2cCheckpoint } from './llama2c-checkpoint.js';
import { LlamaModel } from './model.js';
import { mapLlamaWeights } from './weights.js';

export interface LlamaLoadOptions {
  /** Seed of the dropout masks in training mode. */
  dropoutSeed?: number;
  /** Store the linear layers' weights in 16 or 4 bits as they load, never as float32 (../frozen-base.ts). */
  frozenBase?: FrozenBaseSpec;
}

/** A LLaMA from an HF directory whose config.json was read by the caller (lib/models/auto.ts). */
export function loadLlama(
  dir: string,
  rawConfig: Record<string, unknown>,
  configFile: string,
  weightFiles: string[],
  opts: LlamaLoadOptions = {},
): { model: LlamaModel; tokenizer: TextTokenizer } {
  const config = parseLlamaConfig(rawConfig, configFile);
  const tokenizer = HfTokenizer.fromDir(dir);
  const model = withLazyWeights(weightFiles, (tensors, source) => new LlamaModel(config, mapLlamaWeights(config, tensors, source), opts.dropoutSeed ?? 0, opts.frozenBase));
  return { model, tokenizer };
}

/** A llama2.c checkpoint and its tokenizer.bin (BOS prepended by default, as run.c). */
export function loadLlama2c(checkpoint: string, tokenizerFile: string, opts: LlamaLoadOptions = {}): { model: LlamaModel; tokenizer: Llama2cTokenizer } {
  const ckpt = readLlama2cCheckpoint(checkpoint);
  const tokenizer = Llama2cTokenizer.fromFile(tokenizerFile, ckpt.config.vocabSize);
  // llama2.c's format is one float32 block (small models): it is read whole, then stored as asked.
  return { model: new LlamaModel(ckpt.config, ckpt.weights, opts.dropoutSeed ?? 0, opts.frozenBase), tokenizer };
}

/** Whether `dir` holds a llama2.c model (see findLlama2cFiles), for loadModel's dispatch. */
export function isLlama2cDir(dir: string): boolean {
  return findLlama2cFiles(dir) !== undefined;
}

/** A LLaMA decoder from a local HF or llama2.c directory. */
export async function loadLlamaModel(dir: string, opts: LlamaLoadOptions = {}): Promise<LoadedModel<LlamaModel>> {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new InputError('model directory does not exist', { file: abs });
  const configPath = join(abs, 'config.json');
  if (existsSync(configPath)) {
    const files = findWeightFiles(abs);
    return localDecoder(dir, abs, loadLlama(abs, readConfigJson(configPath), configPath, files, opts), files);
  }
  const l2c = findLlama2cFiles(abs);
  if (!l2c) {
    throw new InputError('neither a Hugging Face model directory (config.json + safetensors) nor a llama2.c folder (a checkpoint .bin + tokenizer.bin)', { file: abs });
  }
  return localDecoder(dir, abs, loadLlama2c(l2c.checkpoint, l2c.tokenizer, opts), [l2c.checkpoint]);
}
