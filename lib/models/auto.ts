/**
 * loadModel(idOrPath): a text model and its tokenizer from a local directory or a Hub id, with the
 * architecture chosen from config.json's `model_type` by the registry (./architectures.ts, the one
 * place that knows which architectures exist): `bert` (./bert/), `llama` (./llama/; also llama2.c's
 * own folders of a checkpoint .bin and tokenizer.bin), `opt` (./opt/), `rannet` (./ran/; also a
 * released RAN folder's TensorFlow checkpoint).
 *
 * A local directory always works (and is what this project's machines use: no Hub there). A Hub
 * id goes through lib/hub (cache honouring HF_HOME / HF_HUB_CACHE, HF_ENDPOINT, HF_HUB_OFFLINE,
 * HF_TOKEN); sharded checkpoints are fetched after their index.
 *
 * A sentence-transformers folder (one with `modules.json`, ./sentence-transformers/) loads too: its
 * Transformer module's directory is the model, and what its other modules compute (pooling, dense
 * layers, normalisation, max length) comes back as `sentenceEmbedding`. From the Hub, modules.json
 * is asked for first and names the other files to fetch.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureBackend } from '../backend/index.js';
import { InputError } from '../util/errors.js';
import type { Architecture } from './architecture.js';
import { architectureOfConfig, architectures, frozenBaseArchitectures } from './architectures.js';
import { checkFrozenBaseSpec, type FrozenBaseSpec } from './frozen-base.js';
import type { LoadedModel } from './types.js';
import { PYTORCH_FILE, PYTORCH_INDEX, SAFETENSORS_FILE, SAFETENSORS_INDEX, weightFiles, weightsSha256 } from './weight-files.js';
import { isHubId, resolveRepoFiles, type ResolveRepoFilesOptions } from '../hub/index.js';
import {
  isSentenceTransformerFolder,
  moduleFile,
  MODULES_JSON,
  readModulesJson,
  readSentenceTransformerFolder,
  sentenceTransformerRepoFiles,
} from './sentence-transformers/read.js';

export interface LoadModelOptions {
  /** Hub revision (branch, tag or commit); default main. */
  revision?: string;
  /** Use these safetensors files instead of the directory's own weights. */
  weightFiles?: string[];
  /** Seed of dropout masks in training mode. */
  dropoutSeed?: number;
  /**
   * Store a decoder's linear weights in 16 or 4 bits as they load, never as float32 (the frozen
   * base of a LoRA run, ./frozen-base.ts); architectures without adaptable layers refuse it.
   */
  frozenBase?: FrozenBaseSpec;
  /** Hub options (endpoint, cache dir, offline, token, progress). */
  hub?: Omit<ResolveRepoFilesOptions, 'repo' | 'files' | 'optionalFiles' | 'revision'>;
}

export type { LoadedModel };

// The registry's lookups, where callers have always found them.
export { MODEL_TYPES, ONNX_ARCHITECTURES, onnxExporterFor } from './architectures.js';

function readConfigJson(path: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InputError(`model config is not readable JSON: ${(e as Error).message}`, { file: path });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new InputError('expected a JSON object', { file: path });
  return raw as Record<string, unknown>;
}

/**
 * Tokenizer files fetched when the repo has them: tokenizer.json is optional because the
 * facebook/opt-* repositories ship only GPT-2's vocab.json + merges.txt (each loader says what it
 * needs when a file is missing).
 */
