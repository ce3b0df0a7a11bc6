/**
 * Loads a released checkpoint of the registry (./released.ts) the way it can be read here:
 *
 * - `bert`: config.json and model.safetensors from the entry's `weightsRevision` (a Hub pull
 *   request branch with the safetensors conversion, when main has only a pickle), the tokenizer
 *   from the repository itself or, where it ships no tokenizer.json, from `tokenizerFrom`; the
 *   files are linked into one model folder under `workDir` (named by repository and commit), which
 *   loadModel reads; the result keeps the Hub id and the weights' commit as its identity;
 * - `sentence-transformers`: loadModel(id) (the folder's modules come with it);
 * - `lora-adapter`: the base decoder from the Hub and the adapter in PEFT's safetensors layout —
 *   from `adapterDir` (a converted copy) or the repository; an adapter published only as a pickle
 *   is an UnavailableError saying how to convert it.
 *
 * Hub errors (no network, offline mode) come through as lib/hub raises them (UnavailableError).
 */
import { createHash } from 'node:crypto';
import { existsSync, symlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveRepoFiles, type ResolveRepoFilesOptions } from '../hub/index.js';
import { writeDirectoryAtomicSync } from '../util/atomic-write.js';
import { InputError, UnavailableError } from '../util/errors.js';
import { loadLoraAdapter } from './adapters/peft.js';
import type { AdaptableModel } from './adapters/types.js';
import { loadModel } from './auto.js';
import type { ReleasedCheckpoint } from './released.js';
import type { LoadedModel } from './types.js';

export interface LoadReleasedOptions {
  /** Where model folders assembled from several repositories or revisions are linked together. */
  workDir: string;
  /** Hub settings (endpoint, cache, token, offline). */
  hub?: Omit<ResolveRepoFilesOptions, 'repo' | 'files' | 'optionalFiles' | 'revision'>;
  /** A local PEFT adapter folder (adapter_config.json, adapter_model.safetensors) for a `lora-adapter` entry. */
  adapterDir?: string;
}

const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt'];

async function sha256(file: string): Promise<string> {
  return createHash('sha256').update(await readFile(file)).digest('hex');
}

async function loadBertEntry(e: ReleasedCheckpoint, o: LoadReleasedOptions): Promise<LoadedModel> {
  const w = await resolveRepoFiles({ ...o.hub, repo: e.id, revision: e.weightsRevision, files: ['config.json', 'model.safetensors'], optionalFiles: TOKENIZER_FILES });
  let tokenizer = w.files;
  if (!w.files['tokenizer.json']) {
    if (!e.tokenizerFrom) throw new InputError(`${e.id} has no tokenizer.json and the registry names no repository to take one from`);
    tokenizer = (await resolveRepoFiles({ ...o.hub, repo: e.tokenizerFrom, files: ['tokenizer.json'], optionalFiles: TOKENIZER_FILES.slice(1) })).files;
  }
  const commit = w.commit ?? e.weightsRevision ?? 'main';
  const dir = join(o.workDir, e.id.replace('/', '--'), commit.replace(/[^A-Za-z0-9._-]/g, '_'));
  if (!existsSync(join(dir, 'model.safetensors'))) {
    writeDirectoryAtomicSync(dir, (tmp) => {
      symlinkSync(w.files['config.json'], join(tmp, 'config.json'));
      symlinkSync(w.files['model.safetensors'], join(tmp, 'model.safetensors'));
      for (const f of TOKENIZER_FILES) if (tokenizer[f]) symlinkSync(tokenizer[f], join(tmp, f));
    });
  }
  const m = await loadModel(dir);
  return { ...m, id: e.id, source: 'hub', ...(w.commit ? { commit: w.commit } : {}) };
}

async function loadAdapterEntry(e: ReleasedCheckpoint, o: LoadReleasedOptions): Promise<LoadedModel> {
  if (!e.baseModel) throw new InputError(`registry entry ${e.id} is an adapter without a base model`);
  let adapterDir = o.adapterDir;
  if (!adapterDir) {
    const a = await resolveRepoFiles({ ...o.hub, repo: e.id, files: ['adapter_config.json'], optionalFiles: ['adapter_model.safetensors'] });
    if (!a.files['adapter_model.safetensors']) throw new UnavailableError(`${e.id} publishes its adapter only as a PyTorch pickle (adapter_model.bin): ${e.preparation ?? 'convert it to safetensors with PEFT'}`);
    adapterDir = a.dir;
  }
  const base = await loadModel(e.baseModel, { hub: o.hub });
  const model = base.model as AdaptableModel;
  if (typeof model.linearModules !== 'function') throw new InputError(`${e.baseModel} is a '${base.model.architecture}' model, which cannot carry LoRA adapters here`);
  loadLoraAdapter(adapterDir, model);
  const adapterSha = await sha256(join(adapterDir, 'adapter_model.safetensors'));
  const weightsSha256 = createHash('sha256').update(`${base.weightsSha256}\n${adapterSha}`).digest('hex');
  return { ...base, id: `${e.id} on ${base.id}`, weightsSha256, weightFiles: [...base.weightFiles, join(adapterDir, 'adapter_model.safetensors')] };
}

/** The registry entry as a loaded model (see the file comment). */
export async function loadReleasedModel(e: ReleasedCheckpoint, o: LoadReleasedOptions): Promise<LoadedModel> {
  switch (e.kind) {
    case 'bert':
      return loadBertEntry(e, o);
    case 'sentence-transformers': {
      const m = await loadModel(e.id, { revision: e.weightsRevision, hub: o.hub });
      return m;
    }
    case 'lora-adapter':
      return loadAdapterEntry(e, o);
  }
}
