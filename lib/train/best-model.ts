/**
 * The best model of a run (by the dev evaluation's primary metric), kept in `<runDir>/best/`:
 *
 *   model.safetensors   the weights: every parameter when the whole model trains (with the source
 *                       model's config and tokenizer files beside it, so `best/` loads as a model
 *                       directory), only the trainable ones when part of the model is frozen (an
 *                       adapter's few megabytes, not a second copy of a 7B base)
 *   best.json           { step, metric, value, dev, trainable: 'all' | 'subset' }
 *   modules.json, 1_Pooling/config.json, ...   with every parameter saved: the run's pooling as
 *                       sentence-transformers modules (lib/embed/pooling-module.ts
 *                       `poolingModuleSpec`), so `loadModel(best)` comes back with the pooling it
 *                       was trained with and `npm run export` takes it from there; none for a
 *                       pooling no module computes (cls_pooler, the batch-dependent ones)
 *
 * Written atomically (a temporary directory renamed into place), so a crash never leaves half of it.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tf } from '../backend/index.js';
import { poolingModuleSpec } from '../embed/pooling-module.js';
import type { Pooling } from '../embed/pooling.js';
import { writeSentenceTransformerModules } from '../models/sentence-transformers/write.js';
import { needsAllHiddenStates } from '../models/sentence-transformers/spec.js';
import type { TextModel } from '../models/types.js';
import { readSafetensors, serializeSafetensors, type TensorToWrite } from '../models/safetensors.js';
import { writeDirectoryAtomicSync } from '../util/atomic-write.js';
import { InputError } from '../util/errors.js';

/** The files of an HF model directory that describe the model and its tokenizer. */
const MODEL_DESCRIPTION_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json', 'vocab.txt'];

export interface BestModelInfo {
  step: number;
  metric: string;
  value: number;
  dev: string;
  trainable: 'all' | 'subset';
}

export function bestModelDir(runDir: string): string {
  return join(runDir, 'best');
}

/** Weights on the host, by parameter name. */
export async function weightsOnHost(params: ReadonlyMap<string, tf.Variable>): Promise<Map<string, { data: Float32Array; shape: number[] }>> {
  const out = new Map<string, { data: Float32Array; shape: number[] }>();
  for (const [name, v] of params) out.set(name, { data: (await v.data()) as Float32Array, shape: v.shape.slice() });
  return out;
}

/** The pooling a run trains with and the model it pools, saved as best/'s sentence-transformers modules. */
export interface BestModelPooling {
  pooling: Pooling;
  model: Pick<TextModel, 'hiddenSize' | 'numLayers' | 'maxPositions'>;
}

/** Writes `<runDir>/best` with `params` (see the file comment) and returns its path. */
export async function saveBestModel(runDir: string, params: ReadonlyMap<string, tf.Variable>, info: BestModelInfo, sourceModelDir?: string, pooling?: BestModelPooling): Promise<string> {
  const final = bestModelDir(runDir);
  const weights = await weightsOnHost(params);
  writeDirectoryAtomicSync(final, (tmp) => {
    const tensors: Record<string, TensorToWrite> = {};
    for (const [name, t] of weights) tensors[name] = { shape: t.shape, data: t.data };
    writeFileSync(join(tmp, 'model.safetensors'), serializeSafetensors(tensors, { format: 'pt', step: String(info.step), trainable: info.trainable }));
    if (sourceModelDir && info.trainable === 'all') {
      for (const f of MODEL_DESCRIPTION_FILES) if (existsSync(join(sourceModelDir, f))) copyFileSync(join(sourceModelDir, f), join(tmp, f));
      const spec = pooling && existsSync(join(tmp, 'config.json')) ? poolingModuleSpec(pooling.pooling, pooling.model) : undefined;
      if (spec) {
        // first_last_avg's WeightedLayerPooling needs every layer from the transformer (as the export sets it).
        if (needsAllHiddenStates(spec)) writeFileSync(join(tmp, 'config.json'), JSON.stringify({ ...JSON.parse(readFileSync(join(tmp, 'config.json'), 'utf8')), output_hidden_states: true }, null, 2) + '\n');
        writeSentenceTransformerModules(tmp, spec, pooling!.model.numLayers, pooling!.model.hiddenSize);
      }
    }
    writeFileSync(join(tmp, 'best.json'), JSON.stringify(info, null, 1) + '\n');
  });
  return final;
}

export function readBestModelInfo(dir: string): BestModelInfo {
  const file = join(dir, 'best.json');
  let raw: Partial<BestModelInfo>;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<BestModelInfo>;
  } catch (e) {
    throw new InputError(`not a readable best-model record (${(e as Error).message})`, { file });
  }
  if (!Number.isInteger(raw.step) || typeof raw.metric !== 'string' || typeof raw.value !== 'number') {
    throw new InputError(`expected { step: integer, metric: string, value: number, ... }, found ${JSON.stringify(raw)}`, { file });
  }
  return raw as BestModelInfo;
}

/** Loads the best weights back into `params` (every tensor of the file must be one of them). */
export function restoreBestWeights(dir: string, params: ReadonlyMap<string, tf.Variable>): void {
  const file = join(dir, 'model.safetensors');
  const saved = readSafetensors(file).tensors;
  for (const [name, t] of saved) {
    const v = params.get(name);
    if (!v) throw new InputError(`best model has tensor '${name}', which the model being trained does not have`, { file });
    tf.tidy(() => v.assign(tf.tensor(t.data as Float32Array, t.shape, 'float32')));
  }
}
