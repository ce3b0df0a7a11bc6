/**
 * OPT's registry entry (../architecture.ts): config.json `model_type: opt`; a frozen base in 16/4
 * bits; last-token pooling (PromptEOL); sentence vectors of word_embed_proj_dim (OPT-350m's
 * project_out).
 */
import { UnavailableError } from '../../util/errors.js';
import type { Architecture } from '../architecture.js';
import { initialWeights, initStdOf } from '../initial-weights.js';
import { FoldedTokenizer } from '../tokenizers/folded.js';
import { HfTokenizer } from '../tokenizers/hf.js';
import { OPT_MODEL_TYPES, parseOptConfig } from './config.js';
import { loadOpt } from './load.js';
import { OptModel } from './model.js';
import { optParameterShapes } from './weights.js';

export const OPT_ARCHITECTURE: Architecture = {
  name: 'opt',
  modelTypes: OPT_MODEL_TYPES,
  parseConfig: (raw, file) => parseOptConfig({ ...raw }, file),
  load: (dir, config, file, files, o) => loadOpt(dir, config, file, files, o),
  parameterShapes: (config) => optParameterShapes(parseOptConfig({ ...config }, 'config')),
  fromConfig(config, opts) {
    const cfg = parseOptConfig({ ...config }, 'config');
    return new OptModel(cfg, initialWeights(optParameterShapes(cfg), opts, initStdOf(config)), opts.dropoutSeed ?? 0, opts.frozenBase);
  },
  frozenBase: true,
  defaultPooling: 'last',
  embeddingWidth: (config) => Number(config.word_embed_proj_dim ?? config.hidden_size),
  rehearsalTokenizerFolds: true,
  rehearsalTokenizer(config, sharedModel) {
    // OPT's tokenizer is GPT-2's byte-level BPE (its vocab.json numbers the same tokens in another
    // order) with `</s>` as BOS and pad 1: the counts are OPT's exactly, the ids GPT-2's.
    const dir = sharedModel('gpt2-tokenizer');
    if (!dir) throw new UnavailableError("the rehearsal counts a decoder's tokens with the shared folder's models/gpt2-tokenizer, which is not here");
    const bos = Number(config.bos_token_id ?? 2);
    const pad = Number(config.pad_token_id ?? 1);
    return { tokenizer: new FoldedTokenizer(HfTokenizer.fromDir(dir, { padSide: 'left', padId: pad, bosId: bos }), Number(config.vocab_size)), note: "GPT-2's BPE with OPT's BOS: OPT's token counts" };
  },
};
