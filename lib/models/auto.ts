/**
 * loadModel(idOrPath): a BERT encoder and its tokenizer from a local directory or a Hub id.
 *
 * A local directory always works (and is what this project's machines use: no Hub there). A Hub
 * id goes through ./hub.ts (cache honouring HF_HOME / HF_HUB_CACHE, HF_ENDPOINT,
 * HF_HUB_OFFLINE, HF_TOKEN); sharded checkpoints are fetched after their index.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../util/errors.js';
import { readBertConfig, type BertConfig } from './bert/config.js';
import { BertModel } from './bert/model.js';
import { mapBertWeights } from './bert/weights.js';
import { readTensors, SAFETENSORS_FILE, SAFETENSORS_INDEX, weightFiles, weightsSha256 } from './weight-files.js';
import { isHubId, resolveRepoFiles, type ResolveRepoFilesOptions } from '../hub/index.js';
import { HfTokenizer } from './tokenizers/hf.js';

export interface LoadModelOptions {
  /** Hub revision (branch, tag or commit); default main. */
  revision?: string;
  /** Use these safetensors files instead of the directory's own weights. */
  weightFiles?: string[];
  /** Seed of dropout masks in training mode. */
  dropoutSeed?: number;
  /** Hub options (endpoint, cache dir, offline, token, progress). */
  hub?: Omit<ResolveRepoFilesOptions, 'repo' | 'files' | 'optionalFiles' | 'revision'>;
}

export interface LoadedModel {
  /** What the caller asked for: a Hub id or a path. */
  id: string;
  /** The local directory the files were read from. */
  dir: string;
  source: 'local' | 'hub';
  /** Hub commit, when loaded from the Hub. */
  commit?: string;
  config: BertConfig;
  tokenizer: HfTokenizer;
  model: BertModel;
  /** sha256 of the weight files: the weights' identity in results. */
  weightsSha256: string;
  weightFiles: string[];
}

const TOKENIZER_FILES = ['tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt'];

/** Resolves a Hub id or path to a local model directory (downloading into the cache if needed). */
export async function resolveModelDir(
  idOrPath: string,
  opts: Pick<LoadModelOptions, 'revision' | 'hub'> = {},
): Promise<{ dir: string; source: 'local' | 'hub'; commit?: string }> {
  if (existsSync(idOrPath)) {
    if (!statSync(idOrPath).isDirectory()) throw new InputError('expected a model directory (config.json, tokenizer.json, model.safetensors), found a file', { file: idOrPath });
    return { dir: resolve(idOrPath), source: 'local' };
  }
  if (!isHubId(idOrPath)) {
    throw new InputError(`'${idOrPath}' is neither an existing directory nor a Hugging Face Hub id (org/name)`);
  }
  const base = { ...opts.hub, repo: idOrPath, revision: opts.revision };
  const first = await resolveRepoFiles({
    ...base,
    files: ['config.json', 'tokenizer.json'],
    optionalFiles: [...TOKENIZER_FILES, SAFETENSORS_FILE, SAFETENSORS_INDEX],
  });
  if (!first.files[SAFETENSORS_FILE]) {
    if (!first.files[SAFETENSORS_INDEX]) {
      throw new InputError(`Hub repo ${idOrPath} has neither ${SAFETENSORS_FILE} nor ${SAFETENSORS_INDEX} (only safetensors checkpoints are supported)`);
    }
    const index = JSON.parse(readFileSync(first.files[SAFETENSORS_INDEX], 'utf8')) as { weight_map?: Record<string, string> };
    const shards = [...new Set(Object.values(index.weight_map ?? {}))];
    await resolveRepoFiles({ ...base, revision: first.commit ?? opts.revision, files: shards });
  }
  return { dir: first.dir, source: 'hub', commit: first.commit };
}

/** Loads config, tokenizer and weights, checking each, and builds the encoder. */
export async function loadModel(idOrPath: string, opts: LoadModelOptions = {}): Promise<LoadedModel> {
  const { dir, source, commit } = await resolveModelDir(idOrPath, opts);
  const configPath = join(dir, 'config.json');
  if (!existsSync(configPath)) throw new InputError('model directory has no config.json', { file: dir });
  const config = readBertConfig(configPath);
  const tokenizer = HfTokenizer.fromDir(dir);
  const files = opts.weightFiles ?? weightFiles(dir);
  const weights = mapBertWeights(config, readTensors(files), files.join(', '));
  const model = new BertModel(config, weights, opts.dropoutSeed ?? 0);
  return { id: idOrPath, dir, source, commit, config, tokenizer, model, weightsSha256: await weightsSha256(files), weightFiles: files };
}
