/**
 * Loading a RanNet from a folder whose config.json is RanNetParams (./config.ts), with its own
 * vocab.txt (../tokenizers/ran-wordpiece.ts) and its weights either
 *   - in safetensors under the checkpoint's variable names (a golden set's `model/`, a converted
 *     release) or the model's own names (a trained `best/`): ./weights.ts reads both; or
 *   - as the released TensorFlow checkpoint `model.ckpt.index` + `model.ckpt.data-*` (RAN_base's
 *     zip, unpacked): read by ./tf-checkpoint.ts `readTfCheckpoint`, its RanNet variables picked by
 *     ./variable-mapping.ts (RanNet.variable_mapping, rannet.py:250-315) under the same names,
 *     then checked by the same ./weights.ts.
 * lib/models/auto.ts calls `ranWeightFiles` to find the files and `loadRan` to build the model.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../util/errors.js';
import type { HfTokenizer } from '../tokenizers/hf.js';
import { ranTokenizer } from '../tokenizers/ran-wordpiece.js';
import { readTensors, weightFiles as hfWeightFiles, WEIGHT_LAYOUTS } from '../weight-files.js';
import { parseRanConfig, type RanConfig } from './config.js';
import { RanModel } from './model.js';
import { readTfCheckpoint } from './tf-checkpoint.js';
import { readRanCheckpointTensors } from './variable-mapping.js';
import { mapRanWeights, ranCheckpointShapes, type RanRawTensor } from './weights.js';

/** The TensorFlow checkpoint prefix a released RAN zip holds (rannet.py export_checkpoint). */
export const RAN_TF_CHECKPOINT = 'model.ckpt';

export interface RanLoadOptions {
  /** Seed of the dropout masks in training mode. */
  dropoutSeed?: number;
}

/** The TF checkpoint files of a folder (the .index, then its data shards), or [] when it has none. */
function tfCheckpointFiles(dir: string): string[] {
  const index = join(dir, `${RAN_TF_CHECKPOINT}.index`);
  if (!existsSync(index)) return [];
  const shards = readdirSync(dir)
    .filter((f) => f.startsWith(`${RAN_TF_CHECKPOINT}.data-`))
    .sort()
    .map((f) => join(dir, f));
  return [index, ...shards];
}

/** The weight files of a RanNet folder: safetensors (or a PyTorch-style layout) first, else the TF checkpoint. */
export function ranWeightFiles(dir: string): string[] {
  if (WEIGHT_LAYOUTS.some((f) => existsSync(join(dir, f)))) return hfWeightFiles(dir);
  const tf = tfCheckpointFiles(dir);
  if (tf.length > 0) return tf;
  throw new InputError(`RanNet folder has none of ${WEIGHT_LAYOUTS.join(', ')} and no TensorFlow checkpoint ${RAN_TF_CHECKPOINT}.index (+ .data-*) (the released RAN_base zip holds config.json, vocab.txt and model.ckpt.*: unpack it here)`, { file: dir });
}

/**
 * The released checkpoint's RanNet variables, read by ./tf-checkpoint.ts and picked by
 * ./variable-mapping.ts (RanNet.variable_mapping; shapes checked against the config before any
 * data is read). Their names are the ones ./weights.ts reads: a name-based checkpoint written by
 * rannet's export_checkpoint stores each variable under its variable_mapping name, which is what
 * the golden sets' safetensors use.
 */
function readReleasedCheckpoint(indexFile: string, cfg: RanConfig): Map<string, RanRawTensor> {
  const ckpt = readTfCheckpoint(indexFile);
  try {
    return readRanCheckpointTensors(ckpt, cfg.numLayers, { shapes: ranCheckpointShapes(cfg, true), cellTransform: true });
  } finally {
    ckpt.close();
  }
}

/** A RanNet from a directory whose config.json was read by the caller (lib/models/auto.ts). */
export function loadRan(
  dir: string,
  rawConfig: Record<string, unknown>,
  configFile: string,
  weightFiles: string[],
  opts: RanLoadOptions = {},
): { model: RanModel; tokenizer: HfTokenizer } {
  const config = parseRanConfig(rawConfig, configFile);
  const tokenizer = ranTokenizer(dir);
  const build = (tensors: ReadonlyMap<string, RanRawTensor>) => ({
    model: new RanModel(config, mapRanWeights(config, tensors, weightFiles.join(', ')), opts.dropoutSeed ?? 0),
    tokenizer,
  });
  const released = weightFiles.length > 0 && weightFiles[0].endsWith('.index');
  return build(released ? readReleasedCheckpoint(weightFiles[0], config) : (readTensors(weightFiles) as Map<string, RanRawTensor>));
}
