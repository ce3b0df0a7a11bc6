/**
 * What loading a decoder from a local Hugging Face directory does alike for every decoder
 * (../llama/load.ts, ../opt/load.ts): config.json read with an error naming the file, the weights
 * handed to the model's constructor tensor by tensor (each read as the constructor takes it, so
 * with a frozen base the float32 model never exists: ../frozen-base.ts) and the files closed
 * afterwards, and the LoadedModel with the weights' identity.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../../util/errors.js';
import type { LoadedModel, TextModel, TextTokenizer } from '../types.js';
import { lazyTensors, openWeights, weightsSha256, type LazyTensor } from '../weight-files.js';

/** The object in a model directory's config.json. */
export function readConfigJson(configPath: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new InputError(`model config is not readable JSON: ${(e as Error).message}`, { file: configPath });
  }
}

/** `build` over the tensors of `weightFiles` by name, read lazily; `source` names the files for errors. */
export function withLazyWeights<T>(weightFiles: string[], build: (tensors: ReadonlyMap<string, LazyTensor>, source: string) => T): T {
  const reader = openWeights(weightFiles);
  try {
    return build(lazyTensors(reader), weightFiles.join(', '));
  } finally {
    reader.close();
  }
}

/** A decoder loaded from local directory `dir` (resolved: `abs`), identified by the sha256 of `weightFiles`. */
export async function localDecoder<M extends TextModel>(dir: string, abs: string, loaded: { model: M; tokenizer: TextTokenizer }, weightFiles: string[]): Promise<LoadedModel<M>> {
  return { id: dir, dir: abs, source: 'local', model: loaded.model, tokenizer: loaded.tokenizer, weightsSha256: await weightsSha256(weightFiles), weightFiles };
}
