/**
 * Loading an OPT decoder and its tokenizer from a Hugging Face model directory: `config.json`
 * (model_type opt), the weights through ../weight-files.ts (whatever formats it reads: safetensors,
 * single or sharded, or PyTorch; read one tensor at a time as the model takes it, and with
 * `frozenBase` the linear weights stored in 16 or 4 bits as they are read, ../frozen-base.ts),
 * and the GPT-2 byte-level BPE from `tokenizer.json`, or from `vocab.json` + `merges.txt` where
 * there is no tokenizer.json (the `facebook/opt-*` repositories). Special ids come from
 * config.json: BOS (`</s>`, 2 in OPT's vocabulary) is put before every text, nothing is
 * appended, padding uses pad_token_id (1) on the left.
 *
 * `loadOpt` is the shape lib/models/auto.ts calls architectures with; `loadOptModel` takes a
 * directory and returns a LoadedModel with the weights' identity.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../../util/errors.js';
import { HfTokenizer, type HfTokenizerOptions } from '../tokenizers/hf.js';
import type { LoadedModel } from '../types.js';
import type { FrozenBaseSpec } from '../frozen-base.js';
import { localDecoder, readConfigJson, withLazyWeights } from '../decoder/load.js';
import { weightFiles as findWeightFiles } from '../weight-files.js';
import { parseOptConfig, type OptConfig } from './config.js';
import { OptModel } from './model.js';
import { mapOptWeights } from './weights.js';

export interface OptLoadOptions {
  /** Seed of the dropout masks in training mode. */
  dropoutSeed?: number;
  /** Store the linear layers' weights in 16 or 4 bits as they load, never as float32 (../frozen-base.ts). */
  frozenBase?: FrozenBaseSpec;
}

/** The OPT tokenizer of a model directory, with the config's BOS and pad ids, padding on the left. */
export function optTokenizer(dir: string, config: OptConfig): HfTokenizer {
  const options: HfTokenizerOptions = { padSide: 'left' };
  if (config.bosTokenId !== null) options.bosId = config.bosTokenId;
  if (config.padTokenId !== null) options.padId = config.padTokenId;
  return existsSync(join(dir, 'tokenizer.json')) ? HfTokenizer.fromDir(dir, options) : HfTokenizer.fromByteLevelBpeFiles(dir, options);
}

/** An OPT from a directory whose config.json was read by the caller (lib/models/auto.ts). */
export function loadOpt(
  dir: string,
  rawConfig: Record<string, unknown>,
  configFile: string,
  weightFiles: string[],
  opts: OptLoadOptions = {},
): { model: OptModel; tokenizer: HfTokenizer } {
  const config = parseOptConfig(rawConfig, configFile);
  const tokenizer = optTokenizer(dir, config);
  const model = withLazyWeights(weightFiles, (tensors, source) => new OptModel(config, mapOptWeights(config, tensors, source), opts.dropoutSeed ?? 0, opts.frozenBase));
  return { model, tokenizer };
}

/** An OPT decoder from a local HF directory. */
export async function loadOptModel(dir: string, opts: OptLoadOptions = {}): Promise<LoadedModel<OptModel>> {
  const abs = resolve(dir);
  const configPath = join(abs, 'config.json');
  if (!existsSync(configPath)) throw new InputError('an OPT model directory needs config.json', { file: abs });
  const files = findWeightFiles(abs);
  return localDecoder(dir, abs, loadOpt(abs, readConfigJson(configPath), configPath, files, opts), files);
}
