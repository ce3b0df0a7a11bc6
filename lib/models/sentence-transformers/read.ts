/**
 * Reading a sentence-transformers model folder into a SentenceEmbeddingSpec (./spec.ts) and the
 * directory of its transformer, which lib/models/auto.ts then loads like any HF model directory.
 *
 * The files, as sentence-transformers writes and reads them (SentenceTransformer.save,
 * _load_sbert_model and each module's save/load):
 *
 *   modules.json                       [{idx, name, path, type}, ...]: the modules in run order;
 *                                      `path` is relative to the folder ("" = the folder itself)
 *   config_sentence_transformers.json  optional: {model_type, prompts, default_prompt_name,
 *                                      similarity_fn_name, __version__}
 *   <Transformer path>/                an HF model directory (config.json, weights, tokenizer) and
 *     sentence_bert_config.json        {max_seq_length, do_lower_case} (older names:
 *                                      sentence_roberta_config.json, ...)
 *   <Pooling path>/config.json         {word_embedding_dimension, pooling_mode_cls_token,
 *                                      pooling_mode_mean_tokens, pooling_mode_max_tokens,
 *                                      pooling_mode_mean_sqrt_len_tokens,
 *                                      pooling_mode_weightedmean_tokens, pooling_mode_lasttoken,
 *                                      include_prompt}; a missing key takes Pooling's default
 *                                      (mean on, the others off, include_prompt true)
 *   <Dense path>/config.json           {in_features, out_features, bias, activation_function}
 *   <Dense path>/model.safetensors     linear.weight [out, in], linear.bias [out] (when bias)
 *   <WeightedLayerPooling path>/config.json  {word_embedding_dimension, layer_start, num_hidden_layers}
 *   <WeightedLayerPooling path>/model.safetensors  layer_weights [num_hidden_layers + 1 - layer_start]
 *   <Normalize path>/                  nothing (the folder may even be absent)
 *
 * Modules this library does not implement are refused by name, listing the ones it does; so are
 * keys a module's constructor would reject, shapes that do not chain, and Dense weights saved only
 * as a PyTorch pickle (`pytorch_model.bin`), which cannot be read safely without Python.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError, UnknownNameError } from '../../util/errors.js';
import { readSafetensors, type TensorEntry } from '../safetensors.js';
import {
  ST_ACTIVATIONS,
  ST_MODULE_TYPES,
  ST_POOLING_MODES,
  type DenseStep,
  type LayerMixStep,
  type PoolingStep,
  type SentenceEmbeddingSpec,
  type SentenceEmbeddingStep,
  type StModuleName,
} from './spec.js';

export const MODULES_JSON = 'modules.json';
export const ST_CONFIG_JSON = 'config_sentence_transformers.json';
/** The Transformer module's own config, under the names sentence-transformers tries in order. */
export const SENTENCE_BERT_CONFIGS = [
  'sentence_bert_config.json',
  'sentence_roberta_config.json',
  'sentence_distilbert_config.json',
  'sentence_camembert_config.json',
  'sentence_albert_config.json',
  'sentence_xlm-roberta_config.json',
  'sentence_xlnet_config.json',
];
const MODULE_WEIGHTS = 'model.safetensors';
const MODULE_PICKLE = 'pytorch_model.bin';

/** One entry of modules.json. */
export interface StModuleEntry {
  name: string;
  /** Relative to the folder, '' for the folder itself, without a trailing slash. */
  path: string;
  type: string;
  module: StModuleName;
}

/** A sentence-transformers folder, read: where its transformer is and what follows it. */
export interface SentenceTransformerFolder {
  /** The HF model directory of the Transformer module. */
  transformerDir: string;
  spec: SentenceEmbeddingSpec;
  /** Weight files of the modules after the transformer (Dense, WeightedLayerPooling), in module order. */
  weightFiles: string[];
}

export function isSentenceTransformerFolder(dir: string): boolean {
  return existsSync(join(dir, MODULES_JSON));
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`not valid JSON: ${(e as Error).message}`, { file });
  }
}

function readJsonObject(file: string): Record<string, unknown> {
  const v = readJson(file);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InputError(`expected a JSON object, found ${JSON.stringify(v)?.slice(0, 80)}`, { file });
  return v as Record<string, unknown>;
}

