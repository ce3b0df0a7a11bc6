/**
 * RanNet's registry entry (../architecture.ts): config.json `model_type: rannet` (a released
 * folder's TensorFlow checkpoint too); its own random initialisation (./from-config.ts); pooled
 * as RanNet's sentence vector, which the model returns as its pooler output (AnglE-RAN's recipe).
 */
import { UnavailableError } from '../../util/errors.js';
import type { Architecture } from '../architecture.js';
import { ranTokenizer } from '../tokenizers/ran-wordpiece.js';
import { parseRanConfig, RAN_MODEL_TYPES } from './config.js';
import { ranModelFromConfig, ranParameterShapes } from './from-config.js';
import { loadRan, ranWeightFiles } from './load.js';

export const RAN_ARCHITECTURE: Architecture = {
  name: 'rannet',
  modelTypes: RAN_MODEL_TYPES,
  parseConfig: (raw, file) => parseRanConfig({ ...raw }, file),
  load: (dir, config, file, files, o) => loadRan(dir, config, file, files, o),
  weightFiles: ranWeightFiles,
  parameterShapes: ranParameterShapes,
  // Keras' initialisers (./from-config.ts), not HF's: `init` does not apply.
  fromConfig: (config, opts) => ranModelFromConfig(config, { seed: opts.seed, dropoutSeed: opts.dropoutSeed }),
  defaultPooling: 'cls_pooler',
  embeddingWidth: (config) => Number(parseRanConfig({ ...config }, 'config').hiddenSize),
  rehearsalTokenizer(_config, sharedModel) {
    // RAN_base's own vocab.txt is in its zip; bert-base-uncased's (the assumed vocabulary) counts its tokens, with RanNet's rules (no [CLS]).
    const dir = sharedModel('bert-base-uncased-tokenizer');
    if (!dir) throw new UnavailableError("the rehearsal's RanNet tokenizer reads the shared folder's models/bert-base-uncased-tokenizer/vocab.txt, which is not here");
    return { tokenizer: ranTokenizer(dir), note: "RanNet's WordPiece over bert-base-uncased's vocab.txt" };
  },
};
