/**
 * Finding and reading the weight files of a Hugging Face model directory: `model.safetensors`,
 * or the shards listed in `model.safetensors.index.json`. PyTorch pickles (`pytorch_model.bin`)
 * are refused with a clear message: reading them safely needs a Python unpickler.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../util/errors.js';
import { readSafetensors, type TensorEntry } from './safetensors.js';

export const SAFETENSORS_FILE = 'model.safetensors';
export const SAFETENSORS_INDEX = 'model.safetensors.index.json';

/** The weight files of a model directory, in load order. */
export function weightFiles(dir: string): string[] {
  const single = join(dir, SAFETENSORS_FILE);
  if (existsSync(single)) return [single];
  const indexPath = join(dir, SAFETENSORS_INDEX);
  if (existsSync(indexPath)) {
    let index: { weight_map?: Record<string, string> };
    try {
      index = JSON.parse(readFileSync(indexPath, 'utf8'));
    } catch (e) {
      throw new InputError(`not valid JSON: ${(e as Error).message}`, { file: indexPath });
    }
    if (!index.weight_map || typeof index.weight_map !== 'object') throw new InputError("has no 'weight_map' object", { file: indexPath });
    return [...new Set(Object.values(index.weight_map))].sort().map((f) => join(dir, f));
  }
  const hint = existsSync(join(dir, 'pytorch_model.bin'))
    ? ' (it has pytorch_model.bin: convert it once with `transformers` — `AutoModel.from_pretrained(dir).save_pretrained(dir, safe_serialization=True)`)'
    : '';
  throw new InputError(`model directory has no ${SAFETENSORS_FILE} or ${SAFETENSORS_INDEX}${hint}`, { file: dir });
}

/** All tensors of the given safetensors files, merged; a name in two files is an error. */
export function readTensors(files: string[]): Map<string, TensorEntry> {
  const all = new Map<string, TensorEntry>();
  for (const f of files) {
    if (!existsSync(f)) throw new InputError('weight file listed by the model is missing', { file: f });
    for (const [name, t] of readSafetensors(f).tensors) {
      if (all.has(name)) throw new InputError(`tensor '${name}' appears in more than one weight file`, { file: f });
      all.set(name, t);
    }
  }
  return all;
}

/** sha256 over the weight files' bytes, in order: the weights' identity in results files. */
export async function weightsSha256(files: string[]): Promise<string> {
  const h = createHash('sha256');
  for (const f of files) {
    await new Promise<void>((resolve, reject) => {
      createReadStream(f)
        .on('data', (c) => h.update(c))
        .on('end', () => resolve())
        .on('error', reject);
    });
  }
  return h.digest('hex');
}