/** A module path from modules.json, checked to stay inside the folder. */
function modulePath(p: unknown, file: string, i: number): string {
  if (typeof p !== 'string') throw new InputError(`entry ${i}: 'path' must be a string, found ${JSON.stringify(p)}`, { file });
  const path = p.replace(/\/+$/, '');
  const parts = path.split(/[\\/]/);
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || parts.includes('..') || (path !== '' && parts.includes(''))) {
    throw new InputError(`entry ${i}: module path ${JSON.stringify(p)} must be a relative path inside the model folder`, { file });
  }
  return path;
}

/** `path/file` inside the folder ("" = the folder itself), as a Hub file name. */
export function moduleFile(path: string, file: string): string {
  return path === '' ? file : `${path}/${file}`;
}

/** modules.json: the modules in run order, each a type this library implements. */
export function readModulesJson(file: string): StModuleEntry[] {
  const raw = readJson(file);
  if (!Array.isArray(raw) || raw.length === 0) throw new InputError('expected a non-empty JSON array of modules ({idx, name, path, type})', { file });
  const byType = new Map<string, StModuleName>(Object.entries(ST_MODULE_TYPES).map(([k, v]) => [v, k as StModuleName]));
  return raw.map((e, i) => {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw new InputError(`entry ${i}: expected an object {idx, name, path, type}`, { file });
    const o = e as Record<string, unknown>;
    if (typeof o.type !== 'string') throw new InputError(`entry ${i}: 'type' must be a string, found ${JSON.stringify(o.type)}`, { file });
    const module = byType.get(o.type);
    if (!module) throw new UnknownNameError(`sentence-transformers module type (modules.json entry ${i})`, o.type, Object.values(ST_MODULE_TYPES), { file });
    return { name: String(o.name ?? i), path: modulePath(o.path, file, i), type: o.type, module };
  });
}

/** Checks the module order: Transformer first and only there, then [WeightedLayerPooling], one Pooling, then Dense / Normalize. */
function checkOrder(modules: StModuleEntry[], file: string): void {
  const names = modules.map((m) => m.module).join(', ');
  const fail = (why: string) => {
    throw new InputError(`modules ${names}: ${why} (expected Transformer, [WeightedLayerPooling], Pooling, then any Dense / Normalize)`, { file });
  };
  if (modules[0].module !== 'Transformer') fail('the first module must be the Transformer');
  const pooling = modules.findIndex((m) => m.module === 'Pooling');
  if (pooling < 0) fail('no Pooling module');
  modules.forEach((m, i) => {
    if (i > 0 && m.module === 'Transformer') fail(`a second Transformer at position ${i}`);
    if (m.module === 'Pooling' && i !== pooling) fail(`a second Pooling at position ${i}`);
    if (m.module === 'WeightedLayerPooling' && i > pooling) fail('WeightedLayerPooling after Pooling');
    if ((m.module === 'Dense' || m.module === 'Normalize') && i < pooling) fail(`${m.module} before Pooling`);
  });
}

/** Keys a module constructor accepts; any other key would make sentence-transformers fail too. */
function checkKeys(cfg: Record<string, unknown>, allowed: readonly string[], what: string, file: string): void {
  const extra = Object.keys(cfg).filter((k) => !allowed.includes(k));
  if (extra.length) throw new InputError(`${what} config has unexpected key(s) ${extra.join(', ')} (expected ${allowed.join(', ')})`, { file });
}

function positiveInt(cfg: Record<string, unknown>, key: string, file: string, dflt?: number): number {
  const v = cfg[key] ?? dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new InputError(`'${key}' must be a positive integer, found ${JSON.stringify(cfg[key])}`, { file });
  return v;
}