const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt', 'vocab.json', 'merges.txt'];

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
  // A sentence-transformers repo lists its modules (and so the files to fetch) in modules.json.
  const probe = await resolveRepoFiles({ ...base, files: [], optionalFiles: [MODULES_JSON] });
  const revision = probe.commit ?? opts.revision;
  let want = { required: ['config.json'], optional: [...TOKENIZER_FILES, SAFETENSORS_FILE, SAFETENSORS_INDEX] };
  let modelPath = '';
  if (probe.files[MODULES_JSON]) {
    const modules = readModulesJson(probe.files[MODULES_JSON]);
    want = sentenceTransformerRepoFiles(modules, want);
    modelPath = modules[0].path;
  }
  const first = await resolveRepoFiles({ ...base, revision, files: want.required, optionalFiles: want.optional });
  let weights = first.files;
  let single = moduleFile(modelPath, SAFETENSORS_FILE);
  let indexFile = moduleFile(modelPath, SAFETENSORS_INDEX);
  if (!weights[single] && !weights[indexFile]) {
    // No safetensors: a PyTorch checkpoint (read without running its pickle, ./torch-checkpoint/),
    // asked for only now so that a repo with both never downloads the .bin.
    single = moduleFile(modelPath, PYTORCH_FILE);
    indexFile = moduleFile(modelPath, PYTORCH_INDEX);
    weights = (await resolveRepoFiles({ ...base, revision: first.commit ?? revision, files: [], optionalFiles: [single, indexFile] })).files;
  }
  if (!weights[single]) {
    if (!weights[indexFile]) {
      const all = [SAFETENSORS_FILE, SAFETENSORS_INDEX, PYTORCH_FILE, PYTORCH_INDEX].map((f) => moduleFile(modelPath, f));
      throw new InputError(`Hub repo ${idOrPath} has none of ${all.join(', ')} at revision ${first.commit ?? revision ?? 'main'}`);
    }
    const index = JSON.parse(readFileSync(weights[indexFile], 'utf8')) as { weight_map?: Record<string, string> };
    const shards = [...new Set(Object.values(index.weight_map ?? {}))].map((f) => moduleFile(modelPath, f));
    await resolveRepoFiles({ ...base, revision: first.commit ?? revision, files: shards });
  }
  return { dir: first.dir, source: 'hub', commit: first.commit };
}

/** The checked frozen-base spec of the options, if any. */
function frozenBase(opts: LoadModelOptions): FrozenBaseSpec | undefined {
  return opts.frozenBase ? checkFrozenBaseSpec(opts.frozenBase) : undefined;
}

/** Refuses a frozen base for an architecture that cannot store one. */
function checkFrozenBase(arch: Architecture, opts: LoadModelOptions, file: string): void {
  if (opts.frozenBase && !arch.frozenBase) throw new InputError(`a ${opts.frozenBase.format} frozen base is stored while loading a decoder (${frozenBaseArchitectures().join(', ')}); this is a ${arch.name} model`, { file });
}

/** Loads config, tokenizer and weights, checking each, and builds the model its config names. */
export async function loadModel(idOrPath: string, opts: LoadModelOptions = {}): Promise<LoadedModel> {
  // Weights become tfjs tensors: without initBackend() the default backend starts here.
  await ensureBackend();
  const resolved = await resolveModelDir(idOrPath, opts);
  const { source, commit } = resolved;
  const st = isSentenceTransformerFolder(resolved.dir) ? readSentenceTransformerFolder(resolved.dir) : undefined;
  const dir = st?.transformerDir ?? resolved.dir;
  const configPath = join(dir, 'config.json');
  if (!existsSync(configPath)) {
    // An architecture's own layout without config.json (llama2.c's checkpoint .bin and tokenizer.bin).
    const own = architectures().find((a) => a.ownFolder?.matches(dir));
    if (own?.ownFolder) {
      checkFrozenBase(own, opts, dir);
      return { ...(await own.ownFolder.load(dir, { dropoutSeed: opts.dropoutSeed, frozenBase: frozenBase(opts) })), id: idOrPath, source, commit };
    }
    const layouts = architectures().flatMap((a) => (a.ownFolder ? [a.ownFolder.description] : []));
    throw new InputError(`model directory has no config.json${layouts.length ? ` (and is not ${layouts.join(', nor ')})` : ''}`, { file: dir });
  }
  const config = readConfigJson(configPath);
  const arch = architectureOfConfig(config, configPath);
  checkFrozenBase(arch, opts, configPath);
  const files = opts.weightFiles ?? (arch.weightFiles ?? weightFiles)(dir);
  const { model, tokenizer } = arch.load(dir, config, configPath, files, { dropoutSeed: opts.dropoutSeed, frozenBase: frozenBase(opts) });
  if (!st) return { id: idOrPath, dir, source, commit, model, tokenizer, weightsSha256: await weightsSha256(files), weightFiles: files };
  // The modules' weights (Dense, ...) change the embeddings too, so they are part of the identity.
  const all = [...files, ...st.weightFiles];
  return { id: idOrPath, dir, source, commit, model, tokenizer, weightsSha256: await weightsSha256(all), weightFiles: all, sentenceEmbedding: st.spec };
}
