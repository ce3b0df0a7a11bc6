/**
 * Writing a LLaMA as a Hugging Face model directory that transformers' `LlamaForCausalLM` and
 * ./load.ts read: `config.json`, the weights in float32 safetensors — one `model.safetensors`, or
 * shards `model-0000i-of-0000n.safetensors` with `model.safetensors.index.json`
 * ({metadata: {total_size}, weight_map: {tensor: shard}}) when they exceed `maxShardBytes` — and,
 * when given, `tokenizer.json` and `tokenizer_config.json`. Used to convert llama2.c checkpoints
 * (with Llama2cTokenizer.toHfTokenizerJson) and to save merged LoRA models.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../util/atomic-write.js';
import { writeSafetensors, type TensorToWrite } from '../safetensors.js';
import { SAFETENSORS_FILE, SAFETENSORS_INDEX } from '../weight-files.js';
import { llamaConfigJson, type LlamaConfig } from './config.js';
import type { WeightTensor } from './weights.js';

export interface HfDirectoryContents {
  config: LlamaConfig;
  /** Parameters under LlamaForCausalLM names (e.g. readLlama2cCheckpoint's, or a model's values). */
  weights: ReadonlyMap<string, WeightTensor>;
  tokenizerJson?: Record<string, unknown>;
  tokenizerConfig?: Record<string, unknown>;
  /** Largest shard in bytes (default: everything in one file). */
  maxShardBytes?: number;
}

/** Writes the directory and returns the weight files written, in order. */
export function writeLlamaHfDirectory(dir: string, c: HfDirectoryContents): string[] {
  mkdirSync(dir, { recursive: true });
  const json = (name: string, v: unknown) => writeFileAtomicSync(join(dir, name), JSON.stringify(v, null, 2) + '\n');
  json('config.json', llamaConfigJson(c.config));
  if (c.tokenizerJson) json('tokenizer.json', c.tokenizerJson);
  if (c.tokenizerConfig) json('tokenizer_config.json', c.tokenizerConfig);
  const names = [...c.weights.keys()].sort();
  const bytesOf = (n: string) => c.weights.get(n)!.data.length * 4;
  const limit = c.maxShardBytes ?? Number.POSITIVE_INFINITY;
  const shards: string[][] = [[]];
  let size = 0;
  for (const n of names) {
    if (size > 0 && size + bytesOf(n) > limit) {
      shards.push([]);
      size = 0;
    }
    shards[shards.length - 1].push(n);
    size += bytesOf(n);
  }
  const tensors = (list: string[]): Record<string, TensorToWrite> =>
    Object.fromEntries(list.map((n) => [n, { dtype: 'F32' as const, shape: c.weights.get(n)!.shape, data: c.weights.get(n)!.data }]));
  if (shards.length === 1) {
    const file = join(dir, SAFETENSORS_FILE);
    writeSafetensors(file, tensors(shards[0]), { format: 'pt' });
    return [file];
  }
  const pad = (i: number) => String(i).padStart(5, '0');
  const files = shards.map((_, i) => `model-${pad(i + 1)}-of-${pad(shards.length)}.safetensors`);
  const weightMap: Record<string, string> = {};
  shards.forEach((list, i) => {
    writeSafetensors(join(dir, files[i]), tensors(list), { format: 'pt' });
    for (const n of list) weightMap[n] = files[i];
  });
  json(SAFETENSORS_INDEX, { metadata: { total_size: names.reduce((s, n) => s + bytesOf(n), 0) }, weight_map: weightMap });
  return files.map((f) => join(dir, f));
}