function bool(cfg: Record<string, unknown>, key: string, dflt: boolean, file: string): boolean {
  const v = cfg[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw new InputError(`'${key}' must be true or false, found ${JSON.stringify(v)}`, { file });
  return v;
}

/** The tensors of a module's model.safetensors; a pickle-only or weightless module is an error naming the folder. */
function moduleWeights(dir: string, what: string): { file: string; tensors: Map<string, TensorEntry> } {
  const file = join(dir, MODULE_WEIGHTS);
  if (existsSync(file)) return { file, tensors: readSafetensors(file).tensors };
  if (existsSync(join(dir, MODULE_PICKLE))) {
    throw new InputError(
      `${what} weights are only in ${MODULE_PICKLE}, a PyTorch pickle this library cannot read; convert them once with Python: ` +
        "`from safetensors.torch import save_file; import torch; save_file(torch.load('pytorch_model.bin'), 'model.safetensors', {'format': 'pt'})`",
      { file: dir },
    );
  }
  throw new InputError(`${what} has no ${MODULE_WEIGHTS} (a module saved only as ${MODULE_PICKLE}, a PyTorch pickle, cannot be read here)`, { file: dir });
}

function takeTensor(w: { file: string; tensors: Map<string, TensorEntry> }, name: string, shape: number[], what: string): Float32Array {
  const t = w.tensors.get(name);
  if (!t) throw new InputError(`${what}: tensor '${name}' is missing (found ${[...w.tensors.keys()].join(', ') || 'none'})`, { file: w.file });
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new InputError(`${what}: tensor '${name}' has shape ${JSON.stringify(t.shape)}, its config says ${JSON.stringify(shape)}`, { file: w.file });
  }
  if (!(t.data instanceof Float32Array)) throw new InputError(`${what}: tensor '${name}' is ${t.dtype}, expected a float tensor`, { file: w.file });
  return t.data;
}

function noOtherTensors(w: { file: string; tensors: Map<string, TensorEntry> }, expected: string[], what: string): void {
  const extra = [...w.tensors.keys()].filter((n) => !expected.includes(n));
  if (extra.length) throw new InputError(`${what}: unexpected tensor(s) ${extra.join(', ')} (expected ${expected.join(', ')})`, { file: w.file });
}

function readPooling(dir: string, hidden: number | undefined): PoolingStep {
  const file = join(dir, 'config.json');
  const cfg = readJsonObject(file);
  checkKeys(cfg, ['word_embedding_dimension', 'pooling_mode', ...ST_POOLING_MODES.map((m) => m.key), 'include_prompt'], 'Pooling', file);
  const dim = positiveInt(cfg, 'word_embedding_dimension', file);
  if (hidden !== undefined && dim !== hidden) {
    throw new InputError(`Pooling word_embedding_dimension ${dim} differs from the transformer's hidden_size ${hidden}`, { file });
  }
  let modes: PoolingStep['modes'];
  if (cfg.pooling_mode !== undefined && cfg.pooling_mode !== null) {
    // Pooling(pooling_mode=...) overrides every pooling_mode_* flag.
    const names = ST_POOLING_MODES.map((m) => m.mode) as string[];
    const given = String(cfg.pooling_mode).toLowerCase();
    if (!names.includes(given)) throw new UnknownNameError('Pooling pooling_mode', String(cfg.pooling_mode), names, { file });
    modes = [given as PoolingStep['modes'][number]];
  } else {
    // Pooling's constructor defaults: mean on, every other mode off.
    modes = ST_POOLING_MODES.filter((m) => bool(cfg, m.key, m.mode === 'mean', file)).map((m) => m.mode);
  }
  if (modes.length === 0) throw new InputError('Pooling enables no pooling mode (every pooling_mode_* is false)', { file });
  return { module: 'Pooling', modes, dim, includePrompt: bool(cfg, 'include_prompt', true, file) };
}

function readDense(dir: string, inWidth: number, weightFiles: string[]): DenseStep {
  const file = join(dir, 'config.json');
  const cfg = readJsonObject(file);
  checkKeys(cfg, ['in_features', 'out_features', 'bias', 'activation_function'], 'Dense', file);
  const inFeatures = positiveInt(cfg, 'in_features', file);
  const outFeatures = positiveInt(cfg, 'out_features', file);
  if (inFeatures !== inWidth) throw new InputError(`Dense in_features ${inFeatures} does not match the ${inWidth}-wide embedding the module before it produces`, { file });
  const hasBias = bool(cfg, 'bias', true, file);
  const act = cfg.activation_function;
  if (typeof act !== 'string') throw new InputError(`'activation_function' must be a string such as torch.nn.modules.activation.Tanh, found ${JSON.stringify(act)}`, { file });
  const activation = (ST_ACTIVATIONS as Record<string, DenseStep['activation']>)[act];
  if (!activation) throw new UnknownNameError('Dense activation_function', act, Object.keys(ST_ACTIVATIONS), { file });
  const what = `Dense module ${dir}`;
  const w = moduleWeights(dir, what);
  weightFiles.push(w.file);
  const weight = takeTensor(w, 'linear.weight', [outFeatures, inFeatures], what);
  const bias = hasBias ? takeTensor(w, 'linear.bias', [outFeatures], what) : undefined;
  noOtherTensors(w, hasBias ? ['linear.weight', 'linear.bias'] : ['linear.weight'], what);
  return { module: 'Dense', inFeatures, outFeatures, weight, bias, activation };
}

