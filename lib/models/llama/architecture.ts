/**
 * LLaMA's registry entry (../architecture.ts): config.json `model_type: llama`, also llama2.c's
 * own folders (a checkpoint .bin and tokenizer.bin, no config.json); a frozen base in 16/4 bits;
 * last-token pooling (PromptEOL, AnglE-LLaMA).
 */
import { UnavailableError } from '../../util/errors.js';
import type { Architecture } from '../architecture.js';
import { initialWeights, initStdOf } from '../initial-weights.js';
import { FoldedTokenizer } from '../tokenizers/folded.js';
import { HfTokenizer } from '../tokenizers/hf.js';
import { LLAMA_MODEL_TYPES, parseLlamaConfig } from './config.js';
import { isLlama2cDir, loadLlama, loadLlamaModel } from './load.js';
import { LlamaModel } from './model.js';
import { llamaParameterShapes } from './weights.js';

export const LLAMA_ARCHITECTURE: Architecture = {
  name: 'llama',
  modelTypes: LLAMA_MODEL_TYPES,
  parseConfig: (raw, file) => parseLlamaConfig({ ...raw }, file),
  load: (dir, config, file, files, o) => loadLlama(dir, config, file, files, o),
  ownFolder: {
    description: 'a llama2.c folder: a checkpoint .bin with its tokenizer.bin',
    matches: isLlama2cDir,
    load: (dir, o) => loadLlamaModel(dir, o),
  },
  parameterShapes: (config) => llamaParameterShapes(parseLlamaConfig({ ...config }, 'config')),
  fromConfig(config, opts) {
    const cfg = parseLlamaConfig({ ...config }, 'config');
    return new LlamaModel(cfg, initialWeights(llamaParameterShapes(cfg), opts, initStdOf(config)), opts.dropoutSeed ?? 0, opts.frozenBase);
  },
  frozenBase: true,
  defaultPooling: 'last',
  embeddingWidth: (config) => Number(config.hidden_size),
  rehearsalTokenizerFolds: true,
  rehearsalTokenizer(config, sharedModel) {
    // LLaMA-2's SentencePiece tokenizer is not on this project's machines: GPT-2's byte-level BPE
    // (left padding) counts the tokens (a 50k vocabulary against 32k: close counts, not equal),
    // its ids folded into the decoder's vocabulary so the embedding lookup stays in range.
    const dir = sharedModel('gpt2-tokenizer');
    if (!dir) throw new UnavailableError("the rehearsal counts a decoder's tokens with the shared folder's models/gpt2-tokenizer, which is not here");
    const gpt2 = HfTokenizer.fromDir(dir, { padSide: 'left', padId: 0 });
    return { tokenizer: new FoldedTokenizer(gpt2, Number(config.vocab_size)), note: "GPT-2's BPE counting LLaMA-2's tokens" };
  },
};