function readLayerMix(dir: string, hidden: number | undefined, layers: number | undefined, weightFiles: string[]): LayerMixStep {
  const file = join(dir, 'config.json');
  const cfg = readJsonObject(file);
  checkKeys(cfg, ['word_embedding_dimension', 'layer_start', 'num_hidden_layers'], 'WeightedLayerPooling', file);
  const dim = positiveInt(cfg, 'word_embedding_dimension', file);
  if (hidden !== undefined && dim !== hidden) throw new InputError(`WeightedLayerPooling word_embedding_dimension ${dim} differs from the transformer's hidden_size ${hidden}`, { file });
  // The constructor's defaults: layer_start 4, num_hidden_layers 12.
  const numLayers = positiveInt(cfg, 'num_hidden_layers', file, 12);
  if (layers !== undefined && numLayers !== layers) throw new InputError(`WeightedLayerPooling num_hidden_layers ${numLayers} differs from the transformer's ${layers}`, { file });
  const layerStart = cfg.layer_start ?? 4;
  if (typeof layerStart !== 'number' || !Number.isInteger(layerStart) || layerStart < 0 || layerStart > numLayers) {
    throw new InputError(`'layer_start' must be an integer from 0 to num_hidden_layers (${numLayers}), found ${JSON.stringify(cfg.layer_start)}`, { file });
  }
  const what = `WeightedLayerPooling module ${dir}`;
  const w = moduleWeights(dir, what);
  weightFiles.push(w.file);
  const weights = takeTensor(w, 'layer_weights', [numLayers + 1 - layerStart], what);
  noOtherTensors(w, ['layer_weights'], what);
  return { module: 'WeightedLayerPooling', layerStart, weights };
}

/** The transformer's hidden size, layer count and longest input, from its config.json (when readable). */
function transformerShape(dir: string): { hidden?: number; layers?: number; positions?: number } {
  const file = join(dir, 'config.json');
  if (!existsSync(file)) return {};
  const c = readJsonObject(file);
  const n = (k: string) => (typeof c[k] === 'number' ? (c[k] as number) : undefined);
  return { hidden: n('hidden_size'), layers: n('num_hidden_layers'), positions: n('max_position_embeddings') };
}

/** sentence_bert_config.json of the Transformer module: truncation length and lower-casing. */
function readTransformerConfig(dir: string, positions: number | undefined): { maxSeqLength: number; lowerCase: boolean } {
  const name = SENTENCE_BERT_CONFIGS.find((f) => existsSync(join(dir, f)));
  const cfg = name ? readJsonObject(join(dir, name)) : {};
  const file = join(dir, name ?? SENTENCE_BERT_CONFIGS[0]);
  if (cfg.tokenizer_name_or_path !== undefined && cfg.tokenizer_name_or_path !== null) {
    throw new InputError(`'tokenizer_name_or_path' (${JSON.stringify(cfg.tokenizer_name_or_path)}) is not supported: the tokenizer must be the transformer folder's own`, { file });
  }
  const lowerCase = bool(cfg, 'do_lower_case', false, file);
  if (cfg.max_seq_length !== undefined && cfg.max_seq_length !== null) return { maxSeqLength: positiveInt(cfg, 'max_seq_length', file), lowerCase };
  // No max_seq_length: sentence-transformers takes min(max_position_embeddings, tokenizer.model_max_length).
  const tokCfgFile = join(dir, 'tokenizer_config.json');
  const tokMax = existsSync(tokCfgFile) ? readJsonObject(tokCfgFile).model_max_length : undefined;
  const limits = [positions, typeof tokMax === 'number' ? tokMax : undefined].filter((v): v is number => v !== undefined && v > 0);
  if (limits.length === 0) throw new InputError('no max_seq_length, and neither config.json max_position_embeddings nor tokenizer_config.json model_max_length to take it from', { file });
  return { maxSeqLength: Math.min(...limits), lowerCase };
}

/** config_sentence_transformers.json (optional): the model type, the default prompt and the similarity. */
function readStConfig(folder: string): Pick<SentenceEmbeddingSpec, 'prompt' | 'similarity'> {
  const file = join(folder, ST_CONFIG_JSON);
  if (!existsSync(file)) return {};
  const cfg = readJsonObject(file);
  if (cfg.model_type !== undefined && cfg.model_type !== 'SentenceTransformer') {
    throw new InputError(`model_type '${String(cfg.model_type)}' is not a SentenceTransformer (sparse encoders and cross-encoders are not sentence embedding models here)`, { file });
  }
  const prompts = cfg.prompts ?? {};
  if (prompts === null || typeof prompts !== 'object' || Array.isArray(prompts) || Object.values(prompts).some((p) => typeof p !== 'string')) {
    throw new InputError(`'prompts' must be an object of name -> prompt text, found ${JSON.stringify(cfg.prompts)}`, { file });
  }
  const out: Pick<SentenceEmbeddingSpec, 'prompt' | 'similarity'> = {};
  const def = cfg.default_prompt_name;
  if (def !== undefined && def !== null) {
    if (typeof def !== 'string' || !(def in prompts)) {
      throw new InputError(`default_prompt_name ${JSON.stringify(def)} is not one of the prompts (${Object.keys(prompts).join(', ') || 'none'})`, { file });
    }
    const text = (prompts as Record<string, string>)[def];
    if (text.length > 0) out.prompt = text;
  }
  if (typeof cfg.similarity_fn_name === 'string') out.similarity = cfg.similarity_fn_name;
  return out;
}

/** Reads a sentence-transformers folder (see the file comment). */
export function readSentenceTransformerFolder(folder: string): SentenceTransformerFolder {
  const root = resolve(folder);
  const modulesFile = join(root, MODULES_JSON);
  const modules = readModulesJson(modulesFile);
  checkOrder(modules, modulesFile);
  const transformerDir = join(root, modules[0].path);
  if (!existsSync(join(transformerDir, 'config.json'))) {
    throw new InputError(`the Transformer module's folder '${modules[0].path}' has no config.json`, { file: modulesFile });
  }
  const shape = transformerShape(transformerDir);
  const { maxSeqLength, lowerCase } = readTransformerConfig(transformerDir, shape.positions);
  const weightFiles: string[] = [];
  const steps: SentenceEmbeddingStep[] = [];
  let width = shape.hidden ?? 0;
  for (const m of modules.slice(1)) {
    const dir = join(root, m.path);
    switch (m.module) {
      case 'WeightedLayerPooling':
        steps.push(readLayerMix(dir, shape.hidden, shape.layers, weightFiles));
        break;
      case 'Pooling': {
        const p = readPooling(dir, shape.hidden);
        steps.push(p);
        width = p.modes.length * p.dim;
        break;
      }
      case 'Dense': {
        const d = readDense(dir, width, weightFiles);
        steps.push(d);
        width = d.outFeatures;
        break;
      }
      case 'Normalize':
        steps.push({ module: 'Normalize' });
        break;
      case 'Transformer':
        break; // checkOrder allows it only first
    }
  }
  return { transformerDir, spec: { folder: root, maxSeqLength, lowerCase, ...readStConfig(root), steps }, weightFiles };
}

/**
 * The files of a sentence-transformers Hub repo that loading needs, from its modules.json: the
 * Transformer folder's model files, its sentence_bert_config.json, every module's config and
 * weights. `required` must exist; `optional` are used when present.
 */
export function sentenceTransformerRepoFiles(modules: readonly StModuleEntry[], modelFiles: { required: string[]; optional: string[] }): { required: string[]; optional: string[] } {
  const t = modules[0].path;
  const required = modelFiles.required.map((f) => moduleFile(t, f));
  const optional = [...modelFiles.optional, ...SENTENCE_BERT_CONFIGS.slice(0, 1)].map((f) => moduleFile(t, f));
  optional.push(ST_CONFIG_JSON);
  for (const m of modules.slice(1)) {
    if (m.module === 'Pooling') required.push(moduleFile(m.path, 'config.json'));
    if (m.module === 'Dense' || m.module === 'WeightedLayerPooling') {
      required.push(moduleFile(m.path, 'config.json'));
      optional.push(moduleFile(m.path, MODULE_WEIGHTS));
    }
  }
  return { required, optional };
}
